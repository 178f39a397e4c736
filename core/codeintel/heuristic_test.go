package codeintel_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
)

func TestHeuristicSymbols(t *testing.T) {
	src := `// a comment about class Foo is not matched? it is prose
export default class Widget extends Base {
  render() {}
}
pub(crate) async fn handle(req: Request) -> Response {
pub struct Point { x: i32 }
impl Point {
export async function load(url) {
const add = (a, b) => a + b;
public static final class Inner {
def greet(name)
  def self.build
build() {
fun main() {
`
	var got []string
	for _, s := range codeintel.HeuristicSymbols([]byte(src)) {
		if s.EndLine != s.StartLine || s.Parent != "" {
			t.Errorf("%+v: a heuristic cannot know spans or parents", s)
		}
		got = append(got, fmt.Sprintf("%s:%s:%d", s.Kind, s.Name, s.StartLine))
	}
	want := []string{"class:Widget:2", "function:render:3", "function:handle:5", "struct:Point:6", "impl:Point:7", "function:load:8",
		"function:add:9", "class:Inner:10", "function:greet:11", "function:build:12", "function:build:13", "function:main:14"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestNativeExtractor(t *testing.T) {
	for p, want := range map[string]string{"a/b.go": codeintel.ExtractorGo, "x.py": codeintel.ExtractorPython,
		"x.pyi": codeintel.ExtractorPython, "x.rs": "", "go.mod": ""} {
		if got := codeintel.NativeExtractor(p); got != want {
			t.Errorf("NativeExtractor(%q) = %q", p, got)
		}
	}
	for p, want := range map[string]bool{"a.go": true, "README.md": false, "go.mod": false, "x/go.mod": false, "c.yaml": false, "m.rs": true} {
		if codeintel.HasSymbols(p) != want {
			t.Errorf("HasSymbols(%q) != %v", p, want)
		}
	}
}

func TestGoSymbolsShapes(t *testing.T) {
	src := []byte(`package p

// Doc comments are not part of a span.
type Lone struct {
	x int
}

type (
	A int
	B[T any] struct{ v T }
)

func F() {}

func (b *B[T]) Get() T {
	return b.v
}

func (a A) String() string { return "" }

func (broken
`)
	var got []string
	for _, s := range codeintel.GoSymbols(src) {
		got = append(got, fmt.Sprintf("%s %s %s %d-%d", s.Kind, s.Name, s.Parent, s.StartLine, s.EndLine))
	}
	want := []string{"type Lone  4-6", "type A  9-9", "type B  10-10", "function F  13-13", "method Get B 15-17", "method String A 19-19"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
