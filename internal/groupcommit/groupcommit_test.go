package groupcommit

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A batch waits for the callers gathered before the last commit ended and
// for that commit's callers while they are due back; long after it, for
// nobody but itself.
func TestBatchExpectsTheLastCommitsCallersOnlyWhileTheyAreDue(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name            string
		before, returns int
		endedAgo        time.Duration
		want            int
	}{
		{"first batch ever", 0, 0, time.Hour, 1},
		{"eight callers just acknowledged", 0, 8, 0, 8},
		{"one waiting, one acknowledged", 1, 1, Wait / 2, 2},
		{"acknowledged callers long gone", 0, 8, 2 * Wait, 1},
		{"waiting callers count however old", 3, 8, time.Hour, 3},
		{"bounded", Max, Max, 0, Max},
	}
	for _, c := range cases {
		g := Group[int]{returns: c.returns, doneAt: now.Add(-c.endedAgo)}
		if got := g.expectation(&gathering[int]{before: c.before}, now); got != c.want {
			t.Errorf("%s: expect %d calls, want %d", c.name, got, c.want)
		}
	}
}

// Calls that arrive while a commit runs are committed together by the
// next one, in arrival order, and each caller gets its own result.
func TestCallsArrivingDuringACommitShareTheNextAndGetTheirOwnResults(t *testing.T) {
	var g Group[string]
	var mu sync.Mutex
	var batches [][]string
	release, holding := make(chan struct{}), make(chan struct{})
	commit := func(calls []string) []error {
		mu.Lock()
		batches = append(batches, calls)
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(holding)
			<-release
		}
		out := make([]error, len(calls))
		for i, c := range calls {
			if c == "bad" {
				out[i] = errors.New("refused " + c)
			}
		}
		return out
	}
	done := make(chan error, 1)
	go func() { done <- g.Run("first", commit) }()
	<-holding

	names := []string{"a", "b", "bad", "c"}
	results := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { results[i] = g.Run(n, commit) })
		// Arrival order is the order of the batch: wait until each is in.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if g.State() == (State{Committing: 1, Gathering: i + 1}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("call %s never joined the batch", n)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, n := range names {
		want := ""
		if n == "bad" {
			want = "refused bad"
		}
		if got := fmt.Sprint(results[i]); (results[i] == nil) != (want == "") || (want != "" && got != want) {
			t.Errorf("call %s: result %v, want %q", n, results[i], want)
		}
	}
	if len(batches) != 2 || fmt.Sprint(batches[1]) != fmt.Sprint(names) {
		t.Fatalf("batches %v, want [first] then %v", batches, names)
	}
}
