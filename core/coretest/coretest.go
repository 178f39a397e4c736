// Package coretest helps tests assemble a core.App around probe
// components. Nothing here is wired into a running server.
package coretest

import (
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Family serves c (bound tools, resources, prompts) as a family with no
// ports, under id.
func Family(id catalog.Family, c core.Components) core.Member {
	components := func(*settings.Settings) core.Components { return c }
	return core.Family[struct{}]{
		ID:      id,
		Declare: components,
		Bind:    func(s *settings.Settings, _ struct{}) core.Components { return components(s) },
	}.With(struct{}{})
}

// Tools serves tools as a core-family member.
func Tools(tools ...catalog.ToolSpec) core.Member {
	return Family(catalog.FamilyCore, core.Components{Tools: tools})
}
