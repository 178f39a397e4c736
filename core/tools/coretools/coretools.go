// Package coretools is the core family: safe_fetch, calculate and
// read_file, the general-purpose utilities every profile serves.
package coretools

import (
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the core family's tools use.
type Ports struct {
	// Egress performs safe_fetch's SSRF-guarded outbound HTTP.
	Egress ports.Egress
	// Sandbox is read_file's jail.
	Sandbox ports.FileJail
}

// Family is the core family.
var Family = core.LegacyFamily[Ports]{
	ID: catalog.FamilyCore,
	Declare: func(s *settings.Settings) core.Components {
		return core.Components{Tools: []catalog.ToolSpec{safeFetch(s).Spec(), calculate(s).Spec(), readFile(s).Spec()}}
	},
	Bind: func(s *settings.Settings, p Ports) core.Components {
		return core.Components{Tools: []catalog.ToolSpec{
			safeFetch(s).Bind(fetcher{settings: s, egress: p.Egress}.fetch),
			calculate(s).Bind(calculator{maxLen: s.ExpressionMaxLength}.calculate),
			readFile(s).Bind(fileReader{maxBytes: int64(s.ReadFileMaxBytes), jail: p.Sandbox}.read),
		}}
	},
}
