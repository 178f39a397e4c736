package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigRefusesStateInsideAServedRoot: check-config, which has no
// side effects, reports the nesting serve would refuse at start.
func TestCheckConfigRefusesStateInsideAServedRoot(t *testing.T) {
	base := t.TempDir()
	t.Setenv("ARROWHEAD_JAIL_ROOT", base)
	t.Setenv("ARROWHEAD_DATA_DIR", filepath.Join(base, "data"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check-config"}, strings.NewReader(""), &stdout, &stderr); code != exitFailure ||
		!strings.Contains(stderr.String(), "invalid configuration: ARROWHEAD_DATA_DIR lies inside ARROWHEAD_JAIL_ROOT") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	t.Setenv("ARROWHEAD_DATA_DIR", filepath.Join(t.TempDir(), "data"))
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"check-config"}, strings.NewReader(""), &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "ARROWHEAD_DATA_DIR=") {
		t.Fatalf("side by side: exit %d, stderr %q", code, stderr.String())
	}
}
