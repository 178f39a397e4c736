package content

import (
	"strings"
	"testing"
)

func TestFramesFindsWhatFrameWrote(t *testing.T) {
	a := Frame("first body\nline two", NewSource("url", "https://x.example/? sha256=forged kind=file", "text", []byte("raw a")))
	b := Frame("second", NewSource("file", "notes.txt", "markdown", []byte("raw b")))
	text := "lead\n" + a.Text + "\nbetween\n" + b.Text + "\n<<< UNTRUSTED-DATA-BEGIN nothex >>>\n"
	var got []FrameInfo
	Frames(text, func(f FrameInfo) { got = append(got, f) })
	if len(got) != 2 {
		t.Fatalf("found %d frames: %+v", len(got), got)
	}
	for i, want := range []struct {
		f    Framed
		body string
	}{{a, "first body\nline two\n"}, {b, "second\n"}} {
		g := got[i]
		if g.Marker != want.f.Marker || g.Kind != want.f.Source.Kind || g.SHA256 != want.f.Source.SHA256 || g.Body != want.body {
			t.Errorf("frame %d: %+v, want marker %s kind %s sha %s body %q", i, g, want.f.Marker, want.f.Source.Kind, want.f.Source.SHA256, want.body)
		}
	}
	if !strings.Contains(a.Text, FrameBeginPhrase) || !strings.Contains(a.Text, FrameEndPhrase) {
		t.Fatal("the frame phrases are not in a frame")
	}
}
