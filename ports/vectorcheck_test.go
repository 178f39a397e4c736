package ports_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// TestValidVectorIdentifierMatchesItsPattern holds the hand-written guard
// to the pattern it documents, compiled by the regexp package.
func TestValidVectorIdentifierMatchesItsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	cases := []string{"", "a", "_", "doc_chunks", "a1", "1a", "A", "a-b", "a b", "é", "a\x00", "_9",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "english", "english; drop", "z" + strings.Repeat("9", 62)}
	alphabet := "az_09AZ-"
	for _, a := range alphabet {
		for _, b := range alphabet {
			cases = append(cases, string(a)+string(b), string(a), string(a)+string(b)+"x")
		}
	}
	for _, c := range cases {
		if got, want := ports.ValidVectorIdentifier(c), pattern.MatchString(c); got != want {
			t.Errorf("ValidVectorIdentifier(%q) = %v, the pattern says %v", c, got, want)
		}
	}
}
