package telemetry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateWriter holds its first Write until open is closed, so the test can
// queue lines behind it, and keeps each Write's bytes apart. A Write
// numbered failAt (from 1) writes only its first short bytes and fails.
type gateWriter struct {
	open   chan struct{}
	failAt int
	short  int

	mu     sync.Mutex
	writes [][]byte
}

func newGateWriter() *gateWriter { return &gateWriter{open: make(chan struct{})} }

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n := len(w.writes) + 1
	w.mu.Unlock()
	if n == 1 {
		<-w.open
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n == w.failAt {
		w.writes = append(w.writes, bytes.Clone(p[:w.short]))
		return w.short, io.ErrShortWrite
	}
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

func (w *gateWriter) all() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Join(w.writes, nil)
}

// waitQueued waits until n ops are in c's queue (the one writing and the
// ones waiting behind it).
func waitQueued(t *testing.T, c *chainWriter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ops queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// encodedLine is record i as the sink's encoder hands it to the chain.
func encodedLine(i int) []byte {
	var b bytes.Buffer
	NewAuditSink(&b).Record(context.Background(), chainRecord(i))
	return b.Bytes()
}

// The lines queued while a write is under way go out together, in one
// Write, chained in the order they queued; each Write returns once its
// line is written.
func TestChainQueuedLinesShareOneWrite(t *testing.T) {
	k := newKey(t)
	w := newGateWriter()
	s, err := NewChainedAuditSink(w, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	record := func(i int) {
		wg.Add(1)
		go func() { defer wg.Done(); s.Record(context.Background(), chainRecord(i)) }()
	}
	record(0)
	waitQueued(t, s.chain, 1)
	for i := 1; i <= 10; i++ {
		record(i)
	}
	waitQueued(t, s.chain, 11)
	close(w.open)
	wg.Wait()
	if n := len(w.writes); n != 2 || len(splitLines(w.writes[1])) != 10 {
		t.Fatalf("%d writes, want the first line alone and the 10 queued behind it in one", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", splitLines(w.all())})
	if len(rep.Findings) != 0 || !rep.Chains[0].Closed || rep.Chains[0].Lines != 12 {
		t.Fatalf("chains %+v findings:\n%s", rep.Chains, findings(rep))
	}
}

// Close queues behind the lines already waiting: they are written, then
// the final checkpoint, and the ticker goroutine has ended when it
// returns.
func TestChainCloseDrainsQueuedLines(t *testing.T) {
	k := newKey(t)
	w := newGateWriter()
	s, err := NewChainedAuditSink(w, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Record(context.Background(), chainRecord(i)) }()
		waitQueued(t, s.chain, i+1)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	waitQueued(t, s.chain, 7)
	close(w.open)
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.chain.done:
	default:
		t.Fatal("the ticker goroutine outlived Close")
	}
	lines := splitLines(w.all())
	if msg, _, seq := lineInfo(t, lines[len(lines)-1]); msg != CheckpointMessage || seq != 7 {
		t.Fatalf("last line is %q seq %d, want the final checkpoint after the 6 lines", msg, seq)
	}
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", lines})
	if len(rep.Findings) != 0 || !rep.Chains[0].Closed || rep.Chains[0].Lines != 7 {
		t.Fatalf("chains %+v findings:\n%s", rep.Chains, findings(rep))
	}
}

// A group whose write fails part-way: each Write whose line was written
// whole returns success, the others the writer's error, and the chain
// advances past the whole lines only, so the next line takes the seq of
// the first one lost and chains onto the last one written.
func TestChainFailedGroupWriteAdvancesByWholeLines(t *testing.T) {
	k := newKey(t)
	w := newGateWriter()
	s, err := NewChainedAuditSink(w, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	c := s.chain
	line := encodedLine(0)
	// The chained lines of the group have equal lengths: the same record
	// with seq 2 to 11 and a prev_hash.
	chained := len(line) + len(`,"seq":2,"chain_id":"","prev_hash":""`) + len(c.id) + 64
	w.failAt, w.short = 2, 3*chained+chained/2

	results := make(chan error, 11)
	write := func() {
		go func() {
			_, err := c.Write(line)
			results <- err
		}()
	}
	write()
	waitQueued(t, c, 1)
	for range 10 {
		write()
	}
	waitQueued(t, c, 11)
	close(w.open)
	var ok, failed int
	for range 11 {
		switch err := <-results; {
		case err == nil:
			ok++
		case errors.Is(err, io.ErrShortWrite):
			failed++
		default:
			t.Fatal(err)
		}
	}
	if ok != 4 || failed != 7 {
		t.Fatalf("%d writes succeeded and %d failed, want the first, 3 whole lines of the group, and 7 lost", ok, failed)
	}
	if _, err := c.Write(line); err != nil {
		t.Fatal(err)
	}
	group := splitLines(w.writes[1])
	sum := sha256.Sum256([]byte(group[2]))
	last := strings.TrimSuffix(string(w.writes[2]), "\n")
	if _, _, seq := lineInfo(t, last); seq != 5 || !strings.Contains(last, `"prev_hash":"`+hex.EncodeToString(sum[:])+`"`) {
		t.Fatalf("the line after the failed write does not follow the last whole line (seq 4):\n%s", last)
	}
}
