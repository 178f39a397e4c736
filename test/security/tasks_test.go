package security_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestTaskHandleCorpus: no crafted handle resolves to a task, another
// caller's or any, and no refusal echoes it.
func TestTaskHandleCorpus(t *testing.T) {
	rt, _ := app(t)
	alice, mallory := ports.NewPrincipal("alice", "tasks:read", "tasks:write"), ports.NewPrincipal("mallory", "tasks:read", "tasks:write")
	res, err := rt.App.Call(t.Context(), alice, "task_schedule", map[string]any{"delay_seconds": 3600, "payload": map[string]any{"owner": "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	real := res.Structured()["task_id"].(string)
	payloads := append(readCorpus(t, "task_ids.txt"), strings.ToUpper(real), real+"0", real[:31], " "+real, real+"\n", "../"+real)
	if len(payloads) < 25 {
		t.Fatalf("corpus too small: %d", len(payloads))
	}
	for _, p := range payloads {
		for _, c := range []struct {
			who  ports.Principal
			tool string
			args map[string]any
		}{
			{alice, "task_get", map[string]any{"task_id": p}},
			{alice, "task_update", map[string]any{"task_id": p, "action": "cancel"}},
			{mallory, "task_get", map[string]any{"task_id": p}},
		} {
			res, err := rt.App.Call(t.Context(), c.who, c.tool, c.args)
			if err == nil {
				t.Errorf("%s(%q) resolved: %v", c.tool, p, res.Structured())
				continue
			}
			te, ok := catalog.AsToolError(err)
			if !ok || te.Kind != catalog.KindValidation && te.Kind != catalog.KindNotFound {
				t.Errorf("%s(%q): %v", c.tool, p, err)
				continue
			}
			if len(p) > 3 && strings.Contains(te.Message, p) {
				t.Errorf("%s(%q): the refusal echoes the payload", c.tool, p)
			}
		}
	}
	// The real handle is mallory's "not found", word for word a missing one.
	_, foreign := rt.App.Call(t.Context(), mallory, "task_get", map[string]any{"task_id": real})
	_, missing := rt.App.Call(t.Context(), mallory, "task_get", map[string]any{"task_id": strings.Repeat("0", 32)})
	if foreign == nil || missing == nil || foreign.Error() != missing.Error() {
		t.Fatalf("foreign %v, missing %v", foreign, missing)
	}
	if got, err := rt.App.Call(t.Context(), alice, "task_get", map[string]any{"task_id": real}); err != nil || got.Structured()["status"] != "working" {
		t.Fatalf("alice's timer: %v %v", got.Structured(), err)
	}
}

// TestTimerArgumentCorpus: delays, intervals and payloads outside the
// bounds are refused as invalid and leave nothing pending; hostile text in
// an accepted payload comes back sanitized.
func TestTimerArgumentCorpus(t *testing.T) {
	rt, _ := app(t)
	alice := ports.NewPrincipal("alice", "tasks:read", "tasks:write")
	deep := map[string]any{}
	for cur, i := deep, 0; i < 100; i++ {
		next := map[string]any{}
		cur["d"], cur = next, next
	}
	wide := map[string]any{}
	for i := range 5000 {
		wide[strings.Repeat("k", 1+i%7)+string(rune('a'+i%26))+strings.Repeat("x", i/182)] = i
	}
	for _, args := range []map[string]any{
		{"delay_seconds": -0.001}, {"delay_seconds": -1e308}, {"delay_seconds": 1e308}, {"delay_seconds": 86400.001},
		{"delay_seconds": "60"}, {"delay_seconds": true}, {"delay_seconds": nil}, {"delay_seconds": []any{60}}, {},
		{"delay_seconds": 1, "repeat_seconds": 59.999}, {"delay_seconds": 1, "repeat_seconds": 0}, {"delay_seconds": 1, "repeat_seconds": -60},
		{"delay_seconds": 1, "repeat_seconds": 1e308}, {"delay_seconds": 1, "repeat_seconds": "60"},
		{"delay_seconds": 1, "payload": "text"}, {"delay_seconds": 1, "payload": 42}, {"delay_seconds": 1, "payload": []any{}},
		{"delay_seconds": 1, "payload": map[string]any{"big": strings.Repeat("x", 16384)}},
		{"delay_seconds": 1, "payload": deep}, {"delay_seconds": 1, "payload": wide},
		{"delay_seconds": 1, "owner": "bob"}, {"delay_seconds": 1, "task_id": strings.Repeat("0", 32)},
	} {
		_, err := rt.App.Call(t.Context(), alice, "task_schedule", args)
		te, ok := catalog.AsToolError(err)
		if !ok || te.Kind != catalog.KindValidation {
			raw, _ := json.Marshal(args)
			t.Errorf("task_schedule(%.120s) = %v", raw, err)
		}
	}
	res, err := rt.App.Call(t.Context(), alice, "task_list", map[string]any{})
	if err != nil || len(res.Structured()["tasks"].([]any)) != 0 {
		t.Fatalf("a refused timer was recorded: %v %v", res.Structured(), err)
	}
	res, err = rt.App.Call(t.Context(), alice, "task_schedule", map[string]any{"delay_seconds": 0,
		"payload": map[string]any{"note\u202e": "\x1b[31mred\u200b <script>", "n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Structured()["task_id"]
	for {
		got, err := rt.App.Call(t.Context(), alice, "task_get", map[string]any{"task_id": id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Structured()["status"] == "working" {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		raw, _ := json.Marshal(got.Structured())
		if strings.ContainsAny(string(raw), "\x1b\u202e\u200b") || strings.Contains(got.Text, "\x1b") {
			t.Fatalf("an unsanitized payload came back: %s", raw)
		}
		break
	}
}
