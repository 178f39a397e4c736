package telemetry

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// TestEgressRefusalIsAuditedAndScraped: the exfiltration guard's refusal is
// one audit line (refusal egress_guard, egress saying what it found) and
// one arrowhead_refusals_total sample under its kind.
func TestEgressRefusalIsAuditedAndScraped(t *testing.T) {
	ctx := context.Background()
	tel, err := Setup(ctx, Config{Prometheus: true, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	srv := httptest.NewServer(tel.MetricsHandler())
	t.Cleanup(srv.Close)

	type reply = *catalog.Reply[probeOutput]
	page := probeTool(t, "probe_page", func(context.Context, catalog.Call, probeInput) (reply, error) {
		fr := content.Frame("an untrusted page", content.NewSource("url", "https://pages.example/", "text", []byte("x")))
		return catalog.Answer(probeOutput{}, fr.Text), nil
	})
	out := catalog.Define[probeInput, probeOutput](catalog.ToolDef{
		Name: "probe_out", Family: catalog.FamilyCore, Scope: probeScope,
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_PROBE_OUT_PER_MINUTE", Default: 600},
		Description: "Sends out. Example: probe_out(text=\"x\").",
		Annotations: catalog.Annotations{OpenWorld: true},
	}).Bind(func(context.Context, catalog.Call, probeInput) (reply, error) {
		return catalog.Answer(probeOutput{}, "sent"), nil
	})
	var audit bytes.Buffer
	app, err := core.New(core.Deps{
		Settings: settings.Defaults(), Authorizer: portstest.AllowAll{}, Rates: &unlimited{},
		Audit: NewAuditSink(&audit), Tracer: tel.Tracer(), Metrics: tel.Metrics(), Clock: ports.SystemClock{},
		Families: []core.Member{coretest.Tools(page, out)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := ports.NewPrincipal("alice", probeScope)
	got, err := app.Call(ctx, p, "probe_page", map[string]any{"text": "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.Call(ctx, p, "probe_out", map[string]any{"text": got.Text})
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindEgressGuard {
		t.Fatalf("got %v, want an egress_guard refusal", err)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"refusal":"egress_guard"`) || !strings.Contains(last, `"egress":"frame_phrase"`) || strings.Contains(last, "untrusted page") {
		t.Fatalf("audit line %s", last)
	}
	families, err := telemetrytest.Scrape(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if n := telemetrytest.Count(families[promRefusals], map[string]string{AttrName: "probe_out", AttrRefusal: "egress_guard"}); n != 1 {
		t.Fatalf("%s{refusal=egress_guard} = %v, want 1", promRefusals, n)
	}
}
