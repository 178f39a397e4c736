package docs_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/search"
)

// TestDocSearchSaysWhatRedactionHides: a document holding an AWS key and
// a line naming its prefix. grep finds both lines for "AKIA"; doc_search
// redacts before matching and finds one, so its answer says that text
// inside a secret is never found, in the text and the structure, and a
// right guess at the key reads exactly as a wrong one. With
// ARROWHEAD_REDACT_READS=false it finds both and makes no claim.
func TestDocSearchSaysWhatRedactionHides(t *testing.T) {
	files := map[string]string{"keys.txt": "AKIA prefixes an AWS access key id.\nkey = AKIAZ4QW7NRT3XKPLM2C\n"}
	e := newEnv(t, nil, files)
	cmd := exec.Command("grep", "-c", "-F", "AKIA", "keys.txt")
	cmd.Dir = e.root
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("grep: %q %v", out, err)
	}
	answer := func(e env, q string) (text string, matches int, redacted any) {
		res, te := coretest.Call(t, e.app, alice, "doc_search", map[string]any{"query": q})
		if te != nil {
			t.Fatal(te)
		}
		first, _, _ := strings.Cut(res.Text, "\n")
		return first, len(res.Structured()["matches"].([]any)), res.Structured()["secrets_redacted"]
	}
	text, n, red := answer(e, "AKIA")
	if want := "1 match. Searched the one document. " + search.SecretsNote; text != want || n != 1 || red != true {
		t.Errorf("got %q, %d matches, secrets_redacted %v; want %q", text, n, red, want)
	}
	right, _, _ := answer(e, "AKIAZ4QW")
	wrong, _, _ := answer(e, "AKIAZ4QX")
	if right != wrong {
		t.Errorf("a guess shows: %q vs %q", right, wrong)
	}
	off := newEnv(t, map[string]string{"ARROWHEAD_REDACT_READS": "false"}, files)
	if text, n, red := answer(off, "AKIA"); n != 2 || strings.Contains(text, search.SecretsNote) || red != false {
		t.Errorf("redaction off: %q, %d matches, secrets_redacted %v", text, n, red)
	}
}
