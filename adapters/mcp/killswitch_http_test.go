package mcp

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/ports"
)

// TestKillSwitchListChangedOverStreamableHTTP is the HTTP leg of the
// kill switch's listing (test/e2e covers stdio): a session of the
// stateful streamable transport with its stream open hears
// notifications/tools/list_changed when a rule is thrown and again when
// it is lifted, and its next tools/list follows the rule.
func TestKillSwitchListChangedOverStreamableHTTP(t *testing.T) {
	s := slowServer(t, 0)
	addr := serveHTTP(t, s, HTTPOptions{})
	tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var changed atomic.Int32
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationToolsListChanged {
			changed.Add(1)
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	listed := func() []string {
		t.Helper()
		res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	if !slices.Contains(listed(), "calculate") {
		t.Fatal("calculate is not listed before the rule")
	}
	// The GET stream opens asynchronously after initialize; a throw before
	// it is open would be heard by nobody, so wait for the stream first.
	waitFor := func(what string, n int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for changed.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("no notifications/tools/list_changed after the %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	ctx := context.Background()
	var rule ports.KillRule
	deadline := time.Now().Add(5 * time.Second)
	for changed.Load() == 0 {
		// Throw, and lift if the stream missed it, until one is heard.
		if rule.ID != "" {
			if _, err := s.app.LiftKill(ctx, ports.Operator(), rule.ID); err != nil {
				t.Fatal(err)
			}
		}
		if rule, err = s.app.ThrowKill(ctx, ports.Operator(), ports.KillRule{Tool: "calculate", Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no notifications/tools/list_changed after the throw")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if slices.Contains(listed(), "calculate") {
		t.Fatal("the session still lists calculate under the rule")
	}
	before := changed.Load()
	if _, err := s.app.LiftKill(ctx, ports.Operator(), rule.ID); err != nil {
		t.Fatal(err)
	}
	waitFor("lift", before+1)
	if !slices.Contains(listed(), "calculate") {
		t.Fatal("calculate is not listed again after the lift")
	}
}
