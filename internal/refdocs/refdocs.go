// Package refdocs generates the reference documentation from the code: the
// tool reference from the declared catalog (the listing `arrowhead
// list-tools --json` prints), the configuration reference and the annotated
// .env.example from the settings table, and the settings table's rows for
// the tools' own per-minute ceilings (core/settings/ceilings.go) from the
// tools' definitions. Nothing in the four files is written by hand;
// `arrowhead docs` writes them and a conformance test fails when the
// committed files differ from what this package generates.
//
// The output is deterministic: it depends on the code only, never on the
// environment, a .env file, the clock or the machine.
package refdocs

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Command regenerates the files, run from the repository root.
const Command = "go run ./cmd/arrowhead docs"

// The generated files, relative to the repository root.
const (
	ToolsPath         = "docs/reference/tools.md"
	ConfigurationPath = "docs/reference/configuration.md"
	EnvExamplePath    = ".env.example"
)

// File is one generated file.
type File struct {
	Path string
	Body []byte
}

// Files generates every reference file, in a fixed order.
func Files(ctx context.Context) ([]File, error) {
	s, err := settings.Load(func(name string) (string, bool) {
		v, ok := wire.EveryFamilyEnv()[name]
		return v, ok
	})
	if err != nil {
		return nil, fmt.Errorf("the configuration that serves every family: %w", err)
	}
	listing, err := wire.Catalog(ctx, s)
	if err != nil {
		return nil, err
	}
	tools, err := RenderTools(listing, wire.Gates())
	if err != nil {
		return nil, err
	}
	declared, err := wire.Ceilings(ctx, s)
	if err != nil {
		return nil, err
	}
	rows, err := ceilingRows(declared)
	if err != nil {
		return nil, err
	}
	ceilings, err := renderCeilings(rows)
	if err != nil {
		return nil, err
	}
	// The references document the rows just generated, so one run brings
	// all four files up to date.
	docs := settings.DocsWith(rows)
	return []File{
		{Path: ToolsPath, Body: tools},
		{Path: ConfigurationPath, Body: renderConfiguration(docs)},
		{Path: EnvExamplePath, Body: renderEnvExample(docs)},
		{Path: settings.CeilingsPath, Body: ceilings},
	}, nil
}
