// Command coding_agent is the offline coding walkthrough: it serves the
// coding profile over the small sample repository beside this file and
// calls each coding tool through App.Call, the same guarded path an MCP
// client reaches, printing a short summary of each answer. No server, no
// database, no model key, no network beyond loopback: the assist tools ask
// a fake OpenAI-compatible model the walkthrough serves on 127.0.0.1.
//
//	go run ./examples/coding_agent
//
// The exec tools (run_snippet, run_tests) need python3 on the sandbox PATH;
// without it the walkthrough says so and skips them. Everything it writes
// (the sandbox scratch, the data directory) goes under a temporary
// directory removed on exit.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// testCommand is run_tests' command: the sample's Python tests, run at the
// root of the sandbox copy.
const testCommand = "python3 -I -m unittest discover -s inventory -t ."

// guide is the one document in the walkthrough's corpus, so pack_context
// has a document to pin and to retrieve beside the repository's files.
const guide = `# Inventory guide

Stock is counted per item. Removing stock checks that enough units are on
hand first; reserving units before removal is still a TODO.
`

// change is the diff summarize_diff is asked about.
const change = `--- a/inventory/stock.py
+++ b/inventory/stock.py
@@ -16,2 +16,3 @@ class Stock:
     def remove(self, item, units):
-        # TODO: reserve units before removing them
+        if item in self.reserved:
+            raise ValueError("units are reserved")
         have = self.levels.get(item, 0)
`

func main() {
	if _, err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coding_agent:", err)
		os.Exit(1)
	}
}

// sampleRoot is the sample repository shipped beside this file.
func sampleRoot() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "sample")
}

// run prints one section per tool call to w and returns the names of the
// tools it called, in order.
func run(ctx context.Context, w io.Writer) ([]string, error) {
	tmp, err := os.MkdirTemp("", "arrowhead-coding-agent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// When the walkthrough runs as root the sandbox runs commands as an
	// unprivileged uid, which must be able to pass through to its scratch.
	if err := os.Chmod(tmp, 0o711); err != nil {
		return nil, err
	}

	if err := os.Mkdir(filepath.Join(tmp, "docs"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "docs", "inventory-guide.md"), []byte(guide), 0o644); err != nil {
		return nil, err
	}
	model := fakeModel()
	defer model.Close()
	modelURL, err := url.Parse(model.URL)
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		"ARROWHEAD_PROFILE":   "coding",
		"ARROWHEAD_REPO_ROOT": sampleRoot(),
		"ARROWHEAD_DATA_DIR":  filepath.Join(tmp, "data"),
		"ARROWHEAD_JAIL_ROOT": filepath.Join(tmp, "docs"), // the core family's corpus
		"ARROWHEAD_DOCS_ROOT": filepath.Join(tmp, "docs"),
		// The assist tools' backend: an OpenAI-compatible endpoint on
		// loopback, which egress refuses unless its exact host:port is
		// listed as an internal model host.
		"ARROWHEAD_LLM_PROVIDER":       "openai",
		"ARROWHEAD_LLM_ENDPOINT":       model.URL + "/v1/chat/completions",
		"ARROWHEAD_LLM_INTERNAL_HOSTS": modelURL.Host,
		"ARROWHEAD_LLM_MODEL":          "fake",
	}
	withExec := true
	if _, err := sandbox.LookPath("python3"); err != nil {
		withExec = false
		fmt.Fprintf(w, "python3 is not on the sandbox PATH (%s): skipping run_snippet and run_tests.\n\n", sandbox.SandboxPATH)
	} else {
		env["ARROWHEAD_EXEC_ENABLED"] = "true"
		env["ARROWHEAD_EXEC_RUNNER"] = "subprocess"
		env["ARROWHEAD_EXEC_WORKDIR"] = filepath.Join(tmp, "exec-scratch")
		env["ARROWHEAD_EXEC_TEST_COMMAND"] = testCommand
	}
	s, err := settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return nil, err
	}
	rt, err := wire.Build(ctx, s, wire.Options{})
	if err != nil {
		return nil, err
	}
	defer rt.Close(ctx)

	// Auth is off in this walkthrough, so the local operator is the caller;
	// a deployment with auth on would also grant the execute action in its
	// policy (see policies/coding-agent.json).
	a := agent{ctx: ctx, app: rt.App, who: ports.Operator(), w: w}
	a.call("code_search", map[string]any{"query": "TODO"}, showSearch)
	a.call("code_read", map[string]any{"path": "inventory/stock.py", "start_line": 15, "end_line": 20}, showRead)
	a.call("symbol_map", map[string]any{}, showSymbols)
	a.call("dependency_graph", map[string]any{}, showGraph)
	a.call("workingset_update", map[string]any{"name": "stock-work", "action": "pin", "items": []any{
		map[string]any{"kind": "repo_file", "identifier": "inventory/stock.py", "note": "the class being changed"},
		map[string]any{"kind": "doc", "identifier": "inventory-guide.md"},
	}}, showSet)
	a.call("workingset_get", map[string]any{"name": "stock-work"}, showSet)
	a.call("pack_context", map[string]any{"query": "total", "working_set": "stock-work", "token_budget": 2000}, showPack)
	a.call("code_explain", map[string]any{"path": "inventory/stock.py", "start_line": 4, "end_line": 20}, showModelText)
	a.call("summarize_diff", map[string]any{"diff": change}, showModelText)
	a.call("rerank", map[string]any{"query": "remove stock units", "candidates": []any{
		"Shipping rates are quoted per kilogram.",
		"Stock.remove takes units away from an item's stock.",
		"The report lists each item's stock.",
	}}, showOrder)
	if withExec {
		a.call("run_snippet", map[string]any{"code": "import sys\nprint(sum(range(10)))\nprint(sys.version_info[:2])"}, showExec)
		a.call("run_tests", map[string]any{"path_prefix": "inventory/"}, showExec)
	}
	return a.called, a.err
}

// agent calls tools in order and stops at the first failure.
type agent struct {
	ctx    context.Context
	app    *core.App
	who    ports.Principal
	w      io.Writer
	called []string
	err    error
}

// call calls tool with args and prints a section headed by the tool's name,
// summarised by show; after a failure it does nothing.
func (a *agent) call(tool string, args map[string]any, show func(io.Writer, map[string]any)) {
	if a.err != nil {
		return
	}
	res, err := a.app.Call(a.ctx, a.who, tool, args)
	if err != nil {
		if te, ok := catalog.AsToolError(err); ok {
			err = fmt.Errorf("%s: %s", te.Kind, te.Message)
		}
		a.err = fmt.Errorf("%s: %w", tool, err)
		return
	}
	fmt.Fprintf(a.w, "== %s %s\n", tool, describe(args))
	show(a.w, res.Structured())
	fmt.Fprintln(a.w)
	a.called = append(a.called, tool)
}

// describe renders a call's arguments on one line, long values cut.
func describe(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		value, _ := json.Marshal(args[k])
		parts[i] = fmt.Sprintf("%s=%s", k, preview(string(value), 40))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func showSearch(w io.Writer, out map[string]any) {
	matches := list(out["matches"])
	fmt.Fprintf(w, "%d match(es) in %v file(s) scanned\n", len(matches), out["files_scanned"])
	for _, m := range matches {
		fmt.Fprintf(w, "  %v:%v  %s\n", m["path"], m["line"], preview(str(m["snippet"]), 70))
	}
}

func showRead(w io.Writer, out map[string]any) {
	fmt.Fprintf(w, "%v lines %v-%v of %v, inside the untrusted-data frame:\n",
		out["path"], out["start_line"], out["end_line"], out["total_lines"])
	for _, line := range strings.Split(strings.TrimRight(str(out["content"]), "\n"), "\n") {
		fmt.Fprintf(w, "  | %s\n", line)
	}
}

func showSymbols(w io.Writer, out map[string]any) {
	symbols := list(out["symbols"])
	fmt.Fprintf(w, "%d symbol(s) in %v file(s), extractors %v\n", len(symbols), out["files_scanned"], out["extractor"])
	for _, s := range symbols {
		name := str(s["name"])
		if p := str(s["parent"]); p != "" {
			name = p + "." + name
		}
		fmt.Fprintf(w, "  %-28s %-8v %v:%v-%v\n", name, s["kind"], s["path"], s["start_line"], s["end_line"])
	}
}

func showGraph(w io.Writer, out map[string]any) {
	modules, edges := list(out["modules"]), list(out["edges"])
	fmt.Fprintf(w, "%d module(s), %d import(s)\n", len(modules), len(edges))
	for _, e := range edges {
		where := "internal"
		if e["external"] == true {
			where = "external"
		}
		fmt.Fprintf(w, "  %v -> %v (%s)\n", e["from"], e["to"], where)
	}
}

func showSet(w io.Writer, out map[string]any) {
	items := list(out["items"])
	fmt.Fprintf(w, "working set %v holds %d item(s)\n", out["name"], len(items))
	for _, item := range items {
		fmt.Fprintf(w, "  %-9v %v  %s\n", item["kind"], item["identifier"], preview(str(item["note"]), 40))
	}
}

func showPack(w io.Writer, out map[string]any) {
	items, dropped := list(out["items"]), list(out["dropped"])
	fmt.Fprintf(w, "%v of %v tokens (%v), %d item(s) packed, %d dropped\n",
		out["tokens_used"], out["token_budget"], out["tokenizer"], len(items), len(dropped))
	for _, item := range items {
		fmt.Fprintf(w, "  %-9v %-9v %v:%v-%v  %v tokens  sha256 %.12s\n",
			item["reason"], item["kind"], item["identifier"], item["start_line"], item["end_line"], item["tokens"], str(item["sha256"]))
	}
	for _, item := range dropped {
		fmt.Fprintf(w, "  dropped   %-9v %v (%v)\n", item["kind"], item["identifier"], item["reason"])
	}
}

// showModelText prints a model's answer as the tool returned it: sanitized
// Markdown inside the untrusted-data frame.
func showModelText(w io.Writer, out map[string]any) {
	for key, value := range out {
		if text, ok := value.(string); ok && strings.Contains(text, "UNTRUSTED-DATA") {
			fmt.Fprintf(w, "%s, inside the untrusted-data frame:\n", key)
			for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				fmt.Fprintf(w, "  | %s\n", preview(line, 100))
			}
		}
	}
}

func showOrder(w io.Writer, out map[string]any) {
	fmt.Fprintf(w, "order (candidate indices, most relevant first): %v\n", out["order"])
}

func showExec(w io.Writer, out map[string]any) {
	enforced, _ := out["enforced"].(map[string]any)
	fmt.Fprintf(w, "exit %v in %vms on the %v runner (timed out: %v, truncated: %v)\n",
		out["exit_code"], out["duration_ms"], out["runner"], out["timed_out"], out["truncated"])
	fmt.Fprintf(w, "  enforced: network=%v filesystem=%v environment=%v separate_user=%v\n",
		enforced["network"], enforced["filesystem"], enforced["environment"], enforced["separate_user"])
	for _, stream := range []string{"stdout", "stderr"} {
		if text := strings.TrimSpace(str(out[stream])); text != "" {
			lines := strings.Split(text, "\n")
			fmt.Fprintf(w, "  %s (last lines):\n", stream)
			for _, line := range lines[max(len(lines)-3, 0):] {
				fmt.Fprintf(w, "    %s\n", preview(line, 70))
			}
		}
	}
}

// list reads a JSON array of objects.
func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
