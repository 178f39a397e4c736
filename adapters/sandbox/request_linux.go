package sandbox

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// errRequestUnsupported refuses a request whose working directory,
// environment, PATH directories or mounts the runner cannot honour as
// asked.
var errRequestUnsupported = errors.New("the runner cannot honour the request's directory, environment or mounts")

// applyRequest honours req's Dir, Env, PathDirs and Mounts on the
// subprocess runner's command, which already sees the host filesystem (so
// every mount is visible at its own path, bounded by the sandbox uid's
// permissions, as its receipt says), and on bubblewrap's command line. The
// container runner refuses such a request.
func applyRequest(b backend, cmd *exec.Cmd, s *scratch, req ports.RunRequest) error {
	if req.Dir == "" && len(req.Env) == 0 && len(req.PathDirs) == 0 && len(req.Mounts) == 0 {
		return nil
	}
	if _, ok := b.(*bubblewrap); ok {
		return applyBubblewrap(cmd, req)
	}
	if _, ok := b.(*subprocess); !ok {
		return errRequestUnsupported
	}
	if req.Dir != "" {
		dir := filepath.FromSlash(req.Dir)
		if !filepath.IsLocal(dir) {
			return errRequestUnsupported
		}
		cmd.Dir = filepath.Join(s.dir, dir)
	}
	for _, d := range req.PathDirs {
		if !filepath.IsAbs(d) || strings.Contains(d, ":") {
			return errRequestUnsupported
		}
	}
	for _, m := range req.Mounts {
		if !filepath.IsAbs(m.Host) || filepath.Clean(m.Host) != m.Host {
			return errRequestUnsupported
		}
	}
	env := make([]string, 0, len(cmd.Env)+len(req.Env))
	for _, kv := range cmd.Env {
		if rest, ok := strings.CutPrefix(kv, "PATH="); ok && len(req.PathDirs) > 0 {
			kv = "PATH=" + strings.Join(req.PathDirs, ":") + ":" + rest
		}
		env = append(env, kv)
	}
	for _, kv := range req.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k == "PATH" {
			return errRequestUnsupported
		}
		env = append(env, kv)
	}
	cmd.Env = env
	return nil
}

// applyBubblewrap honours req on a bwrap command line: the working
// directory inside the sandbox's scratch, the variables and PATH by
// --setenv, and each mount bound at its own path (read-only unless
// writable), all placed before the "--" that ends bwrap's options.
func applyBubblewrap(cmd *exec.Cmd, req ports.RunRequest) error {
	end := -1
	for i, a := range cmd.Args {
		if a == "--" {
			end = i
			break
		}
	}
	if end < 0 {
		return errRequestUnsupported
	}
	var opts []string
	if req.Dir != "" {
		if !filepath.IsLocal(filepath.FromSlash(req.Dir)) {
			return errRequestUnsupported
		}
		opts = append(opts, "--chdir", sandboxScratch+"/"+req.Dir)
	}
	for _, d := range req.PathDirs {
		if !filepath.IsAbs(d) || strings.Contains(d, ":") {
			return errRequestUnsupported
		}
	}
	if len(req.PathDirs) > 0 {
		opts = append(opts, "--setenv", "PATH", strings.Join(req.PathDirs, ":")+":"+SandboxPATH)
	}
	for _, kv := range req.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k == "PATH" {
			return errRequestUnsupported
		}
		opts = append(opts, "--setenv", k, v)
	}
	for _, m := range req.Mounts {
		if !filepath.IsAbs(m.Host) || filepath.Clean(m.Host) != m.Host {
			return errRequestUnsupported
		}
		bind := "--ro-bind"
		if m.Writable {
			bind = "--bind"
		}
		opts = append(opts, bind, m.Host, m.Host)
	}
	cmd.Args = append(append(append([]string(nil), cmd.Args[:end]...), opts...), cmd.Args[end:]...)
	return nil
}
