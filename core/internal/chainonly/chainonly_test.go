package chainonly

import "testing"

func TestTakeOnce(t *testing.T) {
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		f()
	}
	mustPanic("a take of the wrong type", func() { Take[func(string) int]() })
	if got := Take[func() int]()(); got != 7 {
		t.Fatalf("took a function returning %d", got)
	}
	mustPanic("a second take", func() { Take[func() int]() })
	mustPanic("a second publish", func() { Publish(func() int { return 8 }) })
}

func init() { Publish(func() int { return 7 }) }
