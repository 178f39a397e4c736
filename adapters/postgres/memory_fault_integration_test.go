package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// commitCutter is a TCP proxy in front of PostgreSQL that, once armed,
// forwards the next COMMIT and then drops the connection before the answer
// comes back: the client sent its commit and never learns its outcome.
type commitCutter struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	wg     sync.WaitGroup
}

func newCommitCutter(t *testing.T, target string) *commitCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &commitCutter{ln: ln, target: target}
	c.wg.Add(1)
	go c.serve()
	t.Cleanup(func() { _ = ln.Close(); c.wg.Wait() })
	return c
}

func (c *commitCutter) serve() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c.wg.Add(2)
		go func() { defer c.wg.Done(); _, _ = io.Copy(client, server); _ = client.Close() }()
		go func() {
			defer c.wg.Done()
			defer server.Close()
			defer client.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := client.Read(buf)
				if n > 0 {
					chunk := buf[:n]
					cut := c.armed.Load() && bytes.Contains(bytes.ToLower(chunk), []byte("commit"))
					if _, werr := server.Write(chunk); werr != nil {
						return
					}
					if cut && c.armed.CompareAndSwap(true, false) {
						// Drop the client before the answer can reach
						// it; give the server time to commit first.
						_ = client.Close()
						time.Sleep(200 * time.Millisecond)
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// TestFaultMemoryWritesUnderAStalledOrDroppedConnection: against a private
// PostgreSQL 15, a kv write whose commit was sent but never answered fails
// with ports.ErrOutcomeUnknown (it was in fact applied, and repeating it
// is harmless); a write during a freeze fails within its deadline as a
// timeout or an unknown outcome, never as a generic failure; and once the
// server is thawed the same store writes again by itself.
func TestFaultMemoryWritesUnderAStalledOrDroppedConnection(t *testing.T) {
	srv := pgtest.StartServer(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := migrations.Apply(ctx, c, migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: memoryDims, Memory: true}); err != nil {
		t.Fatal(err)
	}
	_ = c.Close(ctx)
	lim := ports.MemoryLimits{MaxEntriesPerNamespace: 100, MaxNamespaces: 10, QuotaBytes: 1 << 20, MaxKeys: 100}
	entry := func(v string) ports.KVEntry {
		return ports.KVEntry{Key: "k", Value: v, UpdatedAt: time.Now().UTC(), Provenance: ports.Provenance{Tool: "kv_set", Caller: "alice", At: time.Now().UTC()}}
	}

	t.Run("lost commit", func(t *testing.T) {
		u, _ := url.Parse(srv.DSN())
		cutter := newCommitCutter(t, u.Host)
		u.Host = cutter.ln.Addr().String()
		m := plainMemoryStore(t, u.String())
		cutter.armed.Store(true)
		err := m.KVSet(ctx, "alice", entry("v1"), lim)
		if !errors.Is(err, ports.ErrOutcomeUnknown) {
			t.Fatalf("a write whose commit went unanswered returned %v, want ErrOutcomeUnknown", err)
		}
		if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "v1") {
			t.Fatalf("the error carries driver text: %v", err)
		}
		// It was applied; repeating it is harmless and leaves one value.
		// The client learned nothing the moment the proxy dropped it,
		// which can be before PostgreSQL has read the COMMIT the proxy
		// forwarded: wait for the commit to land rather than race it.
		var got ports.KVEntry
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got, err = m.KVGet(ctx, "alice", "k", time.Now())
			if err == nil && got.Value == "v1" || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || got.Value != "v1" {
			t.Fatalf("5 s after the lost commit the key holds %+v, %v", got, err)
		}
		if err := m.KVSet(ctx, "alice", entry("v1"), lim); err != nil {
			t.Fatalf("repeating the write: %v", err)
		}
		if got, err := m.KVGet(ctx, "alice", "k", time.Now()); err != nil || got.Value != "v1" {
			t.Fatalf("after the repeat the key holds %+v, %v", got, err)
		}
	})

	t.Run("frozen server", func(t *testing.T) {
		m := plainMemoryStore(t, srv.DSN())
		if err := m.KVSet(ctx, "alice", entry("v2"), lim); err != nil {
			t.Fatal(err)
		}
		srv.Freeze()
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		start := time.Now()
		err := m.KVSet(wctx, "alice", entry("v3"), lim)
		cancel()
		elapsed := time.Since(start)
		srv.Thaw()
		if err == nil {
			t.Fatal("a write to a frozen server succeeded")
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ports.ErrOutcomeUnknown) {
			t.Fatalf("a write to a frozen server returned %v, want a timeout or an unknown outcome", err)
		}
		if elapsed > 5*time.Second {
			t.Fatalf("the write held its caller %v past a 1 s deadline", elapsed)
		}
		if !pgtest.Retry(10*time.Second, func() bool { return m.KVSet(ctx, "alice", entry("v4"), lim) == nil }) {
			t.Fatal("the store did not write again after the thaw")
		}
	})
}
