package catalog

import (
	"strconv"
	"strings"
)

// Count writes n with thousands separators and its noun, given in the
// plural and made singular for one ("1 match", "2 matches", "1 memory"):
// the one way a tool's text counts things.
func Count(n int, noun string) string {
	if n == 1 {
		noun = Singular(noun)
	}
	return Thousands(n) + " " + noun
}

// Thousands writes n with comma thousands separators (9,354).
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Singular is the singular of an English plural as tools' texts use them
// ("matches", "memories", "files").
func Singular(noun string) string {
	switch {
	case strings.HasSuffix(noun, "ies"):
		return strings.TrimSuffix(noun, "ies") + "y"
	case strings.HasSuffix(noun, "ches"), strings.HasSuffix(noun, "shes"), strings.HasSuffix(noun, "xes"):
		return strings.TrimSuffix(noun, "es")
	}
	return strings.TrimSuffix(noun, "s")
}
