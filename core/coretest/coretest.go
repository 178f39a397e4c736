// Package coretest helps tests assemble a core.App around probe
// components and call it. Nothing here is wired into a running server.
package coretest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// Deps are the dependencies of an App serving members under s with test
// doubles: authorizer, a counting rate store, a recording audit sink,
// no-op telemetry and the system clock.
func Deps(s *settings.Settings, authorizer ports.Authorizer, members ...core.Member) core.Deps {
	return core.Deps{Settings: s, Authorizer: authorizer, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{}, Families: members}
}

// Family serves c (bound tools, resources, prompts) as a family with no
// ports, under id.
func Family(id catalog.Family, c core.Components) core.Member { return core.Assembled(id, c) }

// Tools serves tools as a core-family member.
func Tools(tools ...catalog.ToolSpec) core.Member {
	return Family(catalog.FamilyCore, core.Components{Tools: tools})
}

// Call runs tool as p through app's guard chain, failing the test on an
// error that is not a deliberate refusal; te is the refusal, if any.
func Call(t testing.TB, app *core.App, p ports.Principal, tool string, args map[string]any, opts ...core.CallOption) (res catalog.Result, te *catalog.ToolError) {
	t.Helper()
	res, err := app.Call(t.Context(), p, tool, args, opts...)
	if err == nil {
		return res, nil
	}
	te, ok := catalog.AsToolError(err)
	if !ok {
		t.Fatalf("%s: non-ToolError %v", tool, err)
	}
	return res, te
}

// WriteFiles writes files (slash-separated relative path to content) under
// root, creating directories as needed.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Settings loads settings from env alone (the process environment is not
// read), failing the test when they do not load.
func Settings(t testing.TB, env map[string]string) *settings.Settings {
	t.Helper()
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("settings: %v", err)
	}
	return s
}
