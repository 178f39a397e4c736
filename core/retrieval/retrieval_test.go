package retrieval

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/ports"
)

func TestTerms(t *testing.T) {
	for text, want := range map[string][]string{
		"parseErrorsWhitelist":      {"parseerrorswhitelist", "pars", "error", "whitelist"},
		"HTTPServer":                {"httpserv", "http", "serv"},
		"snake_case_name":           {"snakecasenam", "snak", "nam"},
		"v2Client":                  {"v2client", "v2", "client"},
		"How are the flags parsed?": {"are", "flag", "pars"},
		"base64 x":                  {"base64"},
	} {
		got := Terms(text)
		for _, w := range want {
			if w == "are" {
				if slices.Contains(got, w) {
					t.Errorf("Terms(%q) keeps the stop word %q: %v", text, w, got)
				}
				continue
			}
			if !slices.Contains(got, w) {
				t.Errorf("Terms(%q) = %v, lacks %q", text, got, w)
			}
		}
	}
	stems := map[string]bool{}
	for _, w := range []string{"parse", "parses", "parsed", "parsing", "parser"} {
		stems[Stem(w)] = true
	}
	if len(stems) != 1 {
		t.Errorf("the forms of parse stem apart: %v", stems)
	}
	if Stem("class") != "class" || Stem("user") != "user" {
		t.Errorf("stems too eagerly: %s %s", Stem("class"), Stem("user"))
	}
}

// coverage checks that chunks cover every non-blank line once, in order.
func coverage(t *testing.T, src string, chunks []Chunk) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	seen := make([]int, len(lines)+1)
	last := 0
	for _, c := range chunks {
		if c.Start <= last || c.End < c.Start || c.End > len(lines) {
			t.Fatalf("chunk %+v after line %d of %d", c, last, len(lines))
		}
		for i := c.Start; i <= c.End; i++ {
			seen[i]++
		}
		last = c.End
	}
	for i := 1; i <= len(lines); i++ {
		if strings.TrimSpace(lines[i-1]) != "" && seen[i] != 1 {
			t.Fatalf("line %d (%q) is in %d chunks: %+v", i, lines[i-1], seen[i], chunks)
		}
	}
}

const goSrc = `package demo

import "fmt"

// Parse reads the arguments.
// It stops at the first error.
func Parse(args []string) error {
	return nil
}

var x = 1

// Flag is one flag.
type Flag struct {
	Name string
}

func (f *Flag) String() string { return fmt.Sprint(f.Name) }
`

func TestChunkGo(t *testing.T) {
	chunks := chunkFile("demo.go", splitLines([]byte(goSrc)), codeintel.GoSymbols([]byte(goSrc)))
	coverage(t, goSrc, chunks)
	var got []string
	for _, c := range chunks {
		got = append(got, c.Kind+":"+c.Name)
	}
	want := []string{"block:", "function:Parse", "block:", "type:Flag", "method:String"}
	if !slices.Equal(got, want) {
		t.Fatalf("chunks %v, want %v", got, want)
	}
	if p := chunks[1]; p.Start != 5 || p.DefLine != 7 || p.End != 9 {
		t.Fatalf("Parse's chunk starts at its doc comment: %+v", p)
	}
}

func TestChunkPythonClassSplit(t *testing.T) {
	var b strings.Builder
	b.WriteString("import os\n\n\nclass Big:\n    \"\"\"A big class.\"\"\"\n\n")
	for i := range 12 {
		b.WriteString("    # method " + string(rune('a'+i)) + "\n    def m" + string(rune('a'+i)) + "(self):\n")
		for range 6 {
			b.WriteString("        x = 1\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("def tail():\n    return 1\n")
	src := b.String()
	chunks := chunkFile("big.py", splitLines([]byte(src)), codeintel.PythonSymbols([]byte(src)))
	coverage(t, src, chunks)
	if chunks[1].Name != "Big" || chunks[1].End >= chunks[2].Start || chunks[2].Name != "ma" || chunks[2].Parent != "Big" {
		t.Fatalf("a long class is its header and its methods: %+v", chunks[:3])
	}
	if chunks[2].Start != chunks[2].DefLine-1 {
		t.Fatalf("a method's chunk starts at its comment: %+v", chunks[2])
	}
	if last := chunks[len(chunks)-1]; last.Name != "tail" {
		t.Fatalf("last chunk %+v", last)
	}
}

func TestChunkMarkdown(t *testing.T) {
	src := "# Title\n\nIntro.\n\n## Install\n\nRun it.\n\n## Use\n\nCall it.\n"
	chunks := chunkFile("README.md", splitLines([]byte(src)), nil)
	coverage(t, src, chunks)
	var names []string
	for _, c := range chunks {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"Title", "Install", "Use"}) || chunks[1].Start != 5 || chunks[1].End != 7 {
		t.Fatalf("sections %+v", chunks)
	}
}

func entry(path, src string) *Entry {
	var syms []ports.Symbol
	if strings.HasSuffix(path, ".go") {
		syms = codeintel.GoSymbols([]byte(src))
	}
	return Analyze("repo_file", ports.FileInfo{Path: path, Size: int64(len(src)), ModTime: time.Unix(1, 0)}, []byte(src), syms)
}

// A query word naming a definition ranks that definition first and
// whole, above text that only talks about it.
func TestRankDefinitionsFirst(t *testing.T) {
	talk := "package a\n\n// The retry budget is spent when the retry budget runs out; retry budget here, retry budget there.\nvar talk = 1\n"
	def := "package b\n\n// RetryBudget limits retries.\ntype RetryBudget struct {\n\tleft int\n}\n"
	k := NewCorpus([]*Entry{entry("a.go", talk), entry("b.go", def)})
	hits := k.Rank("what is the retry budget", 10)
	if len(hits) == 0 || hits[0].Entry.Path != "b.go" || hits[0].Chunk.Name != "RetryBudget" || hits[0].Symbol == 0 {
		t.Fatalf("hits %+v", hits)
	}
	if c := hits[0].Chunk; c.Start != 3 || c.End != 6 {
		t.Fatalf("the definition is not whole: %+v", c)
	}
}

// Files that define what the matching files use rank higher: the helper
// that the matching code calls is retrieved through the reference graph
// though it shares no word with the query, and an unused one is not.
func TestRankGraph(t *testing.T) {
	caller := "package a\n\n// Checkout charges the customer.\nfunc Checkout() { settleLedgerEntries(); settleLedgerEntries() }\n"
	helper := "package a\n\nfunc settleLedgerEntries() {}\n"
	unused := "package a\n\nfunc compactArchives() {}\n"
	k := NewCorpus([]*Entry{entry("checkout.go", caller), entry("ledger.go", helper), entry("archive.go", unused)})
	hits := k.Rank("how does checkout charge the customer", 10)
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Entry.Path)
		if h.Entry.Path == "ledger.go" && (h.Graph == 0 || h.Lexical != 0) {
			t.Fatalf("the helper's hit: %+v", h)
		}
	}
	if !slices.Equal(paths, []string{"checkout.go", "ledger.go"}) {
		t.Fatalf("ranked %v", paths)
	}
}

// Tests rank below the code they test on equal terms.
func TestRankTestsBelowCode(t *testing.T) {
	code := "package a\n\n// Tokenize splits input.\nfunc Tokenize() {}\n"
	test := "package a\n\n// Tokenize splits input.\nfunc TestTokenize() { Tokenize() }\n"
	k := NewCorpus([]*Entry{entry("a_test.go", test), entry("a.go", code)})
	if hits := k.Rank("how does it split input", 10); len(hits) < 2 || hits[0].Entry.Path != "a.go" {
		t.Fatalf("hits %+v", hits)
	}
}

func TestCache(t *testing.T) {
	c := NewCache()
	e := entry("a.go", "package a\n")
	c.Store(e)
	info := ports.FileInfo{Path: "a.go", Size: e.Size, ModTime: e.ModTime}
	if c.Lookup("repo_file", info) != e {
		t.Fatal("a current analysis is not reused")
	}
	info.ModTime = info.ModTime.Add(time.Second)
	if c.Lookup("repo_file", info) != nil || c.Lookup("doc", ports.FileInfo{Path: "a.go", Size: e.Size, ModTime: e.ModTime}) != nil {
		t.Fatal("a stale or foreign analysis is reused")
	}
	k1, k2 := c.Corpus([]*Entry{e}), c.Corpus([]*Entry{e})
	if k1 != k2 || c.Corpus(nil) == k1 {
		t.Fatal("corpora are not memoized by their analyses")
	}
	c.Forget("repo_file", func(string) bool { return false })
	if c.Lookup("repo_file", ports.FileInfo{Path: "a.go", Size: e.Size, ModTime: e.ModTime}) != nil {
		t.Fatal("a forgotten analysis is reused")
	}
}

// A name whose words all occur in the question, in any order, is a
// definition the question names; a name of one repeated word is not.
func TestRankUnorderedName(t *testing.T) {
	k := NewCorpus([]*Entry{
		entry("d.go", "package d\n\nfunc ParseDuration(s string) int { return 0 }\n"),
		entry("f.go", "package d\n\nfunc FlagFromFlag() {}\n"),
	})
	hits := k.Rank("how is a duration parsed", 10)
	if len(hits) == 0 || hits[0].Chunk.Name != "ParseDuration" || hits[0].Symbol == 0 {
		t.Fatalf("hits %+v", hits)
	}
	for _, h := range k.Rank("which flag is it", 10) {
		if h.Chunk.Name == "FlagFromFlag" && h.Symbol != 0 {
			t.Fatalf("a repeated word named a definition: %+v", h)
		}
	}
}
