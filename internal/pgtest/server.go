package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Where a private server comes from (Debian's postgresql-15, as in
// .ci/postgres.sh) and who runs it when the test runs as root.
const (
	// BinDirEnv overrides the directory of initdb and postgres.
	BinDirEnv = "ARROWHEAD_TEST_PG_BIN"
	// DefaultBinDir is Debian's postgresql-15.
	DefaultBinDir = "/usr/lib/postgresql/15/bin"
	// ServerOSUser runs the server when the test runs as root (PostgreSQL
	// refuses to run as root); .ci/postgres.sh creates it.
	ServerOSUser = "arrowheadpg"

	// serverStartWait bounds a start or restart.
	serverStartWait = 30 * time.Second
	// serverStopWait bounds a fast shutdown before the server is killed.
	serverStopWait = 15 * time.Second
)

// Server is a private PostgreSQL cluster one test owns: the test may stop,
// restart and freeze it without disturbing the shared test database. It
// listens on loopback only, trusts local connections (nothing else can
// reach it) and is removed when the test ends.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan struct{}
}

// StartServer initialises and starts a private cluster, or skips the test
// (fails it under ARROWHEAD_REQUIRE_INTEGRATION=1) when PostgreSQL's
// binaries, or as root the server's user, are missing.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(BinDirEnv)
	if bin == "" {
		bin = DefaultBinDir
	}
	unavailable := func(msg string) {
		t.Helper()
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", RequireEnv, msg)
		}
		t.Skipf("\n*** SKIPPING POSTGRESQL FAULT TEST %s: %s\n*** Install postgresql-15 (.ci/postgres.sh does) or set %s.\n*** Set %s=1 to make this a failure.",
			t.Name(), msg, BinDirEnv, RequireEnv)
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		unavailable("no PostgreSQL server binary in " + bin)
	}
	s := &Server{t: t, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(ServerOSUser)
		if err != nil {
			unavailable("running as root needs the system user " + ServerOSUser + " (.ci/postgres.sh creates it)")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: its parents are mode 700, which the server's user
	// could not traverse.
	dir, err := os.MkdirTemp("", "ahpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s.dir = dir
	if s.cred != nil {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.port = freeTCPPort(t)
	t.Cleanup(s.kill)
	s.Start()
	return s
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// DSN is the superuser's DSN of the postgres database.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the (stopped) server on its port and waits until it
// answers.
func (s *Server) Start() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("the private PostgreSQL is already running")
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data(), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off",
		"-c", "max_connections=100", "-c", "logging_collector=off")
	// Its own process group, so a kill at cleanup reaches what is left.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		s.t.Fatalf("starting postgres: %v", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); _ = log.Close(); close(s.done) }()
	ok := Retry(serverStartWait, func() bool {
		select {
		case <-s.done:
			return true
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.DSN())
		if err != nil {
			return false
		}
		_ = c.Close(ctx)
		return true
	})
	select {
	case <-s.done:
		out, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		s.cmd = nil
		s.t.Fatalf("postgres exited at start:\n%s", out)
	default:
	}
	if !ok {
		s.t.Fatal("the private PostgreSQL did not answer in time")
	}
}

// Stop shuts the server down (fast shutdown: connections are dropped) and
// waits for it to exit.
func (s *Server) Stop() {
	s.t.Helper()
	if s.cmd == nil {
		return
	}
	s.signal(syscall.SIGCONT) // a frozen server cannot shut down
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(serverStopWait):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}

// Freeze stops every process of the server (SIGSTOP): connections stay
// open and nothing answers, as in a stalled host.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

// signal sends sig to the postmaster and to every process it forked:
// backends call setsid(), so they are not in the postmaster's group. The
// postmaster is signalled first, so it forks nothing new meanwhile.
func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.t.Errorf("signalling the private PostgreSQL: %v", err)
	}
	for _, child := range children(pid) {
		_ = syscall.Kill(child, sig)
	}
}

// children lists the processes whose parent is pid (from /proc).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse
		// after its closing parenthesis.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// kill ends the server for good at cleanup.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	s.signal(syscall.SIGCONT)
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(serverStopWait):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}

// freeTCPPort returns a loopback port nothing listens on right now.
func freeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
