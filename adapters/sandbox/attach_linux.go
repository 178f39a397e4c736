package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// A mount with At (ports.Mount) is how a root server shows a command a
// host directory whose parents the sandbox uid cannot traverse: the Go
// module cache under /root, which is 0700 and must stay closed to the
// command. Neither the subprocess helper (uid 65534 in its own user
// namespace, whose capabilities do not reach root-owned inodes) nor an
// unprivileged bwrap (which resolves its bind sources by path, even
// --ro-bind-fd) can reach it by name. So the server, still root, clones
// the host tree into a detached mount (open_tree OPEN_TREE_CLONE) made
// read-only there, and hands the descriptor to the run's first process,
// which moves it into place (move_mount) inside the run's own mount
// namespace. The command sees that one tree and nothing above it; what it
// may read inside is up to the files' modes (the module cache's are 0444
// and 0555).

// attachArg0 is the argv[0] under which the server's binary, started as
// the sandbox uid holding CAP_SYS_ADMIN in a private mount namespace of its
// own (no user namespace: it must not be below bwrap's), moves a bubblewrap
// run's attachments under attachDir, gives the capability up and execs
// bwrap, which binds them at their At.
const attachArg0 = "arrowhead-sandbox-attach"

// attachDirName is the directory under the scratch root a bubblewrap run's
// attachments are mounted on, in the run's own mount namespace only: a
// tmpfs there hides whatever the host holds, so runs do not meet.
const attachDirName = ".attach"

// attachFirstFD is the descriptor number the first attachment arrives on
// (ExtraFiles start at 3).
const attachFirstFD = 3

// helperAttach is one attachment as a helper receives it: the descriptor
// of the detached tree and where it goes.
type helperAttach struct {
	FD int    `json:"fd"`
	At string `json:"at"`
}

// attachSpec is what the bubblewrap runner tells its attach stage.
type attachSpec struct {
	Dir    string         `json:"dir"`
	Attach []helperAttach `json:"attach"`
}

// errAttach: a mount with At could not be prepared; the run is refused.
var errAttach = errors.New("a directory the run needs could not be shown to it")

// attachments are the detached trees of one run's mounts with At, in the
// order of those mounts.
type attachments struct {
	files []*os.File
	at    []string
}

// openAttachments clones every mount with At of req into a detached tree,
// read-only unless the mount is writable, never setuid or with devices.
// Only a process holding CAP_SYS_ADMIN (a root server) may clone a tree.
func openAttachments(req ports.RunRequest) (*attachments, error) {
	a := &attachments{}
	for _, m := range req.Mounts {
		if m.At == "" {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Host, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			a.close()
			return nil, errAttach
		}
		f := os.NewFile(uintptr(fd), "attachment")
		a.files, a.at = append(a.files, f), append(a.at, m.At)
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if !m.Writable {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			a.close()
			return nil, errAttach
		}
	}
	return a, nil
}

// empty reports whether there is nothing to attach.
func (a *attachments) empty() bool { return a == nil || len(a.files) == 0 }

// specs are the attachments as the helper receives them, each At replaced
// by where(i, at).
func (a *attachments) specs(where func(i int, at string) string) []helperAttach {
	var out []helperAttach
	for i, at := range a.at {
		out = append(out, helperAttach{FD: attachFirstFD + i, At: where(i, at)})
	}
	return out
}

// close closes the server's descriptors; a tree nobody moved is freed.
func (a *attachments) close() {
	if a == nil {
		return
	}
	for _, f := range a.files {
		_ = f.Close()
	}
}

// attachAll moves each detached tree onto its mount point, making the
// point first.
func attachAll(list []helperAttach) error {
	for _, a := range list {
		if err := os.MkdirAll(a.At, 0o755); err != nil {
			return fmt.Errorf("making a mount point: %w", err)
		}
		if err := unix.MoveMount(a.FD, "", unix.AT_FDCWD, a.At, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("attaching a mount: %w", err)
		}
		_ = unix.Close(a.FD)
	}
	return nil
}

// runAttach is the bubblewrap run's attach stage: a tmpfs over spec.Dir in
// this private mount namespace, each attachment moved under it, then
// bwrap (argv) started without any capability.
func runAttach(specJSON string, argv []string) error {
	var sp attachSpec
	if err := json.Unmarshal([]byte(specJSON), &sp); err != nil {
		return fmt.Errorf("bad spec: %w", err)
	}
	// Nothing done here may reach the host's mount table.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", sp.Dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return fmt.Errorf("mounting the attach directory: %w", err)
	}
	if err := attachAll(sp.Attach); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("sealing descriptors: %w", err)
	}
	// The uid is not 0, so with the ambient set empty exec leaves bwrap
	// no capability at all.
	return syscall.Exec(argv[0], argv, os.Environ())
}

// attachCommand wraps a bubblewrap command so its attachments are in place
// first: the attach stage, as the sandbox uid with CAP_SYS_ADMIN in a new
// mount namespace, then bwrap.
func attachCommand(cmd *exec.Cmd, a *attachments, dir string) error {
	spec := attachSpec{Dir: dir, Attach: a.specs(func(i int, _ string) string { return attachPoint(dir, i) })}
	js, err := json.Marshal(spec)
	if err != nil {
		return errStart
	}
	// cmd.Args[0] is bwrap's own path, which the stage execs.
	cmd.Args = append([]string{attachArg0, string(js)}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.ExtraFiles = a.files
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNS
	cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	return nil
}

// attachPoint is where attachment i waits for bwrap to bind it.
func attachPoint(dir string, i int) string { return filepath.Join(dir, strconv.Itoa(i)) }
