// Package coretools is the core family: safe_fetch, calculate and
// read_file, the general-purpose utilities every profile serves.
package coretools

import (
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Deps are what the core family needs.
type Deps struct {
	Settings *settings.Settings
	// Egress performs SSRF-guarded outbound HTTP for safe_fetch.
	Egress ports.Egress
	// Sandbox is the read_file jail.
	Sandbox ports.FileJail
}

// Tools returns the core family's tools.
func Tools(d Deps) []catalog.ToolSpec {
	return []catalog.ToolSpec{SafeFetch(d), Calculate(d), ReadFile(d)}
}
