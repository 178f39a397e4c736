package boltstores_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

const crashChildEnv = "ARROWHEAD_TEST_MEMORY_CRASH_DIR"

// TestMemoryCrashChild is the child of TestMemorySIGKILLLosesNoAck: it
// writes memories and kv entries from 8 goroutines and prints each one's
// acknowledgement, until it is killed.
func TestMemoryCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("run by TestMemorySIGKILLLosesNoAck")
	}
	m, _ := openMemoryStore(t, dir)
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				content := fmt.Sprintf("g%d-%d %s", g, i, strings.Repeat("x", 200))
				rec, _, err := m.Store(context.Background(), "owner", memorytest.Write("burst", content, time.Now()), ports.MemoryLimits{})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				key := fmt.Sprintf("k%d-%d", g, i)
				if err := m.KVSet(context.Background(), "owner", ports.KVEntry{Key: key, Value: content, UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %s %s %s\n", rec.ID, key, content)
				out.Flush()
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
}

// startCrashChild runs the test named child in a subprocess with env set
// to dir, returning it and its stdout.
func startCrashChild(t *testing.T, child, env, dir string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout
}

func TestMemorySIGKILLLosesNoAck(t *testing.T) {
	dir := t.TempDir()
	cmd, stdout := startCrashChild(t, "TestMemoryCrashChild", crashChildEnv, dir)
	type ack struct{ id, key, content string }
	var acks []ack
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(acks) < 400 {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) == 4 && f[0] == "ack" {
			acks = append(acks, ack{f[1], f[2], f[3]})
		}
	}
	// Kill mid-burst, then read what had been acknowledged before the kill.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) == 4 && f[0] == "ack" {
			acks = append(acks, ack{f[1], f[2], f[3]})
		}
	}
	_ = cmd.Wait()
	if len(acks) < 400 {
		t.Fatalf("the child acknowledged only %d writes", len(acks))
	}
	m, store := openMemoryStore(t, dir) // Open verifies the whole file
	defer store.Close()
	list, _, err := m.List(context.Background(), "owner", "burst", 0)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, r := range list {
		if r.Hash != memorytest.Write("", r.Content, time.Time{}).Hash {
			t.Fatalf("record %s is partial", r.ID)
		}
		byID[r.ID] = r.Content
	}
	for _, a := range acks {
		if byID[a.id] != a.content {
			t.Fatalf("acknowledged memory %s lost", a.id)
		}
		e, err := m.KVGet(context.Background(), "owner", a.key, time.Now())
		if errors.Is(err, ports.ErrNotFound) || e.Value != a.content {
			t.Fatalf("acknowledged kv %s lost (%v)", a.key, err)
		}
	}
	t.Logf("%d acknowledged writes all survived SIGKILL; %d memories on disk", len(acks), len(list))
}
