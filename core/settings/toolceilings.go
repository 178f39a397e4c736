package settings

import (
	"slices"
	"strconv"
)

// CeilingsPath is the generated file that holds the tools' ceiling rows,
// relative to the repository root.
const CeilingsPath = "core/settings/ceilings.go"

// ToolCeiling is one tool's per-minute ceiling as a row of the settings
// table. The rows are generated into ceilings.go from the tools'
// definitions (catalog.ToolDef.Ceiling, where the default is written) by
// `go run ./cmd/arrowhead docs`, and a conformance test fails while the
// file differs from what the definitions generate. The settings package
// cannot read the definitions itself: the tool packages import it.
type ToolCeiling struct {
	Var     string
	Default int
	Meaning string
}

// ToolCeilings returns the tools' ceiling rows, in table order.
func ToolCeilings() []ToolCeiling { return slices.Clone(toolCeilings) }

// toolLimits are the table's rows for ceilings. Load records such a
// variable in Limits only when it is set: otherwise Limit falls back to the
// default the tool's definition states, so even a ceilings.go not yet
// regenerated never overrides a definition.
func (s *Settings) toolLimits(ceilings []ToolCeiling) []*Var {
	out := make([]*Var, len(ceilings))
	for i, c := range ceilings {
		v := s.limit(c.Var, strconv.Itoa(c.Default)).means(c.Meaning)
		v.defaultElsewhere = true
		out[i] = v
	}
	return out
}
