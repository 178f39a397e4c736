package content

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunkSpansOf returns every window of text, blank ones included.
func chunkSpansOf(text string, maxChars, overlap int) [][2]int {
	var out [][2]int
	chunkWindows(text, maxChars, overlap, func(s, e int) bool {
		out = append(out, [2]int{s, e})
		return true
	})
	return out
}

// checkWindows asserts the window invariants on text: the spans start at
// 0 and end at len(text), each starts exactly overlap characters before
// the previous one ended, none exceeds maxChars characters or is empty,
// every cut is at a rune boundary, and ChunkText returns exactly the
// non-blank windows.
func checkWindows(t *testing.T, text string, maxChars, overlap int) {
	t.Helper()
	spans := chunkSpansOf(text, maxChars, overlap)
	if text == "" {
		if len(spans) != 0 {
			t.Fatalf("empty text gave %d spans", len(spans))
		}
		return
	}
	ov := min(max(overlap, 0), maxChars-1)
	if spans[0][0] != 0 || spans[len(spans)-1][1] != len(text) {
		t.Fatalf("spans %v do not cover [0,%d)", spans, len(text))
	}
	var want []string
	for i, sp := range spans {
		s, e := sp[0], sp[1]
		if s >= e {
			t.Fatalf("span %d empty: %v", i, sp)
		}
		if n := utf8.RuneCountInString(text[s:e]); n > maxChars {
			t.Fatalf("span %d has %d chars > %d", i, n, maxChars)
		}
		for _, p := range []int{s, e} {
			if p < len(text) && !utf8.RuneStart(text[p]) && utf8.ValidString(text) {
				t.Fatalf("span %d cuts a UTF-8 sequence at %d", i, p)
			}
		}
		if i > 0 {
			prevEnd := spans[i-1][1]
			if s >= prevEnd && ov > 0 || s > prevEnd {
				t.Fatalf("span %d starts at %d, previous ended at %d", i, s, prevEnd)
			}
			if got := utf8.RuneCountInString(text[s:prevEnd]); got != ov {
				t.Fatalf("span %d overlaps %d chars, want %d", i, got, ov)
			}
			if s <= spans[i-1][0] {
				t.Fatalf("span %d does not advance", i)
			}
		}
		if c := text[s:e]; strings.TrimSpace(c) != "" {
			want = append(want, c)
		}
	}
	got := ChunkText(text, maxChars, overlap)
	if !slices.Equal(got, want) {
		t.Fatalf("ChunkText differs from the non-blank windows:\n got %q\nwant %q", got, want)
	}
	if again := ChunkText(text, maxChars, overlap); !slices.Equal(got, again) {
		t.Fatal("ChunkText is not deterministic")
	}
}

// unstitch removes the overlap from every chunk but the first and joins
// them; on text whose windows are never blank it gives back the text.
func unstitch(t *testing.T, chunks []string, overlap int) string {
	t.Helper()
	var b strings.Builder
	for i, c := range chunks {
		if i > 0 {
			prev := chunks[i-1]
			head := c
			for n := 0; n < overlap; n++ {
				_, size := utf8.DecodeRuneInString(head)
				head = head[size:]
			}
			carried := c[:len(c)-len(head)]
			if !strings.HasSuffix(prev, carried) {
				t.Fatalf("chunk %d does not start with the tail of chunk %d", i, i-1)
			}
			c = head
		}
		b.WriteString(c)
	}
	return b.String()
}

var chunkAlphabet = []string{
	"a", "b", "c", "word", "x", " ", " ", " ", "\n", "\n\n", ". ", "! ", "?", "\t",
	"é", "日本", "😀", "。", "\u00a0", "\xff", "\xe2\x82",
}

func randomText(r *rand.Rand, n int, alphabet []string) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestChunkTextProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		text := randomText(r, r.IntN(300), chunkAlphabet)
		maxChars := 1 + r.IntN(60)
		overlap := r.IntN(maxChars + 3) // sometimes beyond the clamp
		if i%7 == 0 {
			overlap = -r.IntN(3)
		}
		checkWindows(t, text, maxChars, overlap)
	}
}

// When no window can be blank (every token here ends in a non-space, so
// whitespace runs stay far shorter than half a window) the chunks
// themselves give back the text once the overlap is removed.
func TestChunkTextReassembles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dense := []string{"alpha", " beta", "γάμμα", "日本語", "😀", ". x", "\ny", "\n\nz", ",", "!", " \tq"}
	for range 500 {
		text := randomText(r, 1+r.IntN(400), dense)
		maxChars := 16 + r.IntN(80)
		overlap := r.IntN(maxChars)
		chunks := ChunkText(text, maxChars, overlap)
		if got := unstitch(t, chunks, overlap); got != text {
			t.Fatalf("reassembled text differs (max %d, overlap %d):\n got %q\nwant %q", maxChars, overlap, got, text)
		}
		for i, c := range chunks {
			if c == "" || utf8.RuneCountInString(c) > maxChars {
				t.Fatalf("chunk %d: %q", i, c)
			}
		}
	}
}

func TestChunkTextPrefersBoundaries(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		maxChars int
		overlap  int
		want     []string
	}{
		{
			name:     "fits in one window",
			text:     "short text",
			maxChars: 20,
			want:     []string{"short text"},
		},
		{
			name:     "paragraph beats a later line break",
			text:     "first para goes.\n\nsecond line\nthird line goes on and on",
			maxChars: 34,
			want:     []string{"first para goes.\n\n", "second line\nthird line goes on ", "and on"},
		},
		{
			name:     "line beats a later sentence end",
			text:     "a longer line of text\nIt is. And more words",
			maxChars: 34,
			want:     []string{"a longer line of text\n", "It is. And more words"},
		},
		{
			name:     "sentence beats a later space",
			text:     "Here is one. Here is two and more words",
			maxChars: 24,
			want:     []string{"Here is one. ", "Here is two and more ", "words"},
		},
		{
			name:     "ideographic full stop",
			text:     "日本語の文です。次の文はもっと長いです",
			maxChars: 12,
			want:     []string{"日本語の文です。", "次の文はもっと長いです"},
		},
		{
			name:     "word when nothing better",
			text:     "alpha beta gamma delta epsilon",
			maxChars: 14,
			want:     []string{"alpha beta ", "gamma delta ", "epsilon"},
		},
		{
			name:     "hard cut without any boundary",
			text:     "abcdefghijklmnopqrstuvwxyz",
			maxChars: 10,
			want:     []string{"abcdefghij", "klmnopqrst", "uvwxyz"},
		},
		{
			name:     "a boundary too early is ignored",
			text:     "a\n\nbcdefghijklmnopqrstu",
			maxChars: 10,
			want:     []string{"a\n\nbcdefgh", "ijklmnopqr", "stu"},
		},
		{
			name:     "overlap carried",
			text:     "one two three four five six",
			maxChars: 12,
			overlap:  4,
			want:     []string{"one two ", "two three ", "ree four ", "our five six"},
		},
		{
			name:     "whitespace-only windows dropped",
			text:     "head" + strings.Repeat(" ", 30) + "tail",
			maxChars: 10,
			want:     []string{"head      ", "    tail"},
		},
		{
			name:     "blank text",
			text:     " \n\t \n",
			maxChars: 10,
			want:     nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ChunkText(tc.text, tc.maxChars, tc.overlap)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			checkWindows(t, tc.text, tc.maxChars, tc.overlap)
		})
	}
}

func TestChunkTextNeverSplitsRunes(t *testing.T) {
	text := strings.Repeat("😀é日", 200)
	for maxChars := 1; maxChars < 40; maxChars++ {
		for _, c := range ChunkText(text, maxChars, maxChars/3) {
			if !utf8.ValidString(c) {
				t.Fatalf("max %d: chunk %q is not valid UTF-8", maxChars, c)
			}
			if n := utf8.RuneCountInString(c); n > maxChars {
				t.Fatalf("max %d: %d chars", maxChars, n)
			}
		}
	}
	// Invalid bytes count as one character each and survive unchanged.
	bad := "ab\xffcd\xe2\x82ef"
	if got := strings.Join(ChunkText(bad, 3, 0), ""); got != bad {
		t.Fatalf("invalid bytes changed: %q", got)
	}
}

func TestChunkPanicsOnZeroWindow(t *testing.T) {
	for name, f := range map[string]func(){
		"text": func() { ChunkText("abc", 0, 0) },
		"code": func() { ChunkCode("abc", -1) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic for a window below one character")
				}
			}()
			f()
		})
	}
}

func FuzzChunkText(f *testing.F) {
	f.Add("Hello there. General Kenobi!\n\nYou are a bold one.", 16, 4)
	f.Add("日本語の文です。次の文", 3, 1)
	f.Add("\xff\xfe\n\n  \t", 1, 0)
	f.Add(strings.Repeat(" ", 100)+"x", 10, 9)
	f.Fuzz(func(t *testing.T, text string, maxChars, overlap int) {
		if maxChars < 1 || maxChars > 200 || len(text) > 4000 {
			t.Skip()
		}
		checkWindows(t, text, maxChars, overlap)
	})
}

const goSource = `// Package x is an example.
package x

import "fmt"

// A does a.
func A() {
	fmt.Println("a")
}

// B does b.
//
// It has a longer comment.
func B() {
	fmt.Println("b")
}

type T struct {
	N int
}

func (t T) M() int {
	return t.N
}
`

func TestChunkCodeFollowsDeclarations(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		maxChars int
		want     []string
	}{
		{
			name:     "go: declarations travel with their doc comments",
			src:      goSource,
			maxChars: 80,
			want: []string{
				"// Package x is an example.\npackage x\n\nimport \"fmt\"\n\n",
				"// A does a.\nfunc A() {\n\tfmt.Println(\"a\")\n}\n\n",
				"// B does b.\n//\n// It has a longer comment.\nfunc B() {\n\tfmt.Println(\"b\")\n}\n\n",
				"type T struct {\n\tN int\n}\n\nfunc (t T) M() int {\n\treturn t.N\n}\n",
			},
		},
		{
			name:     "go: small declarations merge",
			src:      goSource,
			maxChars: 120,
			want: []string{
				"// Package x is an example.\npackage x\n\nimport \"fmt\"\n\n// A does a.\nfunc A() {\n\tfmt.Println(\"a\")\n}\n\n",
				"// B does b.\n//\n// It has a longer comment.\nfunc B() {\n\tfmt.Println(\"b\")\n}\n\ntype T struct {\n\tN int\n}\n\n",
				"func (t T) M() int {\n\treturn t.N\n}\n",
			},
		},
		{
			name: "python: decorators and comments stay with the def",
			src: "import os\n\n\n# helper\n@cache\ndef f(x):\n    return x\n\n" +
				"class C:\n    def m(self):\n\n        return 1\n\nif __name__ == \"__main__\":\n    f(1)\n",
			maxChars: 50,
			want: []string{
				"import os\n\n\n",
				"# helper\n@cache\ndef f(x):\n    return x\n\n",
				"class C:\n    def m(self):\n\n        return 1\n\n",
				"if __name__ == \"__main__\":\n    f(1)\n",
			},
		},
		{
			name: "typescript: export, function and class",
			src: "import { a } from \"a\";\n\nexport function f(): number {\n  return 1;\n}\n\n" +
				"/**\n * Doc.\n */\nclass K {\n  x = 1;\n}\n",
			maxChars: 45,
			want: []string{
				"import { a } from \"a\";\n\n",
				"export function f(): number {\n  return 1;\n}\n\n",
				"/**\n * Doc.\n */\nclass K {\n  x = 1;\n}\n",
			},
		},
		{
			name:     "c: a signature without a keyword, right after a closing brace",
			src:      "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\nint main(void) {\n  return add(1, 2);\n}\n",
			maxChars: 45,
			want: []string{
				"#include <stdio.h>\n\n",
				"int add(int a, int b) {\n  return a + b;\n}\n",
				"int main(void) {\n  return add(1, 2);\n}\n",
			},
		},
		{
			name:     "java: annotation and modifiers",
			src:      "package p;\n\n@Deprecated\npublic class A {\n  void m() {}\n}\n",
			maxChars: 50,
			want:     []string{"package p;\n\n", "@Deprecated\npublic class A {\n  void m() {}\n}\n"},
		},
		{
			name:     "a statement line is not a boundary",
			src:      "x = compute(1)\n\nfoo(2);\n\nreturn(3)\n",
			maxChars: 18,
			want:     []string{"x = compute(1)\n\n", "foo(2);\n\n", "return(3)\n"},
		},
		{
			name:     "blank file",
			src:      "\n\n  \n",
			maxChars: 10,
			want:     nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ChunkCode(tc.src, tc.maxChars)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
			if strings.Join(got, "") != tc.src && strings.TrimSpace(tc.src) != "" {
				t.Fatal("chunks do not tile the source")
			}
		})
	}
}

func TestChunkCodeBlockBoundaries(t *testing.T) {
	// The block starts, before any merging: every declaration boundary and
	// nothing else, each named by its first line.
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"go", goSource, []string{"// Package x is an example.", "// A does a.", "// B does b.", "type T struct {", "func (t T) M() int {"}},
		{"c after a closing brace", "#include <a.h>\n\nint f(void) {\n}\nint g(int x) {\n  if (x) {\n  }\n}\n",
			[]string{"#include <a.h>", "int f(void) {", "int g(int x) {"}},
		{"ruby after end", "class A\n  def m\n  end\nend\nmodule B\nend\n", []string{"class A", "module B"}},
		{"declaration glued to code is not a boundary", "x := 1\nfunc f() {}\n\nfunc g() {}\n", []string{"x := 1", "func g() {}"}},
		{"comment run must follow a blank line", "x = 1\n# note\ndef f():\n    pass\n", []string{"x = 1"}},
		{"rust attributes", "use std::fmt;\n\n#[derive(Debug)]\npub struct S;\n\nimpl S {\n}\n",
			[]string{"use std::fmt;", "#[derive(Debug)]", "impl S {"}},
		{"indented definitions are not top level", "class K:\n\n    def m(self):\n        pass\n", []string{"class K:"}},
		{"statements are not declarations", "a = 1\n\nif (a) {\n}\n\nfoo(a);\n\nreturn(a)\n", []string{"a = 1"}},
		{"javadoc continuation lines", "package p;\n\n/**\n * Doc.\n */\npublic class A {}\n", []string{"package p;", "/**"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var starts []string
			for _, b := range chunkCodeBlocks(tc.src) {
				line, _, _ := strings.Cut(tc.src[b:], "\n")
				starts = append(starts, line)
			}
			if !slices.Equal(starts, tc.want) {
				t.Fatalf("block starts %q, want %q", starts, tc.want)
			}
		})
	}
}

func TestChunkCodeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	lines := []string{
		"func f() {\n", "\treturn 1\n", "}\n", "\n", "// doc\n", "def g(x):\n", "    pass\n",
		"class K:\n", "@dec\n", "int main(void) {\n", "  x++;\n", "export const k = 1;\n",
		"type T struct{}\n", "    s := \"日本語😀\"\n", "end\n", "x = 1\n", strings.Repeat("y", 70) + "\n",
		"no newline at end",
	}
	for range 600 {
		src := randomText(r, r.IntN(60), lines)
		maxChars := 1 + r.IntN(120)
		// The spans tile the source exactly ...
		var spans [][2]int
		chunkCodeSpans(src, maxChars, func(s, e int) bool {
			spans = append(spans, [2]int{s, e})
			return true
		})
		var want []string
		next := 0
		for i, sp := range spans {
			c := src[sp[0]:sp[1]]
			if sp[0] != next || c == "" || utf8.RuneCountInString(c) > maxChars || !utf8.ValidString(c) {
				t.Fatalf("max %d: bad span %d %v after %d: %q", maxChars, i, sp, next, c)
			}
			next = sp[1]
			if strings.TrimSpace(c) != "" {
				want = append(want, c)
			}
		}
		if next != len(src) {
			t.Fatalf("max %d: spans end at %d of %d", maxChars, next, len(src))
		}
		// ... and ChunkCode returns exactly the non-blank ones.
		chunks := ChunkCode(src, maxChars)
		if !slices.Equal(chunks, want) {
			t.Fatalf("max %d: ChunkCode differs from the non-blank spans", maxChars)
		}
		if again := ChunkCode(src, maxChars); !slices.Equal(chunks, again) {
			t.Fatal("ChunkCode is not deterministic")
		}
		// So the chunks alone lose nothing but whitespace.
		if stripSpace(strings.Join(chunks, "")) != stripSpace(src) {
			t.Fatalf("max %d: chunks lost more than whitespace", maxChars)
		}
	}
}

func TestChunkCodeSplitsOversizedBlocks(t *testing.T) {
	body := "func big() {\n" + strings.Repeat("\tcall(argument)\n", 20) + "}\n"
	src := "package p\n\n" + body + "\nfunc small() {}\n"
	chunks := ChunkCode(src, 50)
	if strings.Join(chunks, "") != src {
		t.Fatal("chunks do not tile the source")
	}
	if chunks[0] != "package p\n\n" {
		t.Fatalf("preamble chunk %q", chunks[0])
	}
	if !strings.HasPrefix(chunks[1], "func big() {\n") {
		t.Fatalf("chunks %q", chunks)
	}
	for _, c := range chunks {
		if !strings.HasSuffix(c, "\n") || utf8.RuneCountInString(c) > 50 {
			t.Fatalf("an oversized block was not split at a line: %q", c)
		}
	}
	// The tail of the split block (here the blank line after "}") shares a
	// chunk with the small function after it instead of being dropped.
	if last := chunks[len(chunks)-1]; last != "\nfunc small() {}\n" {
		t.Fatalf("last chunk %q", last)
	}
	body = "func big() {\n" + strings.Repeat("\tcall(argument)\n", 21) + "}\n"
	src = "package p\n\n" + body + "\n// Small.\nfunc small() {}\n"
	if got := ChunkCode(src, 50); strings.Join(got, "") != src || got[len(got)-1] != "\tcall(argument)\n}\n\n// Small.\nfunc small() {}\n" {
		t.Fatalf("tail not merged: %q", got)
	}
}

func TestChunkForRoutesByExtension(t *testing.T) {
	s := ChunkSettings{TextMaxChars: 20, TextOverlap: 5, CodeMaxChars: 60}
	for _, p := range []string{"a.go", "dir/b.PY", "c.tsx", "d.rs", "e.sh", "f.hpp", "g.cs"} {
		if !IsCodePath(p) {
			t.Errorf("%s should be code", p)
		}
		if got, want := ChunkFor(p, goSource, s), ChunkCode(goSource, 60); !slices.Equal(got, want) {
			t.Errorf("%s: not chunked as code", p)
		}
	}
	for _, p := range []string{"notes.md", "README", "data.json", "go.mod", "x.go.txt", "a.golang"} {
		if IsCodePath(p) {
			t.Errorf("%s should be text", p)
		}
		if got, want := ChunkFor(p, goSource, s), ChunkText(goSource, 20, 5); !slices.Equal(got, want) {
			t.Errorf("%s: not chunked as text", p)
		}
	}

	// MaxChunks stops early, for both kinds.
	s.MaxChunks = 2
	if got := ChunkFor("a.md", goSource, s); !slices.Equal(got, ChunkText(goSource, 20, 5)[:2]) {
		t.Errorf("text MaxChunks: %q", got)
	}
	s.CodeMaxChars = 20
	if got := ChunkFor("a.go", goSource, s); !slices.Equal(got, ChunkCode(goSource, 20)[:2]) {
		t.Errorf("code MaxChunks: %q", got)
	}
	s.MaxChunks = 1
	if got := ChunkFor("a.go", goSource, ChunkSettings{CodeMaxChars: 60, MaxChunks: 1}); len(got) != 1 {
		t.Errorf("code MaxChunks 1 gave %d", len(got))
	}
}

func stripSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// chunkCorpus builds about size bytes of prose or code, deterministically.
func chunkCorpus(size int, code bool) string {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"refund", "policy", "customer", "days", "the", "a", "approval", "ticket", "é", "日本"}
	var b strings.Builder
	b.Grow(size + 4096)
	for b.Len() < size {
		if code {
			b.WriteString("// Handler documents itself.\nfunc Handler" + words[r.IntN(4)] + "(x int) int {\n")
			for range 1 + r.IntN(40) {
				b.WriteString("\tx = x*3 + " + words[r.IntN(len(words))] + "\n")
			}
			b.WriteString("\treturn x\n}\n\n")
			continue
		}
		for range 3 + r.IntN(8) {
			for range 5 + r.IntN(15) {
				b.WriteString(words[r.IntN(len(words))])
				b.WriteByte(' ')
			}
			b.WriteString(". ")
			if r.IntN(4) == 0 {
				b.WriteByte('\n')
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

const benchCorpusBytes = 10 << 20

func BenchmarkChunkText10MB(b *testing.B) {
	text := chunkCorpus(benchCorpusBytes, false)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if len(ChunkText(text, 1500, 200)) == 0 {
			b.Fatal("no chunks")
		}
	}
}

func BenchmarkChunkCode10MB(b *testing.B) {
	text := chunkCorpus(benchCorpusBytes, true)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if len(ChunkCode(text, 2000)) == 0 {
			b.Fatal("no chunks")
		}
	}
}
