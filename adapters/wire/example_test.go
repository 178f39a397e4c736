package wire_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// ExampleBuild embeds the whole server, every family and store the
// settings select, in a Go program: the call runs the same guard chain as
// a request over stdio or HTTP. (core's package example embeds core.New
// with the embedder's own family and adapters instead.)
func ExampleBuild() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "arrowhead-example-")
	defer os.RemoveAll(dir)
	_ = os.Mkdir(filepath.Join(dir, "sandbox"), 0o700)
	env := map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_JAIL_ROOT": filepath.Join(dir, "sandbox"),
		"ARROWHEAD_DOCS_ROOT": filepath.Join(dir, "documents"), "ARROWHEAD_DATA_DIR": filepath.Join(dir, "data")}
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := wire.Build(ctx, s, wire.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close(ctx)

	caller := ports.NewPrincipal("service:etl", "tools:read")
	res, err := rt.App.Call(ctx, caller, "calculate", map[string]any{"expression": "2 * (3 + 4)"})
	fmt.Println(res.Text, err)

	// No principal: anonymous, denied every scoped component.
	_, err = rt.App.Call(ctx, ports.Anonymous(), "calculate", map[string]any{"expression": "1 + 1"})
	te, _ := catalog.AsToolError(err)
	fmt.Println(te.Kind, te.Message)
	// Output:
	// 14 <nil>
	// unauthenticated Unknown tool.
}
