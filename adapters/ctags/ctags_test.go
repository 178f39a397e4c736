package ctags_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/ctags"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tagger returns the machine's Universal Ctags, skipping loudly when it is
// absent, or failing under ARROWHEAD_REQUIRE_INTEGRATION=1 (.ci/run
// installs universal-ctags).
func tagger(t *testing.T, cfg ctags.Config) *ctags.Tagger {
	t.Helper()
	tg, err := ctags.New(cfg)
	if err == nil {
		err = tg.Verify(context.Background())
	}
	if err != nil {
		msg := fmt.Sprintf("SKIPPING: Universal Ctags is not usable here (%v); install the universal-ctags package", err)
		if os.Getenv("ARROWHEAD_REQUIRE_INTEGRATION") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return tg
}

func TestTagSeveralLanguagesFromContent(t *testing.T) {
	tg := tagger(t, ctags.Config{})
	files := []ports.SourceFile{
		{Path: "src/a.c", Content: []byte("struct point { int x; };\n\nint add(int a, int b)\n{\n  return a + b;\n}\n")},
		{Path: "lib/b.rb", Content: []byte("module M\n  class K\n    def go\n    end\n  end\nend\n")},
		{Path: "notes.unknown-ext", Content: []byte("nothing to see\n")},
		{Path: "web/c.js", Content: []byte("function hello() {\n  return 1;\n}\nclass Greeter {\n  greet() {}\n}\n")},
	}
	got, err := tg.Tag(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("%d answers for %d files", len(got), len(files))
	}
	has := func(i int, want string) {
		t.Helper()
		var lines []string
		for _, s := range got[i] {
			lines = append(lines, fmt.Sprintf("%s %s %s %d-%d", s.Kind, s.Name, s.Parent, s.StartLine, s.EndLine))
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("%s: no %q in %q", files[i].Path, want, lines)
		}
	}
	has(0, "function add  3-6")
	has(0, "struct point  1-1")
	has(1, "class K M 2-5")
	has(1, "method go M.K 3-4")
	has(3, "function hello  1-") // parsers without end lines report EndLine = StartLine
	has(3, "method greet Greeter 5-5")
	if len(got[2]) != 0 {
		t.Errorf("an unknown language produced %v", got[2])
	}
	if tg.Name() != ctags.Name {
		t.Error(tg.Name())
	}
}

// TestTagNeverOpensTheCallerPath gives ctags a path that exists on disk
// with different content: only the content passed in may be tagged.
func TestTagNeverOpensTheCallerPath(t *testing.T) {
	tg := tagger(t, ctags.Config{})
	dir := t.TempDir()
	onDisk := filepath.Join(dir, "x.c")
	os.WriteFile(onDisk, []byte("int on_disk(void) { return 0; }\n"), 0o640)
	got, err := tg.Tag(context.Background(), []ports.SourceFile{{Path: onDisk, Content: []byte("int in_memory(void) { return 0; }\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0]) != 1 || got[0][0].Name != "in_memory" {
		t.Errorf("got %+v", got[0])
	}
}

func TestTagBounds(t *testing.T) {
	big := []ports.SourceFile{{Path: "a.c", Content: []byte(strings.Repeat("int f(void) { return 0; }\n", 2000))}}
	tg := tagger(t, ctags.Config{MaxOutputBytes: 1024})
	if _, err := tg.Tag(context.Background(), big); !errors.Is(err, ctags.ErrOutputCap) {
		t.Errorf("over the output cap = %v", err)
	}
	slow := tagger(t, ctags.Config{Timeout: time.Nanosecond})
	if _, err := slow.Tag(context.Background(), big); err == nil {
		t.Error("a run past its deadline succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tagger(t, ctags.Config{}).Tag(ctx, big); err == nil {
		t.Error("a cancelled run succeeded")
	}
}

func TestNewRefusesWhatIsNotUniversalCtags(t *testing.T) {
	if _, err := ctags.New(ctags.Config{Binary: "arrowhead-no-such-ctags"}); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing binary = %v", err)
	}
	fake := filepath.Join(t.TempDir(), "ctags")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'Exuberant Ctags 5.8'\n"), 0o750)
	tg, err := ctags.New(ctags.Config{Binary: fake})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Verify(context.Background()); !errors.Is(err, ctags.ErrNotUniversal) {
		t.Errorf("another ctags = %v", err)
	}
	if _, err := tg.Tag(context.Background(), []ports.SourceFile{{Path: "a.c", Content: []byte("int x;\n")}}); !errors.Is(err, ctags.ErrNotUniversal) {
		t.Errorf("Tag through another ctags = %v", err)
	}
}
