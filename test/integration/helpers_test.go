// Package integration_test runs the adapters against real services started
// by the tests themselves (no Docker, no system service). A test whose
// service binary is missing skips with a loud message, unless
// ARROWHEAD_REQUIRE_INTEGRATION=1 (set by .ci/run) turns the skip into a
// failure.
package integration_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// requireEnv names the variable that turns a missing service into a failure.
const requireEnv = "ARROWHEAD_REQUIRE_INTEGRATION"

// redisStartTimeout bounds how long a fresh redis-server may take to answer
// PING.
const redisStartTimeout = 15 * time.Second

// skipOrFail skips the test with a loud message, or fails it when
// integration tests are required.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", requireEnv, msg)
	}
	t.Skipf("\n*** SKIPPING INTEGRATION TEST %s: %s\n*** Set %s=1 to make this a failure.", t.Name(), msg, requireEnv)
}

// redisServer is a redis-server process this test started: loopback only, no
// persistence, in its own temp dir, killed when the test ends. It can be
// stopped, paused and started again on the same port.
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exits
}

// startRedis starts a private redis-server and returns its URL and a
// function that stops it (also done in t.Cleanup). It skips or fails the
// test when redis-server is not on PATH.
func startRedis(t testing.TB) (url string, stop func()) {
	t.Helper()
	s := startRedisServer(t)
	return s.URL(), s.Stop
}

// startRedisServer is startRedis with control over the process.
func startRedisServer(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipOrFail(t, "redis-server is not on PATH (install the Debian package redis-server)")
	}
	s := &redisServer{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	// A free port found by listening can be taken by someone else before
	// redis binds it; try a few.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s.port = freePort(t)
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatalf("starting redis-server: %v", lastErr)
	return nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// URL is the server's redis:// URL.
func (s *redisServer) URL() string { return "redis://" + s.Addr() }

// Addr is the server's host:port.
func (s *redisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *redisServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redis-server is already running")
	}
	log := &bytes.Buffer{}
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
	)
	cmd.Dir = s.dir
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	if err := waitForPing(s.Addr(), done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("%w; server log:\n%s", err, log.String())
	}
	s.cmd, s.done = cmd, done
	return nil
}

// waitForPing polls until the server answers PING, it exits, or the start
// timeout passes.
func waitForPing(addr string, exited <-chan struct{}) error {
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ContextTimeoutEnabled: true})
	defer c.Close()
	deadline := time.NewTimer(redisStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("redis-server exited before answering PING")
		case <-deadline.C:
			return fmt.Errorf("redis-server did not answer PING within %v", redisStartTimeout)
		case <-tick.C:
		}
	}
}

// Stop kills the server and waits for it to exit. Stopping a stopped server
// does nothing.
func (s *redisServer) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill() // SIGKILL also ends a paused server

	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port, with empty data.
func (s *redisServer) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("restarting redis-server on port %d: %v", s.port, err)
	}
}

// Pause freezes the server (SIGSTOP): connections stay open but nothing is
// answered, like a hung Redis. Resume undoes it.
func (s *redisServer) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *redisServer) Resume() { s.signal(syscall.SIGCONT) }

func (s *redisServer) signal(sig os.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatal("redis-server is not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signalling redis-server: %v", err)
	}
}
