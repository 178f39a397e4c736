package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// drainTimeout bounds how long output is still read once the command has
// exited: a descendant that escaped the kill could otherwise hold a pipe
// open forever.
const drainTimeout = 2 * time.Second

// errStart is a command that could not be started; the cause (which may
// carry a path) stays out of the text.
var errStart = errors.New("the command could not be started")

// outcome is what one process run produced.
type outcome struct {
	exitCode  int
	timedOut  bool
	truncated bool
	// killed is true when the run was ended by a kill (wall budget, output
	// cap, cancellation) rather than exiting on its own.
	killed   bool
	stdout   []byte
	stderr   []byte
	duration time.Duration
}

// runProcess starts cmd with start (its Stdin, Stdout and Stderr are set here) in its
// own process group, feeds it stdin, caps its output at outputCap bytes,
// and kills the group when the wall budget runs out, the output cap is
// reached or ctx ends. Once the leader has exited, and before it is reaped
// (so its group id cannot be reused meanwhile), the whole group is killed:
// nothing in it outlives the call.
func runProcess(ctx context.Context, cmd *exec.Cmd, start func(*exec.Cmd) error, stdin []byte, wall time.Duration, outputCap int) (outcome, error) {
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return outcome{}, errors.New("a sandboxed command needs its own process group")
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return outcome{}, errStart
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return outcome{}, errStart
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return outcome{}, errStart
	}
	defer closeAll()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW

	if err := sealDescriptors(); err != nil {
		return outcome{}, err
	}
	began := time.Now()
	if err := start(cmd); err != nil {
		if errors.Is(err, errCgroup) {
			return outcome{}, err
		}
		return outcome{}, errStart
	}
	// The child holds its own copies; the server keeps only its ends.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	g := &group{pid: cmd.Process.Pid}
	capture := &capture{limit: outputCap, onOverflow: g.kill}
	var readers sync.WaitGroup
	readers.Add(2)
	go capture.read(outR, &capture.stdout, &readers)
	go capture.read(errR, &capture.stderr, &readers)
	go func() {
		// A command that never reads gets EPIPE here once it is gone.
		_, _ = inW.Write(stdin)
		_ = inW.Close()
	}()

	var timedOut atomic.Bool
	timer := time.AfterFunc(wall, func() {
		timedOut.Store(true)
		g.kill()
	})
	stopCancel := context.AfterFunc(ctx, g.kill)

	waitExited(g.pid)
	// Stopped before anything else, so a command that exits just inside
	// its budget is not reported as timed out.
	timer.Stop()
	stopCancel()
	elapsed := time.Since(began)
	g.killAndSeal()
	_ = cmd.Wait() // the status is read from ProcessState below

	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		_ = outR.Close()
		_ = errR.Close()
		<-drained
	}

	o := outcome{
		exitCode:  exitCode(cmd),
		timedOut:  timedOut.Load(),
		truncated: capture.overflowed(),
		killed:    g.wasKilled(),
		duration:  elapsed,
	}
	o.stdout, o.stderr = capture.result()
	return o, nil
}

// exitCode is the command's status: its exit code, 128 plus the signal
// that ended it, or -1.
func exitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// waitExited blocks until pid has exited, leaving it unreaped.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// group is a command's process group. Its id is the leader's pid, which
// stays reserved until the leader is reaped; after that the group may not
// be signalled again.
type group struct {
	mu     sync.Mutex
	pid    int
	sealed bool
	killed bool
}

// kill sends SIGKILL to the whole group, unless the leader was reaped.
func (g *group) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.sealed {
		g.killed = true
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	}
}

// killAndSeal kills whatever is left of the group once the leader has
// exited, and forbids any later signal.
func (g *group) killAndSeal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	g.sealed = true
}

func (g *group) wasKilled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.killed
}

// captureChunk is how much one read takes from a pipe.
const captureChunk = 32 << 10

// capture collects stdout and stderr under one shared byte budget.
type capture struct {
	limit      int
	onOverflow func()

	mu     sync.Mutex
	used   int
	over   bool
	stdout []byte
	stderr []byte
}

// read copies r into *dst until EOF. Past the budget it keeps what fits,
// marks the capture overflowed and kills the command at once; it then keeps
// draining so the writer is never left blocked on a full pipe.
func (c *capture) read(r *os.File, dst *[]byte, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, captureChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.add(dst, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (c *capture) add(dst *[]byte, b []byte) {
	c.mu.Lock()
	room := c.limit - c.used
	overflow := len(b) > room
	if overflow {
		b = b[:max(room, 0)]
	}
	*dst = append(*dst, b...)
	c.used += len(b)
	first := overflow && !c.over
	if overflow {
		c.over = true
	}
	c.mu.Unlock()
	if first {
		c.onOverflow()
	}
}

func (c *capture) overflowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

func (c *capture) result() (stdout, stderr []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stdout, c.stderr
}

// appliedLimits are the request's limits as the kernel will hold them: a
// limit above the server's own hard limit cannot be set by an unprivileged
// server, so it is lowered to that hard limit and the receipt says so.
func appliedLimits(l ports.RunLimits) ports.EnforcedLimits {
	clamp := func(resource int, want int64) int64 {
		var cur unix.Rlimit
		if err := unix.Getrlimit(resource, &cur); err == nil && cur.Max != unix.RLIM_INFINITY && uint64(want) > cur.Max {
			return int64(cur.Max)
		}
		return want
	}
	return ports.EnforcedLimits{
		WallSeconds: l.Wall.Seconds(),
		CPUSeconds:  int(clamp(unix.RLIMIT_CPU, int64(l.CPUSeconds))),
		MemoryBytes: clamp(unix.RLIMIT_AS, l.MemoryBytes),
		Processes:   int(clamp(unix.RLIMIT_NPROC, int64(l.Processes))),
		FileBytes:   clamp(unix.RLIMIT_FSIZE, l.FileBytes),
		OpenFiles:   int(clamp(unix.RLIMIT_NOFILE, int64(l.OpenFiles))),
		OutputBytes: l.OutputBytes,
	}
}

// credential switches a child from root to the sandbox identity with no
// supplementary groups; nil when the server is not root.
func credential(id identity) *syscall.Credential {
	if !id.dropFromRoot {
		return nil
	}
	return &syscall.Credential{Uid: uint32(id.uid), Gid: uint32(id.gid), Groups: []uint32{}}
}

// scrubbedEnv is the whole environment a command sees.
func scrubbedEnv(home, tmp string) []string {
	return []string{"PATH=" + SandboxPATH, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"}
}
