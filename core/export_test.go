package core

import (
	"context"
	"encoding/json"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/internal/chain"
	"github.com/arrowhead-go/arrowhead/ports"
)

// InvokeTool runs a tool's handler without the guard chain. Only a
// benchmark's baseline needs that: what the chain adds is the difference.
func InvokeTool(t catalog.ToolSpec, ctx context.Context, call catalog.Call, raw json.RawMessage, args map[string]any) (catalog.Result, error) {
	return t.Invoke(ctx, chain.Admit(), call, raw, args)
}

// KillStage runs only the chain's kill-switch stage (canary scan, static
// switch, live rules) for a tool call with decoded args, for the
// benchmark of what that stage costs.
func (a *App) KillStage(p ports.Principal, tool string, args map[string]any) bool {
	e := a.tools[tool]
	adm := admission{name: tool, killNames: []string{tool}}
	adm.target = killTarget{names: adm.killNames, family: e.spec.Family(), egress: e.spec.Annotations().OpenWorld}
	if a.canaries.Len() > 0 {
		adm.canary = func() (canaryHit, bool) { return a.scanArgs(args, e.spec.Input()) }
	}
	return a.killStage(context.Background(), p, adm) == nil
}
