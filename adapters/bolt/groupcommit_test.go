package bolt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/internal/groupcommit"
)

// waitFor polls cond: the test steers goroutines into a known arrival
// order and must see each one arrive before it starts the next.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// Calls that arrive while a commit is in progress share the next
// transaction and run in arrival order, each seeing the writes before it;
// a call that fails or panics is rolled back and answered alone, and the
// calls around it still commit.
func TestCallsGatheredDuringACommitShareTheNextTransaction(t *testing.T) {
	s, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ns, err := s.Namespace("group")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// A plain Update holds bbolt's writer until released.
	release, holding := make(chan struct{}), make(chan struct{})
	go ns.Update(ctx, func(*bbolt.Bucket) error { close(holding); <-release; return nil })
	<-holding

	var mu sync.Mutex
	lastTx := map[string]*bbolt.Tx{} // the transaction each call last ran in
	seen := map[string]string{}      // what each call read of the one before it
	refused := errors.New("refused")
	call := func(name, previous string, outcome func(b *bbolt.Bucket) error) func(b *bbolt.Bucket) error {
		return func(b *bbolt.Bucket) error {
			mu.Lock()
			lastTx[name] = b.Tx()
			if previous != "" {
				seen[name] = string(b.Get([]byte(previous)))
			}
			mu.Unlock()
			if err := b.Put([]byte(name), []byte("written by "+name)); err != nil {
				return err
			}
			return outcome(b)
		}
	}
	ok := func(*bbolt.Bucket) error { return nil }

	errs := map[string]chan error{}
	start := func(name, previous string, outcome func(*bbolt.Bucket) error) {
		done := make(chan error, 1)
		errs[name] = done
		go func() { done <- ns.Batch(ctx, call(name, previous, outcome)) }()
	}
	// The first caller leads a batch of its own, blocked on the writer.
	start("first", "", ok)
	waitFor(t, "the first batch is committing", func() bool {
		return s.group.State() == groupcommit.State{Committing: 1}
	})
	// The next five gather behind it, in this order.
	order := []struct {
		name    string
		outcome func(*bbolt.Bucket) error
	}{
		{"b1", ok},
		{"b2", ok},
		{"b3", func(*bbolt.Bucket) error { return refused }},
		{"b4", func(*bbolt.Bucket) error { panic("a damaged page") }},
		{"b5", ok},
	}
	for i, c := range order {
		previous := ""
		if i > 0 {
			previous = order[i-1].name
		}
		start(c.name, previous, c.outcome)
		waitFor(t, c.name+" has joined the batch", func() bool {
			return s.group.State() == groupcommit.State{Committing: 1, Gathering: i + 1}
		})
	}
	close(release)

	for name, done := range errs {
		err := <-done
		switch name {
		case "b3":
			if !errors.Is(err, refused) {
				t.Errorf("b3 returned %v, want its own error", err)
			}
		case "b4":
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("b4 returned %v, want ErrCorrupt for its panic", err)
			}
		default:
			if err != nil {
				t.Errorf("%s returned %v", name, err)
			}
		}
	}
	if lastTx["first"] == lastTx["b1"] {
		t.Error("the first call shared the transaction of calls that arrived after its commit began")
	}
	for _, name := range []string{"b2", "b5"} {
		if lastTx[name] != lastTx["b1"] {
			t.Errorf("%s committed in another transaction than b1", name)
		}
	}
	if seen["b2"] != "written by b1" || seen["b5"] != "" {
		t.Errorf("b2 read %q of b1, b5 read %q of b4 (rolled back)", seen["b2"], seen["b5"])
	}
	got := map[string]bool{}
	if err := ns.View(ctx, func(b *bbolt.Bucket) error {
		return b.ForEach(func(k, _ []byte) error { got[string(k)] = true; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if want := "map[b1:true b2:true b5:true first:true]"; fmt.Sprint(got) != want {
		t.Errorf("store holds %v, want %s", got, want)
	}
}
