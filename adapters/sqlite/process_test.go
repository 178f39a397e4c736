package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The multi-process tests re-execute this test binary as a helper: with
// helperEnv set, TestMain opens the store in the directory it names and
// serves commands, one JSON object a line on stdin, answering each with
// one JSON line on stdout. Every process on the directory is a real,
// separate process with its own connections and its own group commit.
const helperEnv = "ARROWHEAD_SQLITE_TEST_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(serveHelper(dir))
	}
	if dir := os.Getenv(taskHelperEnv); dir != "" {
		os.Exit(serveTaskHelper(dir))
	}
	os.Exit(m.Run())
}

type command struct {
	Op      string                 `json:"op"`
	Owner   string                 `json:"owner,omitempty"`
	NS      string                 `json:"ns,omitempty"`
	Content string                 `json:"content,omitempty"`
	NewID   string                 `json:"new_id,omitempty"`
	Key     string                 `json:"key,omitempty"`
	Value   string                 `json:"value,omitempty"`
	Items   []ports.WorkingSetItem `json:"items,omitempty"`
	Limits  ports.MemoryLimits     `json:"limits"`
	N       int                    `json:"n,omitempty"`
}

type reply struct {
	Err      string                 `json:"err,omitempty"`
	ID       string                 `json:"id,omitempty"`
	Created  bool                   `json:"created,omitempty"`
	Contents []string               `json:"contents,omitempty"`
	Value    string                 `json:"value,omitempty"`
	Items    []ports.WorkingSetItem `json:"items,omitempty"`
	Acked    string                 `json:"acked,omitempty"`
}

var wsLimits = ports.WorkingSetLimits{MaxSetsPerOwner: 8, MaxItemsPerSet: 64, MaxSetsTotal: 64}

func errText(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ports.ErrNotFound):
		return "not found"
	}
	var le *ports.MemoryLimitError
	if errors.As(err, &le) {
		return "limit " + le.Var
	}
	return err.Error()
}

func serveHelper(dir string) int {
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	defer s.Close()
	mem, ws := sqlite.NewMemoryStore(s), must(sqlite.NewWorkingSets(s, wsLimits))
	ctx := context.Background()
	out := json.NewEncoder(os.Stdout)
	var outMu sync.Mutex
	send := func(r reply) {
		outMu.Lock()
		defer outMu.Unlock()
		_ = out.Encode(r)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			return 3
		}
		var r reply
		switch c.Op {
		case "mem_store":
			w := memorytest.Write(c.NS, c.Content, time.Now())
			if c.NewID != "" {
				w.NewID = c.NewID
			}
			rec, created, err := mem.Store(ctx, c.Owner, w, c.Limits)
			r = reply{Err: errText(err), ID: rec.ID, Created: created}
		case "mem_list":
			recs, _, err := mem.List(ctx, c.Owner, c.NS, 0)
			r.Err = errText(err)
			for _, rec := range recs {
				r.Contents = append(r.Contents, rec.Content)
			}
		case "kv_set":
			r.Err = errText(mem.KVSet(ctx, c.Owner, ports.KVEntry{Key: c.Key, Value: c.Value, UpdatedAt: time.Now()}, c.Limits))
		case "kv_get":
			e, err := mem.KVGet(ctx, c.Owner, c.Key, time.Now())
			r = reply{Err: errText(err), Value: e.Value}
		case "ws_pin":
			set, err := ws.Pin(ctx, c.Owner, c.Key, c.Items)
			r = reply{Err: errText(err), Items: set.Items}
		case "ws_get":
			set, err := ws.Get(ctx, c.Owner, c.Key)
			r = reply{Err: errText(err), Items: set.Items}
		case "burst":
			// 8 writers set keys c.Key-<writer>-<i> until killed, reporting
			// each key once its write is acknowledged.
			for g := range 8 {
				go func() {
					for i := 0; ; i++ {
						key := fmt.Sprintf("%s-%d-%d", c.Key, g, i)
						if err := mem.KVSet(ctx, c.Owner, ports.KVEntry{Key: key, Value: "v" + key, UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
							send(reply{Err: err.Error()})
							return
						}
						send(reply{Acked: key})
					}
				}()
			}
			continue
		default:
			r.Err = "unknown op"
		}
		send(r)
	}
	return 0
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// helper is a running helper process.
type helper struct {
	t   testing.TB
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

func startHelper(t testing.TB, dir string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{t: t, cmd: cmd, in: in, out: json.NewDecoder(out)}
	// Killed before its stdin is closed: a helper whose stdin ends returns
	// and closes its store, and a burst still running would then report
	// ErrClosed to a reader of its replies.
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		in.Close()
		_ = cmd.Wait()
	})
	return h
}

func (h *helper) send(c command) {
	h.t.Helper()
	b, _ := json.Marshal(c)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
}

func (h *helper) do(c command) reply {
	h.t.Helper()
	h.send(c)
	var r reply
	if err := h.out.Decode(&r); err != nil {
		h.t.Fatalf("helper %s: %v", c.Op, err)
	}
	return r
}
