package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/security"
)

func TestKillNeedsASharedBoard(t *testing.T) {
	t.Setenv("ARROWHEAD_REDIS_URL", "")
	t.Setenv("ARROWHEAD_STATE_DSN", "")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"kill", "list"}, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no shared kill-switch board") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	for _, args := range [][]string{{"kill"}, {"kill", "explode"}, {"canary"}, {"canary", "old"}} {
		stderr.Reset()
		if code := run(args, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "usage:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

func TestParseFor(t *testing.T) {
	for in, want := range map[string]string{"90": "1m30s", "30m": "30m0s", "2h": "2h0m0s"} {
		d, err := parseFor(in)
		if err != nil || d.String() != want {
			t.Errorf("parseFor(%q) = %v, %v", in, d, err)
		}
	}
	for _, in := range []string{"", "0", "-5m", "soon"} {
		if _, err := parseFor(in); err == nil {
			t.Errorf("parseFor(%q) accepted", in)
		}
	}
}

func TestCanaryNewAppendsToTheCanaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "canaries")
	var stdout, stderr bytes.Buffer
	for range 2 {
		if code := run([]string{"canary", "new", "--host", "files.corp.example", "--append", path}, nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	if strings.Contains(stdout.String(), "ARROWHEAD_CANARY_TOKENS=") || !strings.Contains(stdout.String(), "https://files.corp.example/share/") {
		t.Fatalf("stdout %q", stdout.String())
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("canary file: %v %v", info, err)
	}
	raw, _ := os.ReadFile(path)
	tokens := strings.Fields(string(raw))
	if len(tokens) != 8 {
		t.Fatalf("canary file holds %d values: %q", len(tokens), raw)
	}
	c, err := security.NewCanaries(tokens)
	if err != nil {
		t.Fatal(err)
	}
	// Every planted line printed is caught by the values written.
	for _, line := range strings.Split(stdout.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "# Plant") || strings.HasPrefix(line, "# The values") {
			continue
		}
		if _, ok := c.Match(line); !ok {
			t.Errorf("planted line %q is not matched", line)
		}
	}
}
