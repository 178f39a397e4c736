package conformance_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

var update = flag.Bool("update", false, "regenerate golden files")

const goldenCatalog = "testdata/catalog.golden.json"

// defaultListing is the catalog under the default environment, rendered
// exactly as `arrowhead list-tools --json` prints it.
func defaultListing(t *testing.T) []byte {
	t.Helper()
	l, err := wire.Catalog(t.Context(), settings.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGoldenCatalog pins the client-visible surface: a changed description,
// schema, scope, ceiling or annotation fails until the fixture is
// regenerated on purpose with -update.
func TestGoldenCatalog(t *testing.T) {
	got := defaultListing(t)
	if *update {
		if err := os.WriteFile(goldenCatalog, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenCatalog)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the tool surface changed; review the diff and regenerate with: go test ./test/conformance -run Golden -update")
	}
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
