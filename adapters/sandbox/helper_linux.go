package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperArg0 is the argv[0] under which the server's own binary, started
// by the subprocess runner inside fresh user, mount and PID namespaces,
// prepares the command's mount namespace and then becomes the command.
// Go has no hook between fork and exec, so the mounts are made by the
// re-executed binary: this package's init takes over before main runs.
const helperArg0 = "arrowhead-sandbox-init"

// helperSpec is what the subprocess runner tells its helper.
type helperSpec struct {
	// Scratch is the staged host directory; the command sees a sized tmpfs
	// at helperScratch, filled with a copy of it.
	Scratch      string `json:"scratch"`
	ScratchBytes int64  `json:"scratch_bytes"`
	// Attach are detached trees to move into place once /tmp is private
	// (mounts with At).
	Attach []helperAttach `json:"attach"`
	// TmpBytes and SmallBytes size /tmp, and /var/tmp and /dev/shm.
	TmpBytes   int64 `json:"tmp_bytes"`
	SmallBytes int64 `json:"small_bytes"`
	// Dir is the working directory, relative to Scratch.
	Dir string `json:"dir"`
	// Writable are host directories left writable; everything else of the
	// host is read-only.
	Writable []string `json:"writable"`
	// Visible are host directories shown read-only even where a private
	// mount (/tmp) would hide them: read-only mounts and PATH directories.
	Visible []string `json:"visible"`
	// Limits are rlimit resource numbers and values (soft = hard).
	Limits map[int]uint64 `json:"limits"`
}

func init() {
	if len(os.Args) < 3 || os.Args[0] != helperArg0 && os.Args[0] != attachArg0 {
		return
	}
	// Capabilities are per thread: every step, and the exec, must happen
	// on the thread that holds them.
	runtime.LockOSThread()
	run := runHelper
	if os.Args[0] == attachArg0 {
		run = runAttach
	}
	err := run(os.Args[1], os.Args[2:])
	// Only a failure returns; its text goes to the command's stderr.
	fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
	os.Exit(125)
}

// runHelper makes the host read-only apart from the request's writable
// mounts, gives the run its own sized /tmp, /var/tmp, /dev/shm and scratch,
// applies the limits, drops every capability and execs argv.
func runHelper(specJSON string, argv []string) error {
	var sp helperSpec
	if err := json.Unmarshal([]byte(specJSON), &sp); err != nil {
		return fmt.Errorf("bad spec: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	staged, err := os.OpenRoot(sp.Scratch)
	if err != nil {
		return fmt.Errorf("opening the scratch: %w", err)
	}
	// Held before the private mounts, which may hide them (a directory
	// under /tmp), and bound back afterwards through the descriptor.
	keep := map[string]*os.File{}
	for _, d := range append(append([]string(nil), sp.Writable...), sp.Visible...) {
		f, err := os.OpenFile(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening a mount: %w", err)
		}
		keep[d] = f
	}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("making the host read-only: %w", err)
	}
	tmpfs := func(dir string, size int64, mode string) error {
		return unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
			"size="+strconv.FormatInt(size, 10)+",mode="+mode)
	}
	for dir, size := range map[string]int64{"/tmp": sp.TmpBytes, "/var/tmp": sp.SmallBytes, "/dev/shm": sp.SmallBytes} {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // nothing there to share either
		}
		if err := tmpfs(dir, size, "1777"); err != nil {
			return fmt.Errorf("mounting a private %s: %w", dir, err)
		}
	}
	if err := attachAll(sp.Attach); err != nil {
		return err
	}
	// The private /tmp is the only place a mount point can be made: the
	// rest is read-only.
	if err := os.Mkdir(helperScratch, 0o755); err != nil {
		return fmt.Errorf("making the scratch's mount point: %w", err)
	}
	if err := tmpfs(helperScratch, sp.ScratchBytes, "0755"); err != nil {
		return fmt.Errorf("mounting the scratch: %w", err)
	}
	if err := copyTree(staged.FS(), helperScratch); err != nil {
		return fmt.Errorf("filling the scratch: %w", err)
	}
	_ = staged.Close()
	bind := func(d string, writable bool) error {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		src := "/proc/self/fd/" + strconv.Itoa(int(keep[d].Fd()))
		if err := unix.Mount(src, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if writable {
			attr = &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
		}
		return unix.MountSetattr(-1, d, unix.AT_RECURSIVE, attr)
	}
	for _, d := range sp.Visible {
		if _, err := os.Stat(d); err == nil {
			continue // still in view, and read-only
		}
		if err := bind(d, false); err != nil {
			return fmt.Errorf("showing a read-only mount: %w", err)
		}
	}
	for _, d := range sp.Writable {
		if err := bind(d, true); err != nil {
			return fmt.Errorf("showing a writable mount: %w", err)
		}
	}
	for _, f := range keep {
		_ = f.Close()
	}
	if err := os.Chdir(filepath.Join(helperScratch, filepath.FromSlash(sp.Dir))); err != nil {
		return fmt.Errorf("entering the working directory: %w", err)
	}
	for res, v := range sp.Limits {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setting limit %d: %w", res, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	// The command's uid is not 0 in its namespace, so exec clears the
	// permitted set; the ambient set, which survives exec, is cleared
	// here.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("sealing descriptors: %w", err)
	}
	program := argv[0]
	if !filepath.IsAbs(program) {
		program = filepath.Join(helperScratch, filepath.FromSlash(sp.Dir), program)
	}
	return syscall.Exec(program, argv, os.Environ())
}

// copyTree copies the staged files into the scratch tmpfs: regular files
// and directories only, with their modes.
func copyTree(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		switch {
		case p == ".":
			return nil
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			in, err := src.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				_ = out.Close()
				return err
			}
			return out.Close()
		}
		return nil // nothing else is staged
	})
}
