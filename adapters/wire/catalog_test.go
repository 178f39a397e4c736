package wire

import (
	"strconv"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// TestPerMinuteDefaultsMatchTheSettingsTable: a tool's per-minute default
// lives in its definition; the settings table carries the seed's copy of
// every ARROWHEAD_*_PER_MINUTE variable (check-config prints it, and the
// seed lists tools not built yet). This proves the two agree for every
// tool of every family, gates open.
func TestPerMinuteDefaultsMatchTheSettingsTable(t *testing.T) {
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_EXEC_ENABLED": "true",
		"ARROWHEAD_NOTIFY_ALLOWLIST": "https://hooks.example.com/x"}
	s := coretest.Settings(t, env)
	app, err := declaredApp(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Tools()) == 0 {
		t.Fatal("no tools")
	}
	for _, tool := range app.Tools() {
		c := tool.Spec.Ceiling()
		def, ok := settings.DefaultOf(c.Var)
		if !ok {
			t.Errorf("%s: %s is not in the settings table", tool.Spec.Name(), c.Var)
			continue
		}
		if def != strconv.Itoa(c.Default) {
			t.Errorf("%s: the definition says %d per minute, the settings table %s=%s", tool.Spec.Name(), c.Default, c.Var, def)
		}
	}
}
