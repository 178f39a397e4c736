package e2e

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestTimerOfAKilledServerFiresOnceInASurvivor runs three stdio servers
// on one data directory: a repeating timer scheduled through the first,
// which is then SIGKILLed, fires in a survivor, exactly once between the
// two (a second firing would leave a second next occurrence), and both
// survivors read the same outcome.
func TestTimerOfAKilledServerFiresOnceInASurvivor(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ARROWHEAD_PROFILE": "docs"}
	first, proc, err := startStdioProcess(t, dir, env)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	second, _, err := startStdioProcess(t, dir, env)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	third, _ := startStdioIn(t, dir, env)

	r := call(t, first, "task_schedule", map[string]any{"delay_seconds": 2, "repeat_seconds": 600, "payload": map[string]any{"n": 1}})
	timer := structured(r)
	if r.IsError || timer["status"] != "working" {
		t.Fatalf("task_schedule: %s", text(r))
	}
	if r := call(t, second, "task_get", map[string]any{"task_id": timer["task_id"]}); structured(r)["status"] != "working" {
		t.Fatalf("the second server reads the timer as %s", text(r))
	}
	if err := proc.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = proc.Wait()

	fired := awaitTask(t, second, timer["task_id"])
	result, _ := fired["result"].(map[string]any)
	payload, _ := result["payload"].(map[string]any)
	if fired["status"] != "completed" || payload["n"] != float64(1) || result["next_task_id"] == nil {
		t.Fatalf("the fired timer: %#v", fired)
	}
	for _, c := range []*client.Client{second, third} {
		r := call(t, c, "task_list", map[string]any{})
		list, _ := structured(r)["tasks"].([]any)
		pending := 0
		for _, task := range list {
			if task.(map[string]any)["status"] == "working" {
				pending++
			}
		}
		if r.IsError || len(list) != 2 || pending != 1 {
			t.Fatalf("after one firing the list is %s", text(r))
		}
		got, _ := structured(call(t, c, "task_get", map[string]any{"task_id": timer["task_id"]}))["result"].(map[string]any)
		if got["next_task_id"] != result["next_task_id"] {
			t.Fatalf("the survivors disagree on the next occurrence: %#v", got)
		}
	}
}
