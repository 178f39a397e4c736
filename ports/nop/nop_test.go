package nop_test

import (
	"context"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

func TestNopPorts(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{}{}, "v")
	got, span := nop.Tracer{}.Start(ctx, ports.ComponentTool, "x", ports.TraceCarrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	if got != ctx || span.TraceID() != "" {
		t.Fatalf("the span reports trace id %q, or the context changed", span.TraceID())
	}
	span.End("ok", "")
	for range 3 {
		d, err := nop.Unlimited{}.Take(ctx, "k", 1)
		if err != nil || !d.Allowed {
			t.Fatalf("Unlimited refused a call: %+v %v", d, err)
		}
	}
	// The egress guard must not mistake Unlimited for a flow store that
	// remembers (see the package comment).
	if _, ok := any(nop.Unlimited{}).(ports.FlowStore); ok {
		t.Fatal("Unlimited claims to keep flow marks")
	}
}
