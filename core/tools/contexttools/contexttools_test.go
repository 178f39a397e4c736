package contexttools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	afs "github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/adapters/tokenizer"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/contexttools"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

var (
	alice = ports.NewPrincipal("alice", "context:read", "context:write")
	bob   = ports.NewPrincipal("bob", "context:read", "context:write")
)

// testPolicy lets everyone read and search the corpus and src/ of the
// repository, but nothing under private/ in either; only alice may index
// into and query the doc_chunks collection.
const testPolicy = `{"grants": [
  {"subject": "*", "actions": ["read", "search"], "kinds": ["document"], "prefix": "public/"},
  {"subject": "*", "actions": ["read", "search"], "kinds": ["repo_file"], "prefix": "src/"},
  {"subject": "alice", "actions": ["query", "ingest"], "kinds": ["table"], "prefix": "doc_chunks"}
]}`

type env struct {
	app        *core.App
	docs, repo string
	sets       *portstest.WorkingSets
	// index and embedder are set with vectors (buildEnv).
	index    *vectorindex.VectorIndex
	embedder ports.Embedder
}

func newEnv(t testing.TB, vars map[string]string, docs, repo map[string]string) env {
	t.Helper()
	return buildEnv(t, vars, docs, repo, noVectors)
}

// What vector retrieval a test environment has.
type vectorMode int

const (
	noVectors vectorMode = iota
	// deterministicVectors: the embedded index with the deterministic,
	// non-semantic embedder, as a server has by default.
	deterministicVectors
	// semanticVectors: the same, with the embedder standing in for a
	// semantic one (semanticStandIn), to exercise how vector hits join
	// the ranking.
	semanticVectors
)

// semanticStandIn is the deterministic embedder claiming to be semantic.
// Its vectors still only reflect shared words and trigrams, which is all
// the tests of the merge need; no test here relies on meaning.
type semanticStandIn struct{ ports.Embedder }

func (semanticStandIn) Semantic() bool { return true }

// buildEnv is the context family over a real corpus, repository and
// tokenizer; with vectors, also the embedded vector index, the
// deterministic embedder (or its semantic stand-in) and the data family's
// doc_index that fills it.
func buildEnv(t testing.TB, vars map[string]string, docs, repo map[string]string, vectors vectorMode) env {
	t.Helper()
	docsDir, repoDir := t.TempDir(), t.TempDir()
	coretest.WriteFiles(t, docsDir, docs)
	coretest.WriteFiles(t, repoDir, repo)
	all := map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_RATE_LIMIT_ENABLED": "false", "ARROWHEAD_AUTHZ_POLICY": testPolicy}
	for k, v := range vars {
		all[k] = v
	}
	s := coretest.Settings(t, all)
	pol, err := authz.Parse([]byte(s.AuthzPolicy))
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := afs.OpenDocuments(afs.DocumentsConfig{Root: docsDir, MaxReadBytes: int64(s.DocMaxBytes)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = corpus.Close() })
	rs, err := afs.OpenRepo(afs.RepoConfig{Root: repoDir, Extensions: s.RepoAllowedExtensions, ExcludedDirs: s.RepoExcludedDirs, MaxFileBytes: int64(s.RepoMaxFileBytes)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Close() })
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	sets := portstest.NewWorkingSets(ports.WorkingSetLimits{MaxSetsPerOwner: s.WorkingsetMaxSets, MaxItemsPerSet: s.WorkingsetMaxItems, MaxSetsTotal: 1000})
	cp := contexttools.Ports{Sets: sets, Corpus: corpus, Repo: rs, Authorizer: pol,
		Scanner: security.NewScanner([]byte("0123456789abcdef0123456789abcdef")), Tokenizer: tok}
	families := []core.Member{}
	e := env{docs: docsDir, repo: repoDir, sets: sets}
	if vectors != noVectors {
		idx, err := vectorindex.OpenVectorIndex(t.Context(), vectorindex.VectorIndexConfigFromSettings(*s))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = idx.Close() })
		e.index, e.embedder = idx, embed.NewDeterministic(s.EmbeddingDimensions)
		if vectors == semanticVectors {
			e.embedder = semanticStandIn{e.embedder}
		}
		cp.Embedder, cp.Vectors = e.embedder, idx
		families = append(families, data.Family.With(data.Ports{Authorizer: pol, Vetter: sqlguard.New(sqlguard.Config{}),
			Embedder: e.embedder, Documents: corpus, Vectors: idx, Writer: idx}))
	}
	families = append(families, contexttools.Family.With(cp))
	e.app, err = core.New(core.Deps{Settings: s, Authorizer: pol, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{}, Families: families})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e env) call(t testing.TB, p ports.Principal, tool string, args map[string]any) (map[string]any, string, *catalog.ToolError) {
	t.Helper()
	res, err := e.app.Call(t.Context(), p, tool, args)
	if err != nil {
		te, ok := catalog.AsToolError(err)
		if !ok {
			t.Fatalf("%s: non-ToolError %v", tool, err)
		}
		return nil, "", te
	}
	return res.Structured(), res.Text, nil
}

// num reads a number from structured output, whichever Go type carries it.
func num(v any) int {
	var n int
	fmt.Sscan(fmt.Sprint(v), &n)
	return n
}

func pin(kind, id string) map[string]any { return map[string]any{"kind": kind, "identifier": id} }

func mustCall(t testing.TB, e env, p ports.Principal, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	out, text, te := e.call(t, p, tool, args)
	if te != nil {
		t.Fatalf("%s: %v", tool, te)
	}
	return out, text
}

var fixtureDocs = map[string]string{
	"public/refunds.md": "# Refunds\n\nRefunds are issued within 14 days.\nContact billing.\n",
	"public/other.md":   "Nothing relevant here.\n",
	"private/secret.md": "Refunds are secret here.\n",
	"public/leaky.txt":  "the refunds key is AKIAIOSFODNN7EXAMPLE for now\n",
}

var fixtureRepo = map[string]string{
	"src/refund.go":     "package src\n\n// Refund issues refunds.\nfunc Refund() {}\n",
	"src/blob.go":       "package src\x00\x01\x02binary",
	"private/keys.go":   "package private\n// refunds\n",
	".git/config":       "[core]\n",
	"node_modules/x.js": "refunds\n",
}

func TestSpecs(t *testing.T) {
	s := settings.Defaults()
	want := map[string]struct {
		scope, ceiling string
		def            int
		ro             bool
	}{
		"pack_context":      {"context:read", "ARROWHEAD_PACK_CONTEXT_PER_MINUTE", 10, true},
		"workingset_get":    {"context:read", "ARROWHEAD_WORKINGSET_GET_PER_MINUTE", 60, true},
		"workingset_update": {"context:write", "ARROWHEAD_WORKINGSET_UPDATE_PER_MINUTE", 30, false},
	}
	tools := contexttools.Family.Declare(s).Tools
	if len(tools) != len(want) {
		t.Fatalf("%d tools", len(tools))
	}
	for _, spec := range tools {
		w, ok := want[spec.Name()]
		if !ok || spec.Scope() != w.scope || spec.Family() != catalog.FamilyContext {
			t.Errorf("%s: scope %s family %s", spec.Name(), spec.Scope(), spec.Family())
		}
		if c := spec.Ceiling(); c.Var != w.ceiling || c.Default != w.def {
			t.Errorf("%s: ceiling %+v", spec.Name(), c)
		}
	}
}

func TestPinGetUnpinClear(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	out, _ := mustCall(t, e, alice, "workingset_update", map[string]any{"name": "bug", "action": "pin",
		"items": []any{pin("repo_file", "src/refund.go"), map[string]any{"kind": "doc", "identifier": "public/refunds.md", "note": "policy"}}})
	if items := out["items"].([]any); len(items) != 2 {
		t.Fatalf("pin: %v", out)
	}
	out, text := mustCall(t, e, alice, "workingset_get", map[string]any{"name": "bug"})
	items := out["items"].([]any)
	if items[1].(map[string]any)["note"] != "policy" || !strings.Contains(text, "src/refund.go") {
		t.Fatalf("get: %v %q", out, text)
	}
	out, _ = mustCall(t, e, alice, "workingset_update", map[string]any{"name": "bug", "action": "unpin", "items": []any{pin("repo_file", "src/refund.go")}})
	if items := out["items"].([]any); len(items) != 1 {
		t.Fatalf("unpin: %v", out)
	}
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "bug", "action": "clear"})
	if _, _, te := e.call(t, alice, "workingset_get", map[string]any{"name": "bug"}); te == nil || te.Kind != catalog.KindNotFound {
		t.Fatalf("after clear: %v", te)
	}
}

func TestForeignSetIsNotFound(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "bug", "action": "pin", "items": []any{pin("doc", "public/refunds.md")}})
	_, _, foreign := e.call(t, bob, "workingset_get", map[string]any{"name": "bug"})
	_, _, missing := e.call(t, bob, "workingset_get", map[string]any{"name": "never"})
	if foreign == nil || missing == nil || foreign.Kind != missing.Kind || foreign.Message != missing.Message {
		t.Fatalf("foreign %v vs missing %v", foreign, missing)
	}
	_, _, te := e.call(t, bob, "pack_context", map[string]any{"query": "refunds", "working_set": "bug"})
	if te == nil || te.Message != missing.Message {
		t.Fatalf("pack over a foreign set: %v", te)
	}
	_, _, te = e.call(t, bob, "workingset_update", map[string]any{"name": "bug", "action": "clear"})
	if te == nil || te.Message != missing.Message {
		t.Fatalf("clear of a foreign set: %v", te)
	}
	if _, err := e.sets.Get(t.Context(), "alice", "bug"); err != nil {
		t.Fatalf("alice's set after bob: %v", err)
	}
}

// Pin identifiers get the traversal classes of test/security, the
// excluded directories, symlinks and binary files: each is refused, the
// refusal never echoes the identifier, and nothing is stored.
func TestAdversarialPins(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	outside := t.TempDir()
	coretest.WriteFiles(t, outside, map[string]string{"x.go": "package x\n", "x.md": "x\n"})
	if err := os.Symlink(filepath.Join(outside, "x.go"), filepath.Join(e.repo, "src", "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(e.docs, "public", "link.md")); err != nil {
		t.Fatal(err)
	}
	cases := []map[string]any{
		pin("repo_file", "../etc/passwd"), pin("repo_file", "/etc/passwd"), pin("repo_file", "src/../../etc/passwd"),
		pin("repo_file", "src\\..\\..\\x.go"), pin("repo_file", "src/\x00refund.go"), pin("repo_file", "C:\\Windows\\win.ini"),
		pin("repo_file", "//server/share/x.go"), pin("repo_file", "src/%2e%2e/%2e%2e/x.go"),
		pin("repo_file", ".git/config"), pin("repo_file", "src/../.git/config"), pin("repo_file", "node_modules/x.js"),
		pin("repo_file", "src/link.go"), pin("repo_file", "src/blob.go"), pin("repo_file", "src/missing.go"),
		pin("repo_file", "private/keys.go"), pin("doc", "private/secret.md"), pin("doc", "public/link.md"),
		pin("doc", "../public/refunds.md"), pin("doc", "src/refund.go"), pin("repo_file", "public/refunds.md"),
		pin("script", "src/refund.go"),
	}
	for _, c := range cases {
		id := c["identifier"].(string)
		_, _, te := e.call(t, alice, "workingset_update", map[string]any{"name": "adv", "action": "pin", "items": []any{c}})
		if te == nil {
			t.Errorf("pin %q (%s) accepted", id, c["kind"])
			continue
		}
		if strings.Contains(te.Message, id) || (len(id) > 4 && strings.Contains(te.Message, filepath.Base(id))) {
			t.Errorf("refusal echoes %q: %s", id, te.Message)
		}
	}
	if _, err := e.sets.Get(t.Context(), "alice", "adv"); err == nil {
		t.Fatal("a refused pin created the set")
	}
	// A path the lexical rule refuses is refused as every path argument
	// is (catalog.CleanPath), naming the item's position.
	_, _, te := e.call(t, alice, "workingset_update", map[string]any{"name": "adv", "action": "pin",
		"items": []any{pin("doc", "public/refunds.md"), pin("repo_file", "src/../../etc/passwd")}})
	if te == nil || te.Kind != catalog.KindValidation || te.Message != "Item 2 has an invalid identifier. The path must not contain '..' components." {
		t.Fatalf("lexical refusal: %v", te)
	}
	// One bad item refuses the whole update.
	_, _, te = e.call(t, alice, "workingset_update", map[string]any{"name": "adv", "action": "pin",
		"items": []any{pin("doc", "public/refunds.md"), pin("doc", "private/secret.md")}})
	if te == nil || te.Kind != catalog.KindAuthorization || !strings.Contains(te.Message, "Item 2") {
		t.Fatalf("mixed pin: %v", te)
	}
	// Names are strict.
	for _, name := range []string{"", "../x", "a b", "a/b", ".hidden", strings.Repeat("a", 65), "naïve"} {
		if _, _, te := e.call(t, alice, "workingset_update", map[string]any{"name": name, "action": "pin", "items": []any{pin("doc", "public/refunds.md")}}); te == nil {
			t.Errorf("name %q accepted", name)
		}
	}
}

func TestBounds(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_WORKINGSET_MAX_SETS": "2", "ARROWHEAD_WORKINGSET_MAX_ITEMS": "2"}, fixtureDocs, fixtureRepo)
	for i := range 2 {
		mustCall(t, e, alice, "workingset_update", map[string]any{"name": fmt.Sprint("s", i), "action": "pin", "items": []any{pin("doc", "public/refunds.md")}})
	}
	if _, _, te := e.call(t, alice, "workingset_update", map[string]any{"name": "s2", "action": "pin", "items": []any{pin("doc", "public/refunds.md")}}); te == nil || !strings.Contains(te.Message, "ARROWHEAD_WORKINGSET_MAX_SETS") {
		t.Fatalf("third set: %v", te)
	}
	if _, _, te := e.call(t, alice, "workingset_update", map[string]any{"name": "s0", "action": "pin",
		"items": []any{pin("doc", "public/other.md"), pin("repo_file", "src/refund.go")}}); te == nil || !strings.Contains(te.Message, "ARROWHEAD_WORKINGSET_MAX_ITEMS") {
		t.Fatalf("third item: %v", te)
	}
	// bob has his own allowance.
	mustCall(t, e, bob, "workingset_update", map[string]any{"name": "s0", "action": "pin", "items": []any{pin("doc", "public/refunds.md")}})
}

func TestPackPinnedThenRetrieved(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "refunds", "action": "pin",
		"items": []any{pin("repo_file", "src/refund.go"), pin("doc", "public/other.md")}})
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": "refunds", "working_set": "refunds"})
	if out["tokenizer"] != "cl100k_base" || fmt.Sprint(out["token_budget"]) != "8000" {
		t.Fatalf("manifest header: %v", out)
	}
	items := out["items"].([]any)
	var got []string
	sum := 0
	for _, it := range items {
		m := it.(map[string]any)
		got = append(got, fmt.Sprintf("%s:%s:%s:%v-%v", m["reason"], m["kind"], m["identifier"], m["start_line"], m["end_line"]))
		sum += num(m["tokens"])
	}
	want := []string{
		"pinned:repo_file:src/refund.go:1-4", "pinned:doc:public/other.md:1-1",
		"retrieved:doc:public/refunds.md:1-4", "retrieved:doc:public/leaky.txt:1-1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if num(out["tokens_used"]) != sum || sum <= 0 {
		t.Fatalf("tokens_used %v, sum %v", out["tokens_used"], sum)
	}
	// The pinned whole file's digest is the file's.
	h := sha256.Sum256([]byte(fixtureRepo["src/refund.go"]))
	if items[0].(map[string]any)["sha256"] != hex.EncodeToString(h[:]) {
		t.Fatalf("sha256 of the pinned file: %v", items[0])
	}
	if strings.Contains(text, "AKIAIOSFODNN7EXAMPLE") || strings.Contains(text, "secret here") {
		t.Fatalf("a secret or a denied document reached the pack:\n%s", text)
	}
	if n := strings.Count(text, "untrusted"); n < len(items) {
		t.Fatalf("%d frames for %d items", n, len(items))
	}
}

func TestPackReauthorizesAndDrops(t *testing.T) {
	e := newEnv(t, nil, fixtureDocs, fixtureRepo)
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "w", "action": "pin",
		"items": []any{pin("doc", "public/refunds.md"), pin("repo_file", "src/refund.go")}})
	// The document goes away after pinning; the code file turns binary.
	if err := os.Remove(filepath.Join(e.docs, "public", "refunds.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.repo, "src", "refund.go"), []byte("\x00\x01binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := mustCall(t, e, alice, "pack_context", map[string]any{"query": "zzz-no-hit", "working_set": "w"})
	dropped := out["dropped"].([]any)
	if len(dropped) != 2 || dropped[0].(map[string]any)["reason"] != "not_found" || dropped[1].(map[string]any)["reason"] != "unreadable" {
		t.Fatalf("dropped: %v", dropped)
	}
	// A pin whose grant is revoked is dropped as denied.
	if _, err := e.sets.Pin(t.Context(), "alice", "w", []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: "private/secret.md"}}); err != nil {
		t.Fatal(err)
	}
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": "zzz-no-hit", "working_set": "w"})
	dropped = out["dropped"].([]any)
	if last := dropped[len(dropped)-1].(map[string]any); last["reason"] != "denied" || last["identifier"] != "private/secret.md" {
		t.Fatalf("revoked pin: %v", dropped)
	}
}

func TestPackBudget(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_PACK_MAX_TOKENS": "200"}, fixtureDocs, fixtureRepo)
	out, _ := mustCall(t, e, alice, "pack_context", map[string]any{"query": "refunds", "token_budget": 100000})
	if fmt.Sprint(out["token_budget"]) != "200" {
		t.Fatalf("budget not capped: %v", out["token_budget"])
	}
	if used := num(out["tokens_used"]); used > 200 {
		t.Fatalf("used %v of 200", used)
	}
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": "refunds", "token_budget": 10})
	if len(out["items"].([]any)) != 0 {
		t.Fatalf("items under a 10-token budget: %v", out["items"])
	}
	for _, d := range out["dropped"].([]any) {
		if d.(map[string]any)["reason"] != "over_budget" {
			t.Fatalf("dropped: %v", d)
		}
	}
}

// A pin larger than the budget is left out whole, never cut, and the
// result says so: the truncation flag, and a dropped entry whose lines and
// digest name exactly what was left out; smaller items still fill the
// budget.
func TestPackOversizedPin(t *testing.T) {
	big := "package src\n\n" + strings.Repeat("// refunds ledger arithmetic, line after line of it\n", 600)
	repo := map[string]string{"src/big.go": big, "src/refund.go": fixtureRepo["src/refund.go"]}
	e := newEnv(t, nil, fixtureDocs, repo)
	mustCall(t, e, alice, "workingset_update", map[string]any{"name": "big", "action": "pin", "items": []any{pin("repo_file", "src/big.go")}})
	out, text := mustCall(t, e, alice, "pack_context", map[string]any{"query": "issued within", "working_set": "big", "token_budget": 2000})
	if used := num(out["tokens_used"]); used > 2000 {
		t.Fatalf("used %d of 2000", used)
	}
	var drop map[string]any
	for _, d := range out["dropped"].([]any) {
		if m := d.(map[string]any); m["identifier"] == "src/big.go" && m["pinned"] == true {
			drop = m
		}
	}
	sum := sha256.Sum256([]byte(big))
	if drop == nil || drop["reason"] != "over_budget" || num(drop["tokens"]) <= 2000 || num(drop["start_line"]) != 1 ||
		num(drop["end_line"]) != strings.Count(big, "\n") || drop["sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("dropped: %v", out["dropped"])
	}
	if tr := out["truncated"].([]any); len(tr) == 0 || tr[0] != "budget" {
		t.Fatalf("truncated: %v", tr)
	}
	if len(out["items"].([]any)) == 0 || !strings.Contains(text, "left out") {
		t.Fatalf("items %v, text:\n%s", out["items"], text)
	}
	for _, it := range out["items"].([]any) {
		if it.(map[string]any)["reason"] == "pinned" {
			t.Fatalf("the oversized pin was packed: %v", it)
		}
	}
	// Under a budget everything fits, nothing is flagged.
	out, _ = mustCall(t, e, alice, "pack_context", map[string]any{"query": "issued within"})
	if tr := out["truncated"].([]any); len(tr) != 0 || len(out["dropped"].([]any)) != 0 {
		t.Fatalf("nothing was over the budget, yet: truncated %v dropped %v", tr, out["dropped"])
	}
}
