package wire_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestAuditLogIsChainedAndClosedAtShutdown: calls through a built server
// write chained lines, closing the runtime writes the final checkpoint,
// and the chain verifies with the data directory's attestation key.
func TestAuditLogIsChainedAndClosedAtShutdown(t *testing.T) {
	data := t.TempDir()
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": data, "ARROWHEAD_AUDIT_CHECKPOINT_LINES": "2"})
	var audit coretest.SyncBuffer
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: &audit})
	if err != nil {
		t.Fatal(err)
	}
	caller := ports.NewPrincipal("service:etl", "tools:read")
	for _, expr := range []string{"1 + 1", "2 * 3", "7 - 4"} {
		if _, err := rt.App.Call(t.Context(), caller, "calculate", map[string]any{"expression": expr}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	key, err := signing.Load("", data)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.PublicKeyOf(key.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := telemetry.VerifyAuditLog([]telemetry.AuditInput{{Name: "audit.log", R: strings.NewReader(audit.String())}},
		func(token []byte) ([]byte, error) { return signing.Verify(token, pub) })
	if err != nil {
		t.Fatal(err)
	}
	// Three calls, a checkpoint after the second (ARROWHEAD_AUDIT_CHECKPOINT_LINES),
	// the shutdown checkpoint.
	if len(rep.Findings) != 0 || len(rep.Chains) != 1 || !rep.Chains[0].Closed || rep.Chains[0].Lines != 5 || rep.Chains[0].Checkpoints != 2 {
		t.Fatalf("chains %+v findings %v\n%s", rep.Chains, rep.Findings, audit.String())
	}
}
