package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestStoreRefusal(t *testing.T) {
	unknown := fmt.Errorf("setting a key: %w", ports.ErrOutcomeUnknown)
	r, ok := StoreRefusal(unknown, "The memory store", "Repeating it is safe.")
	te, _ := AsToolError(r)
	if !ok || te == nil || te.Kind != KindUnavailable || te.Data["outcome"] != "unknown" ||
		!strings.Contains(te.Message, "may or may not have been applied") || !strings.HasSuffix(te.Message, "Repeating it is safe.") {
		t.Fatalf("unknown outcome: %+v, %v", te, ok)
	}
	r, ok = StoreRefusal(fmt.Errorf("setting a key: %w", context.DeadlineExceeded), "The memory store", "x")
	if te, _ := AsToolError(r); !ok || te == nil || te.Kind != KindUnavailable || !strings.HasPrefix(te.Message, "The memory store did not answer in time") {
		t.Fatalf("timeout: %v, %v", r, ok)
	}
	r, ok = StoreRefusal(fmt.Errorf("storing a memory: %w", ports.ErrStoreFull), "The memory store", "x")
	if te, _ := AsToolError(r); !ok || te == nil || te.Kind != KindUnavailable || !strings.HasPrefix(te.Message, "The memory store's disk is full: the change was not applied.") {
		t.Fatalf("full disk: %v, %v", r, ok)
	}
	if r, ok := StoreRefusal(context.Canceled, "s", "x"); !ok || r != context.Canceled {
		t.Fatalf("a cancelled call changed: %v", r)
	}
	if _, ok := StoreRefusal(errors.New("other"), "s", "x"); ok {
		t.Fatal("claimed an unrelated error")
	}
}

// TestOwner: a caller's own records are keyed by the verified subject; a
// caller without one is denied.
func TestOwner(t *testing.T) {
	p := ports.Principal{Authenticated: true, Subject: "alice"}
	if key, err := Owner(p); err != nil || key != p.Key() {
		t.Fatalf("owner %q, %v", key, err)
	}
	for _, p := range []ports.Principal{{Subject: "alice"}, {Authenticated: true}} {
		if _, err := Owner(p); err == nil || err.(*ToolError).Kind != KindAuthorization {
			t.Errorf("%+v: %v", p, err)
		}
	}
}
