package ports_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestNextDue(t *testing.T) {
	due := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"on time", due, due.Add(time.Minute)},
		{"a little late", due.Add(10 * time.Second), due.Add(time.Minute)},
		{"exactly one interval late", due.Add(time.Minute), due.Add(2 * time.Minute)},
		{"many intervals late skips the missed ones", due.Add(90*time.Minute + time.Second), due.Add(91 * time.Minute)},
	} {
		if got := ports.NextDue(due, time.Minute, c.now); !got.Equal(c.want) {
			t.Errorf("%s: NextDue = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNewTaskIDShape(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := ports.NewTaskID()
		if len(id) != ports.TaskIDLength || seen[id] {
			t.Fatalf("id %q is malformed or repeated", id)
		}
		for _, c := range id {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				t.Fatalf("id %q is not lowercase hex", id)
			}
		}
		seen[id] = true
	}
	if ports.TaskWorking.Finished() || !ports.TaskCancelled.Finished() {
		t.Fatal("Finished is wrong")
	}
}

// Safe turns a panicking work into ErrTaskPanicked and passes everything
// else through untouched.
func TestTaskWorkSafe(t *testing.T) {
	panicking := ports.TaskWork(func(context.Context, ports.TaskRun) ([]byte, error) { panic("boom") })
	if got, err := panicking.Safe(t.Context(), ports.TaskRun{}); got != nil || !errors.Is(err, ports.ErrTaskPanicked) {
		t.Fatalf("panicking work = %q, %v", got, err)
	}
	failing := errors.New("caller-safe reason")
	plain := ports.TaskWork(func(context.Context, ports.TaskRun) ([]byte, error) { return []byte(`{"ok":true}`), failing })
	if got, err := plain.Safe(t.Context(), ports.TaskRun{}); string(got) != `{"ok":true}` || err != failing {
		t.Fatalf("plain work = %q, %v", got, err)
	}
}
