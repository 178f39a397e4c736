package settings

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFill: every conversion a Config needs, from the values Load parsed.
func TestFill(t *testing.T) {
	s, err := load(map[string]string{"ARROWHEAD_EXEC_ENABLED": "true", "ARROWHEAD_EXEC_WALL_SECONDS": "1.5",
		"ARROWHEAD_READ_FILE_MAX_BYTES": "77", "ARROWHEAD_DOC_ALLOWED_EXTENSIONS": ".md", "ARROWHEAD_PROFILE": "core"})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Enabled bool          `setting:"ARROWHEAD_EXEC_ENABLED"`
		Wall    time.Duration `setting:"ARROWHEAD_EXEC_WALL_SECONDS"`
		Seconds float64       `setting:"ARROWHEAD_EXEC_WALL_SECONDS"`
		Bytes   int64         `setting:"ARROWHEAD_READ_FILE_MAX_BYTES"`
		Ext     []string      `setting:"ARROWHEAD_DOC_ALLOWED_EXTENSIONS"`
		Nested  struct {
			Profile string `setting:"ARROWHEAD_PROFILE"`
		}
		Untagged int
	}
	if err := s.Fill(&c); err != nil {
		t.Fatal(err)
	}
	if !c.Enabled || c.Wall != 1500*time.Millisecond || c.Seconds != 1.5 || c.Bytes != 77 ||
		!slices.Equal(c.Ext, []string{".md"}) || c.Nested.Profile != "core" || c.Untagged != 0 {
		t.Fatalf("filled %+v", c)
	}
}

// TestFillRefusesWhatItCannotFill: a tag naming no variable (or a
// ceiling, which has no field), a field that cannot hold its variable and
// an unexported tagged field are errors naming the field.
func TestFillRefusesWhatItCannotFill(t *testing.T) {
	s := Defaults()
	var unknown struct {
		X int `setting:"ARROWHEAD_NO_SUCH_VARIABLE"`
	}
	var ceiling struct {
		X int `setting:"ARROWHEAD_CALCULATE_PER_MINUTE"`
	}
	var mistyped struct {
		X string `setting:"ARROWHEAD_PORT"`
	}
	var duration struct {
		X time.Duration `setting:"ARROWHEAD_PORT"`
	}
	var hidden struct {
		x int `setting:"ARROWHEAD_PORT"`
	}
	for name, dst := range map[string]any{"unknown": &unknown, "ceiling": &ceiling, "mistyped": &mistyped,
		"duration from an integer": &duration, "unexported": &hidden, "not a pointer": unknown} {
		if err := s.Fill(dst); err == nil || (name != "not a pointer" && !strings.Contains(err.Error(), ".X") && !strings.Contains(err.Error(), ".x")) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	_ = hidden.x
}

// TestEveryFieldVariableIsFillable: each variable the table parses into a
// Settings field can be named by a tag.
func TestEveryFieldVariableIsFillable(t *testing.T) {
	s := Defaults()
	for _, v := range s.vars() {
		if _, ok := fieldOf()[v.Name]; ok != (v.dst != nil) {
			t.Errorf("%s: field %v, fillable %v", v.Name, v.dst != nil, ok)
		}
	}
}
