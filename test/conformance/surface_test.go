package conformance_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

var update = flag.Bool("update", false, "regenerate golden files")

// surfaceDir holds one snapshot per tool, resource and prompt.
const surfaceDir = "testdata/surface"

// defaultListing is the catalog under the default environment, rendered
// exactly as `arrowhead list-tools --json` prints it.
func defaultListing(t *testing.T) []byte {
	t.Helper()
	return listing(t, settings.Defaults())
}

func listing(t *testing.T, s *settings.Settings) []byte {
	t.Helper()
	l, err := wire.Catalog(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return indented(t, l)
}

func indented(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// catalogUnder is the catalog under the variables env sets, every other at
// its default.
func catalogUnder(t *testing.T, env map[string]string) wire.Listing {
	t.Helper()
	s := coretest.Settings(t, env)
	l, err := wire.Catalog(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// surface is every snapshot file under the full profile with every family
// gate open, so each tool has one: its path under surfaceDir and content.
func surface(t *testing.T) map[string][]byte {
	t.Helper()
	l := catalogUnder(t, wire.EveryFamilyEnv())
	files := map[string][]byte{"integrity.json": indented(t, map[string]any{"algorithm": "sha256", "digest": l.Integrity})}
	for _, tool := range l.Tools {
		files[filepath.Join("tools", tool.Name+".json")] = indented(t, tool)
	}
	for _, r := range l.Resources {
		files[filepath.Join("resources", r.Name+".json")] = indented(t, r)
	}
	for _, p := range l.Prompts {
		files[filepath.Join("prompts", p.Name+".json")] = indented(t, p)
	}
	return files
}

// TestSurfaceSnapshots pins the client-visible surface, one file per tool,
// resource and prompt: a changed description, schema, scope, ceiling or
// annotation fails with a diff until the snapshots are regenerated on
// purpose.
func TestSurfaceSnapshots(t *testing.T) {
	want := surface(t)
	if *update {
		if err := os.RemoveAll(surfaceDir); err != nil {
			t.Fatal(err)
		}
		for name, body := range want {
			path := filepath.Join(surfaceDir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const regenerate = "review the change and regenerate with: go test ./test/conformance -update"
	var stale []string
	err := filepath.WalkDir(surfaceDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(surfaceDir, path)
		if _, ok := want[rel]; !ok {
			stale = append(stale, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v (%s)", err, regenerate)
	}
	for _, name := range stale {
		t.Errorf("%s snapshots a component that no longer exists; %s", name, regenerate)
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(surfaceDir, name))
		if err != nil {
			t.Errorf("%s has no snapshot; %s", name, regenerate)
			continue
		}
		if !bytes.Equal(got, want[name]) {
			t.Errorf("%s changed; %s\n%s", name, regenerate, lineDiff(string(got), string(want[name])))
		}
	}
}

// lineDiff renders the lines only in old (-, the committed file) or only in
// new (+, what the code generates now), with the unchanged lines around each
// change, from a longest common subsequence.
func lineDiff(old, new string) string {
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	const context = 2
	var out strings.Builder
	out.WriteString("--- committed\n+++ generated\n")
	last := -1
	for k, l := range lines {
		near := false
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			near = near || lines[d].op != ' '
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			out.WriteString("  ...\n")
		}
		out.WriteByte(l.op)
		out.WriteString(" ")
		out.WriteString(l.text)
		out.WriteByte('\n')
		last = k
	}
	return out.String()
}

// Description cost: every connected model pays for the tool list in its
// context. The estimate is the JSON a client receives per tool (name,
// description, input schema, annotations) at about four bytes a token.
const (
	maxAvgTokensPerTool = 260
	maxTokensPerTool    = 600
	bytesPerToken       = 4
)

func TestDescriptionCost(t *testing.T) {
	var l wire.Listing
	if err := json.Unmarshal(defaultListing(t), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Tools) == 0 {
		t.Fatal("no tools")
	}
	total := 0
	for _, tool := range l.Tools {
		b, _ := json.Marshal(map[string]any{
			"name": tool.Name, "description": tool.Description,
			"inputSchema": tool.InputSchema, "annotations": tool.Annotations,
		})
		tokens := len(b) / bytesPerToken
		if tokens > maxTokensPerTool {
			t.Errorf("%s costs about %d tokens (ceiling %d)", tool.Name, tokens, maxTokensPerTool)
		}
		total += tokens
	}
	avg := total / len(l.Tools)
	t.Logf("%d tools, about %d tokens each on average", len(l.Tools), avg)
	if avg > maxAvgTokensPerTool {
		t.Fatalf("average description cost %d tokens per tool exceeds the ceiling %d", avg, maxAvgTokensPerTool)
	}
}
