package tokenizer_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/tokenizer"
	"github.com/arrowhead-go/arrowhead/ports"
)

var _ ports.Tokenizer = (*tokenizer.Tokenizer)(nil)

// failingTransport fails the test if anything tries the network.
type failingTransport struct{ t *testing.T }

func (f failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("the tokenizer reached the network: %s", r.URL.Host)
	return nil, http.ErrNotSupported
}

// The expected encodings are OpenAI's published ones for cl100k_base (the
// "How to count tokens with tiktoken" cookbook), an oracle independent of
// this library.
func TestPublishedEncodings(t *testing.T) {
	saved := http.DefaultTransport
	http.DefaultTransport = failingTransport{t}
	t.Cleanup(func() { http.DefaultTransport = saved })
	t.Setenv("TIKTOKEN_CACHE_DIR", t.TempDir())

	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "cl100k_base" {
		t.Fatalf("Name = %q", tok.Name())
	}
	for text, want := range map[string][]int{
		"tiktoken is great!":           {83, 1609, 5963, 374, 2294, 0},
		"antidisestablishmentarianism": {519, 85342, 34500, 479, 8997, 2191},
		"2 + 2 = 4":                    {17, 489, 220, 17, 284, 220, 19},
	} {
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", text, got, want)
		}
		if got := tok.Count(text); got != len(want) {
			t.Errorf("Count(%q) = %d, want %d", text, got, len(want))
		}
	}
	for text, want := range map[string]int{"お誕生日おめでとう": 9, "": 0} {
		if got := tok.Count(text); got != want {
			t.Errorf("Count(%q) = %d, want %d", text, got, want)
		}
	}
	// Special-token text counts as ordinary text, never as one token.
	if got := tok.Count("<|endoftext|>"); got <= 1 {
		t.Errorf("special token text counted as %d", got)
	}
}
