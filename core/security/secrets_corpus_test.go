package security_test

import (
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/security/securitytest"
)

func TestCorpusEverySecretRedacted(t *testing.T) {
	corpus := securitytest.Corpus()
	if len(corpus) != 43 {
		t.Fatalf("corpus holds %d secrets, want 43", len(corpus))
	}
	s := security.NewRandomScanner()
	file := securitytest.File(corpus)
	redacted, findings := s.Redact(file)
	for _, p := range corpus {
		for _, frag := range securitytest.Fragments(p) {
			if strings.Contains(redacted, frag) {
				t.Errorf("%s: %q survived redaction", p.Name, frag)
			}
		}
		// Each line alone: found, and named as the type the corpus says.
		got := s.ScanText("f", p.Line, 0)
		if len(got) == 0 {
			t.Errorf("%s: not found in %q", p.Name, p.Line)
			continue
		}
		types := []string{}
		for _, f := range got {
			types = append(types, string(f.Type))
		}
		if !strings.Contains(strings.Join(types, ","), p.Type) {
			t.Errorf("%s: found as %v, want %s", p.Name, types, p.Type)
		}
	}
	if len(findings) < len(corpus) {
		t.Errorf("%d findings for %d secrets", len(findings), len(corpus))
	}
}

// TestNormalizedFormsCaught plants keys hidden by invisible characters and
// compatibility forms: each is found, the whole original span (invisible
// characters included) is replaced, and the tag is the plain key's.
func TestNormalizedFormsCaught(t *testing.T) {
	s := security.NewRandomScanner()
	plain := "AKIAQX3MZ7T2LJ5KD9WE"
	_, want := s.Redact(plain)
	fullwidth := "ＡＫＩＡＱＸ３ＭＺ７Ｔ２ＬＪ５ＫＤ９ＷＥ"
	cases := map[string]string{
		"zero-width space":  "AKIA\u200bQX3MZ7T2LJ5KD9WE",
		"zero-width joiner": "AKIAQX3MZ7\u200dT2LJ5KD9WE",
		"soft hyphen":       "AKIAQX3\u00adMZ7T2LJ5KD9WE",
		"word joiner+bom":   "AK\u2060IAQX3MZ7T2LJ5\ufeffKD9WE",
		"fullwidth":         fullwidth,
		"mixed":             "ＡＫＩＡQX3MZ7\u200bT2LJ5KD9WE",
	}
	for name, hidden := range cases {
		t.Run(name, func(t *testing.T) {
			text := "key = " + hidden + " (rotated)\nnext line"
			out, got := s.Redact(text)
			if len(got) != 1 || got[0].Type != security.SecretAWSAccessKeyID {
				t.Fatalf("findings %+v", got)
			}
			if got[0].Placeholder != want[0].Placeholder {
				t.Errorf("placeholder %s, want the plain key's %s", got[0].Placeholder, want[0].Placeholder)
			}
			if wantOut := "key = " + want[0].Placeholder + " (rotated)\nnext line"; out != wantOut {
				t.Errorf("redacted %q, want %q", out, wantOut)
			}
		})
	}
	// A non-ASCII text keeps its other characters and their positions.
	out, _ := s.Redact("naïve café — token ghp_" + strings.Repeat("aB3dE5", 6) + " ünïcode")
	if !strings.HasPrefix(out, "naïve café — token [REDACTED:GITHUB_TOKEN:") || !strings.HasSuffix(out, "] ünïcode") {
		t.Errorf("redacted %q", out)
	}
}

func TestKnownServerSecrets(t *testing.T) {
	llm := "zz-9f8e7d6c5b4a39281706" // no vendor shape
	signing := "whsec_" + "c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw=="
	dsn := "postgres://app:Qw3rty!Passw0rdZ@db.example:5432/app"
	weak := "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	kv := "host=db user=app password=S3cretKvPass9 dbname=app"
	s := security.NewRandomScanner().WithKnown(llm, signing, dsn, weak, kv, "short", "")
	text := strings.Join([]string{
		"model key " + llm,
		"signing " + signing,
		"dsn " + dsn,
		"password alone: Qw3rty!Passw0rdZ.",
		"kv password S3cretKvPass9 here",
		"the postgres database and a short word",
	}, "\n")
	out, findings := s.Redact(text)
	for _, raw := range []string{llm, signing, "Qw3rty!Passw0rdZ", "S3cretKvPass9", "c2VjcmV0LXNpZ25p"} {
		if strings.Contains(out, raw) {
			t.Errorf("%q survived: %s", raw, out)
		}
	}
	// The weak test password and short values are not looked for alone.
	if !strings.Contains(out, "the postgres database and a short word") {
		t.Errorf("plain words redacted: %s", out)
	}
	n := 0
	for _, f := range findings {
		if f.Type == security.SecretServerSecret {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d server-secret findings, want 5: %+v", n, findings)
	}
}
