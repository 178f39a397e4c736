package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Several stdio servers on one data directory, as one per MCP client on a
// machine runs them: what one writes to the shared embedded store
// (adapters/sqlite) is read through every other, and SIGKILL loses
// nothing acknowledged. Memories, kv entries and working sets are here;
// each family that moves into the shared store adds its case beside them.

// sharedEnv serves every family with the embedded defaults, and lifts the
// per-minute ceilings the bursts below would meet.
var sharedEnv = map[string]string{
	"ARROWHEAD_PROFILE":                      "full",
	"ARROWHEAD_MEMORY_STORE_PER_MINUTE":      "100000",
	"ARROWHEAD_MEMORY_LIST_PER_MINUTE":       "100000",
	"ARROWHEAD_KV_SET_PER_MINUTE":            "100000",
	"ARROWHEAD_KV_GET_PER_MINUTE":            "100000",
	"ARROWHEAD_KV_DELETE_PER_MINUTE":         "100000",
	"ARROWHEAD_WORKINGSET_GET_PER_MINUTE":    "100000",
	"ARROWHEAD_WORKINGSET_UPDATE_PER_MINUTE": "100000",
}

// sharingServer is one stdio server of a data directory shared by several.
type sharingServer struct {
	c   *client.Client
	cmd *exec.Cmd
}

// startSharing starts n stdio servers on dir, each initialized.
func startSharing(t *testing.T, dir string, n int) []sharingServer {
	t.Helper()
	servers := make([]sharingServer, 0, n)
	for i := range n {
		s, err := startSharingServer(t, dir)
		if err != nil {
			t.Fatalf("server %d: initialize: %v", i, err)
		}
		servers = append(servers, s)
	}
	return servers
}

// startSharingServer starts one server over dir and initializes it; the
// error is initialize's (a server refused at start fails it).
func startSharingServer(t *testing.T, dir string) (sharingServer, error) {
	t.Helper()
	c, cmd, err := startStdioProcess(t, dir, sharedEnv)
	return sharingServer{c: c, cmd: cmd}, err
}

// writeDocs puts n documents d0.md... in the servers' corpus, to pin.
func writeDocs(t *testing.T, dir string, n int) {
	t.Helper()
	docs := filepath.Join(dir, "documents")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%d.md", i)), []byte("# a document\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustOK(t *testing.T, r *mcp.CallToolResult, what string) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s: %s", what, text(r))
	}
	return structured(r)
}

// memoryIDs lists the ids in a namespace, through c.
func memoryIDs(t *testing.T, c *client.Client, ns string) []string {
	t.Helper()
	list, _ := mustOK(t, call(t, c, "memory_list", map[string]any{"namespace": ns}), "memory_list")["memories"].([]any)
	var ids []string
	for _, m := range list {
		ids = append(ids, fmt.Sprint(m.(map[string]any)["id"]))
	}
	slices.Sort(ids)
	return ids
}

// kvValue is the value kv_get returns through c ("" when not found).
func kvValue(t *testing.T, c *client.Client, key string) (string, bool) {
	t.Helper()
	r := call(t, c, "kv_get", map[string]any{"key": key})
	if r.IsError {
		if strings.Contains(text(r), "not found") {
			return "", false
		}
		t.Fatalf("kv_get: %s", text(r))
	}
	// The value comes back framed as untrusted data, on lines of its own.
	return fmt.Sprint(structured(r)["content"]), true
}

// pinned lists a working set's identifiers through c.
func pinned(t *testing.T, c *client.Client, name string) []string {
	t.Helper()
	items, _ := mustOK(t, call(t, c, "workingset_get", map[string]any{"name": name}), "workingset_get")["items"].([]any)
	var ids []string
	for _, it := range items {
		ids = append(ids, fmt.Sprint(it.(map[string]any)["identifier"]))
	}
	return ids
}

// Two and then four servers on one data directory, calls interleaved:
// each in turn stores a memory, sets a key and pins a document, and
// every server then reads all of it, the others' writes included; a
// memory stored again through another server dedups onto the first
// one's record; a delete through one is seen by all.
func TestSharedStoreAcrossStdioServers(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d servers", n), func(t *testing.T) {
			dir := t.TempDir()
			writeDocs(t, dir, n)
			servers := startSharing(t, dir, n)
			var ids, wantPins []string
			for turn, w := range servers {
				content := fmt.Sprintf("written through server %d", turn)
				id := fmt.Sprint(mustOK(t, call(t, w.c, "memory_store", map[string]any{"namespace": "shared", "content": content}), "memory_store")["id"])
				ids = append(ids, id)
				slices.Sort(ids)
				mustOK(t, call(t, w.c, "kv_set", map[string]any{"key": fmt.Sprint("k", turn), "value": content}), "kv_set")
				wantPins = append(wantPins, fmt.Sprintf("d%d.md", turn))
				mustOK(t, call(t, w.c, "workingset_update", map[string]any{"name": "together", "action": "pin",
					"items": []map[string]any{{"kind": "doc", "identifier": wantPins[turn]}}}), "workingset_update")

				for reader, r := range servers {
					if got := memoryIDs(t, r.c, "shared"); !slices.Equal(got, ids) {
						t.Fatalf("after server %d wrote, server %d lists memories %v, want %v", turn, reader, got, ids)
					}
					for k := 0; k <= turn; k++ {
						v, ok := kvValue(t, r.c, fmt.Sprint("k", k))
						if want := fmt.Sprintf("written through server %d", k); !ok || !strings.Contains(v, "\n"+want+"\n") {
							t.Fatalf("server %d reads k%d as %q (found %v), want %q", reader, k, v, ok, want)
						}
					}
					if got := pinned(t, r.c, "together"); !slices.Equal(got, wantPins) {
						t.Fatalf("after server %d pinned, server %d reads the set as %v, want %v", turn, reader, got, wantPins)
					}
				}
				// The same content through the next server is the same memory.
				next := servers[(turn+1)%n]
				again := mustOK(t, call(t, next.c, "memory_store", map[string]any{"namespace": "shared", "content": content}), "memory_store")
				if fmt.Sprint(again["id"]) != id {
					t.Fatalf("storing server %d's memory again through another server made %v, want the same id %s", turn, again["id"], id)
				}
			}
			last := servers[n-1]
			mustOK(t, call(t, last.c, "kv_delete", map[string]any{"key": "k0"}), "kv_delete")
			mustOK(t, call(t, last.c, "workingset_update", map[string]any{"name": "together", "action": "clear"}), "workingset_update clear")
			for reader, r := range servers {
				if _, ok := kvValue(t, r.c, "k0"); ok {
					t.Fatalf("server %d still reads a key deleted through server %d", reader, n-1)
				}
				if res := call(t, r.c, "workingset_get", map[string]any{"name": "together"}); !res.IsError || !strings.Contains(text(res), "not found") {
					t.Fatalf("server %d still reads a cleared set: %s", reader, text(res))
				}
			}
		})
	}
}

// SIGKILL of two servers in the middle of write bursts (four callers
// each, kv_set and memory_store through both at once): after a restart,
// every write either server acknowledged is there.
func TestSIGKILLDuringWriteBurstsOnTwoStdioServers(t *testing.T) {
	dir := t.TempDir()
	servers := startSharing(t, dir, 2)
	type acked struct{ key, value, memoryID string }
	var mu sync.Mutex
	var got []acked
	perServer := make([]int, len(servers))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for si, s := range servers {
		for caller := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					a := acked{key: fmt.Sprintf("s%d-c%d-%d", si, caller, i)}
					a.value = "value of " + a.key
					if !burstCall(s.c, "kv_set", map[string]any{"key": a.key, "value": a.value}, nil) {
						return // killed
					}
					var rec map[string]any
					if !burstCall(s.c, "memory_store", map[string]any{"namespace": "burst", "content": a.value}, &rec) {
						return
					}
					a.memoryID = fmt.Sprint(rec["id"])
					mu.Lock()
					got = append(got, a)
					perServer[si]++
					mu.Unlock()
				}
			})
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		enough := min(perServer[0], perServer[1]) >= 40
		mu.Unlock()
		if enough || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, s := range servers {
		_ = s.cmd.Process.Kill() // SIGKILL, mid-burst
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if min(perServer[0], perServer[1]) < 40 {
		t.Fatalf("acknowledged writes per server before the kill: %v", perServer)
	}

	after, err := startSharingServer(t, dir)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	ids := map[string]bool{}
	for _, id := range memoryIDs(t, after.c, "burst") {
		ids[id] = true
	}
	for _, a := range got {
		if v, ok := kvValue(t, after.c, a.key); !ok || !strings.Contains(v, "\n"+a.value+"\n") {
			t.Fatalf("acknowledged kv_set %s lost after SIGKILL: %q", a.key, v)
		}
		if !ids[a.memoryID] {
			t.Fatalf("acknowledged memory_store %s lost after SIGKILL", a.memoryID)
		}
	}
	t.Logf("%d acknowledged kv_set and memory_store pairs (per server %v) all there after SIGKILL", len(got), perServer)
}

// burstCall calls a tool from a burst goroutine: false once the server is
// gone (killed), and a refusal is a failure of the test only while it
// runs. out receives the structured result.
func burstCall(c *client.Client, name string, args map[string]any, out *map[string]any) bool {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		return false
	}
	if out != nil {
		*out = structured(res)
	}
	return true
}
