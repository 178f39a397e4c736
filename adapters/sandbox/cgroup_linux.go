package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// cgroupRoot is where the cgroup hierarchies are mounted. A variable only
// so tests can point it at nothing.
var cgroupRoot = "/sys/fs/cgroup"

// cgroupPrefix names every run's cgroup: cgroupPrefix, the server's
// ownerTag, "-" and a random part.
const cgroupPrefix = "arrowhead-run-"

// ownerTag names this server process in its runs' groups, as its pid and
// its start time (in clock ticks since boot), so a group left behind by a
// server that crashed is told from one of a server still running, even
// after the pid was reused.
var ownerTag = processTag(os.Getpid())

// processTag is pid's "pid.starttime", or "" when it cannot be read (no
// such process).
func processTag(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after its last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return ""
	}
	return strconv.Itoa(pid) + "." + f[19]
}

// sweep removes what crashed servers left in this server's groups: each
// run group whose owner is no longer running has its processes killed and
// is removed. A group of a server still running (another server may share
// this group) is left alone; a group whose name carries no owner (an
// older server's) is removed only when empty. It returns how many groups
// it removed.
func (c *cgroups) sweep() int {
	var parents []string
	switch c.scope {
	case ports.LimitScopeCgroupV2:
		parents = []string{c.v2}
	case ports.LimitScopeCgroupV1:
		parents = c.v1
	}
	removed := 0
	for _, parent := range parents {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() {
				continue
			}
			dir := filepath.Join(parent, e.Name())
			owner, _, tagged := strings.Cut(name, "-")
			pid, _, _ := strings.Cut(owner, ".")
			n, err := strconv.Atoi(pid)
			switch {
			case !tagged || err != nil || n <= 0:
				if os.Remove(dir) == nil {
					removed++
				}
			case processTag(n) == owner:
				// Its server is running.
			default:
				if (&runCgroup{dirs: []string{dir}}).remove() == nil {
					removed++
				}
			}
		}
	}
	return removed
}

// errCgroup: a run's cgroup could not be made; the run is refused rather
// than run with less than the receipt would claim.
var errCgroup = errors.New("the run's resource group could not be created")

// cgroups is how this server makes one cgroup per run, found at start:
// cgroup v2 where the server's own group is delegated to it with the memory
// and pids controllers, the v1 memory and pids hierarchies where that is
// what the host has and the server may write them (root), or nothing.
type cgroups struct {
	scope string // ports.LimitScope*
	// v2 is the server's own v2 group, under which runs are made.
	v2 string
	// v1 are the server's own groups in the v1 memory and pids hierarchies.
	v1 []string
}

// detectCgroups finds what the host lets this server do, by making and
// removing one group: a hierarchy that merely looks writable is not trusted.
func detectCgroups() *cgroups {
	own := ownCgroups()
	if p, ok := own[""]; ok {
		dir := filepath.Join(cgroupRoot, p)
		if isCgroup2(dir) && hasControllers(filepath.Join(dir, "cgroup.subtree_control"), "memory", "pids") {
			c := &cgroups{scope: ports.LimitScopeCgroupV2, v2: dir}
			if c.works() {
				c.sweep()
				return c
			}
		}
	}
	mem, okM := own["memory"]
	pids, okP := own["pids"]
	if okM && okP {
		c := &cgroups{scope: ports.LimitScopeCgroupV1, v1: []string{
			filepath.Join(cgroupRoot, "memory", mem), filepath.Join(cgroupRoot, "pids", pids)}}
		if c.works() {
			c.sweep()
			return c
		}
	}
	return &cgroups{scope: ports.LimitScopeProcess}
}

// ownCgroups reads /proc/self/cgroup: controller (or "" for v2) to path.
func ownCgroups() map[string]string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	defer f.Close()
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own
}

func isCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// hasControllers reports whether a v2 cgroup.subtree_control lists every
// controller in want.
func hasControllers(file string, want ...string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// works makes and removes a group with limits set.
func (c *cgroups) works() bool {
	g, err := c.create(ports.EnforcedLimits{MemoryBytes: 64 << 20, Processes: 8})
	if err != nil {
		return false
	}
	return g.remove() == nil
}

// runCgroup is one run's group.
type runCgroup struct {
	scope string
	dirs  []string
	// parents are the server's own groups, which a thread moved into the
	// run's group (v1) returns to.
	parents []string
	fd      *os.File // v2: the group's directory, for CLONE_INTO_CGROUP
}

// create makes a run's group with its memory (swap included) and process
// limits set; nil for a host without usable cgroups.
func (c *cgroups) create(lim ports.EnforcedLimits) (*runCgroup, error) {
	if c.scope == ports.LimitScopeProcess {
		return nil, nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := cgroupPrefix + ownerTag + "-" + hex.EncodeToString(b[:])
	mem, pids := strconv.FormatInt(lim.MemoryBytes, 10), strconv.Itoa(lim.Processes)
	g := &runCgroup{scope: c.scope}
	fail := func() (*runCgroup, error) {
		_ = g.remove()
		return nil, errCgroup
	}
	write := func(dir, file, value string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(value), 0)
	}
	if c.scope == ports.LimitScopeCgroupV2 {
		dir := filepath.Join(c.v2, name)
		if os.Mkdir(dir, 0o755) != nil {
			return nil, errCgroup
		}
		g.dirs, g.parents = []string{dir}, []string{c.v2}
		if write(dir, "memory.max", mem) != nil || write(dir, "pids.max", pids) != nil {
			return fail()
		}
		// Swap would let a run exceed its memory; a host without swap
		// has no such file.
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil && write(dir, "memory.swap.max", "0") != nil {
			return fail()
		}
		f, err := os.Open(dir)
		if err != nil {
			return fail()
		}
		g.fd = f
		return g, nil
	}
	memDir, pidsDir := filepath.Join(c.v1[0], name), filepath.Join(c.v1[1], name)
	g.parents = c.v1
	for _, d := range []string{memDir, pidsDir} {
		if os.Mkdir(d, 0o755) != nil {
			return fail()
		}
		g.dirs = append(g.dirs, d)
	}
	if write(memDir, "memory.limit_in_bytes", mem) != nil || write(pidsDir, "pids.max", pids) != nil {
		return fail()
	}
	if _, err := os.Stat(filepath.Join(memDir, "memory.memsw.limit_in_bytes")); err == nil &&
		write(memDir, "memory.memsw.limit_in_bytes", mem) != nil {
		return fail()
	}
	return g, nil
}

// start starts cmd inside the group, so the command is in it from its
// first instruction. v2 clones straight into the group. v1 has no such
// call, but a v1 group holds threads: the starting thread joins the group,
// forks (the child inherits the forking thread's groups), and leaves.
func (g *runCgroup) start(cmd *exec.Cmd) error {
	if g == nil {
		return cmd.Start()
	}
	if g.scope == ports.LimitScopeCgroupV2 {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(g.fd.Fd())
		return cmd.Start()
	}
	runtime.LockOSThread()
	tid := strconv.Itoa(unix.Gettid())
	join := func(dirs []string) error {
		for _, d := range dirs {
			if err := os.WriteFile(filepath.Join(d, "tasks"), []byte(tid), 0); err != nil {
				return err
			}
		}
		return nil
	}
	if err := join(g.dirs); err != nil {
		if join(g.parents) == nil {
			runtime.UnlockOSThread()
		}
		return errCgroup
	}
	err := cmd.Start()
	// A thread that cannot leave stays locked: it ends with this
	// goroutine rather than run other goroutines inside the run's group.
	if join(g.parents) == nil {
		runtime.UnlockOSThread()
	}
	return err
}

// remove kills whatever is left in the group and removes it. The PID
// namespace has normally ended every process already; the kernel may
// still be tearing them down, hence the retries.
func (g *runCgroup) remove() error {
	if g == nil {
		return nil
	}
	if g.fd != nil {
		_ = g.fd.Close()
	}
	var err error
	for i := len(g.dirs) - 1; i >= 0; i-- {
		d := g.dirs[i]
		for attempt := 0; ; attempt++ {
			killMembers(d)
			if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			if attempt == 100 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return err
}

// killMembers sends SIGKILL to every process still in the group.
func killMembers(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
