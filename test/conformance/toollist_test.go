package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestToolListCarriesTheListedSchemas checks that tools/list, answered by
// mcp-go from the schemas the adapter renders, carries byte for byte the
// schemas the listing and the snapshots hold (encoding/json's rendering of
// each schema's map), for every tool with every family gate open.
func TestToolListCarriesTheListedSchemas(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "sandbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_EXEC_ENABLED": "true",
		"ARROWHEAD_NOTIFY_ALLOWLIST": "https://hooks.example.com/notify",
		"ARROWHEAD_JAIL_ROOT":        filepath.Join(base, "sandbox"), "ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"), "ARROWHEAD_DATA_DIR": filepath.Join(base, "data"),
		// Not the package directory: the runner writes its identity files
		// there, and the sandbox uid must reach it.
		"ARROWHEAD_EXEC_WORKDIR": sandboxtest.Workdir(t)}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	srv := mcpadapter.New(rt.App, mcpadapter.Options{Name: "conformance", Version: "1",
		Principal: func(context.Context) ports.Principal { return ports.Operator() }})
	answer, err := json.Marshal(srv.MCPServer().HandleMessage(t.Context(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &listed); err != nil {
		t.Fatal(err)
	}
	want := map[string]wire.ListedTool{}
	for _, tool := range wire.ListingOf(rt.App).Tools {
		want[tool.Name] = tool
	}
	if len(listed.Result.Tools) != len(want) {
		t.Fatalf("tools/list has %d tools, the listing %d", len(listed.Result.Tools), len(want))
	}
	for _, got := range listed.Result.Tools {
		w, ok := want[got.Name]
		if !ok {
			t.Errorf("tools/list has %s, the listing does not", got.Name)
			continue
		}
		for _, pair := range []struct {
			what      string
			got       json.RawMessage
			wantValue map[string]any
		}{{"input", got.InputSchema, w.InputSchema}, {"output", got.OutputSchema, w.OutputSchema}} {
			wantJSON, err := json.Marshal(pair.wantValue)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pair.got, wantJSON) {
				t.Errorf("%s: the %s schema on the wire differs from the listing's\nwire    %s\nlisting %s", got.Name, pair.what, pair.got, wantJSON)
			}
		}
	}
}
