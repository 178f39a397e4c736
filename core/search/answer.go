package search

import (
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
)

// Vars names the settings behind a caller's caps, so that a search cut
// short can say which variable raises the bound that cut it.
type Vars struct {
	Files      string // Limits.MaxFiles
	FileBytes  string // Limits.MaxFileBytes
	TotalBytes string // Limits.MaxTotalBytes
	Results    string // Limits.MaxResults
	Deadline   string // Limits.Deadline, in milliseconds
}

// Answer is the text answer of a search tool: the summary (Summary), then
// the matches, one "path:line:column: snippet" line each, framed as
// untrusted data read from label ("repository", "corpus"). It returns the
// text and the frame's marker.
func (r Report) Answer(label, noun string, v Vars) (text, marker string) {
	var lines strings.Builder
	for _, m := range r.Matches {
		lines.WriteString(m.Path)
		lines.WriteByte(':')
		lines.WriteString(strconv.Itoa(m.Line))
		lines.WriteByte(':')
		lines.WriteString(strconv.Itoa(m.Column))
		lines.WriteString(": ")
		lines.WriteString(m.Snippet)
		lines.WriteByte('\n')
	}
	framed := content.Frame(lines.String(), content.NewSource("search", label, "text", []byte(lines.String())))
	return r.Summary(noun, v) + "\n" + framed.Text, framed.Marker
}

// SecretsNote ends the summary of every search that redacted secrets
// before matching (Report.SecretsRedacted): grep on the raw files finds
// lines such a search cannot, and the answer must not claim otherwise. It
// is one fixed sentence, said whether or not this search met a secret,
// because anything that varied with the query would let a caller guess a
// secret one character at a time.
const SecretsNote = "Secret values are redacted before matching, so text inside one is never found; this is said of every search, whether or not it met a secret."

// Summary says in words what was searched and, when a bound cut the
// search short, which one, how far the search got, and how to narrow it or
// which variable raises the bound. "No matches." stands alone only when
// every admitted file was searched. noun names the files ("files",
// "documents"). A search that redacted secrets ends with SecretsNote.
func (r Report) Summary(noun string, v Vars) string {
	var b strings.Builder
	of := r.ofListed(noun)
	switch {
	case r.Complete() && r.FilesListed == 0 && r.Prefix != "":
		// Most often a mistyped prefix: say so rather than "searched all
		// 0 files", which reads like an answer.
		b.WriteString("No matches: no " + catalog.Singular(noun) + " of a type this server serves lies under the prefix. " + catalog.PrefixRule)
	case r.Complete() && r.FilesListed == 0:
		b.WriteString("No matches: there is no " + catalog.Singular(noun) + " of a type this server serves to search.")
	case r.Complete() && len(r.Matches) == 0:
		b.WriteString("No matches. Searched " + r.all(noun) + r.where() + ".")
	case r.Complete():
		b.WriteString(catalog.Count(len(r.Matches), "matches") + ". Searched " + r.all(noun) + r.where() + ".")
	case r.ResultsTruncated:
		b.WriteString("Showing the first " + strconv.Itoa(len(r.Matches)) + " matches in path order; more exist. The result cap (" +
			setting(v.Results, strconv.Itoa(r.Limits.MaxResults)) + ") stopped the search after " + catalog.Thousands(r.reached()) + " " + of + ".")
	default:
		if len(r.Matches) == 0 {
			b.WriteString("No matches in the part searched, but the search did not finish: ")
		} else {
			b.WriteString(catalog.Count(len(r.Matches), "matches") + " in the part searched; the search did not finish: ")
		}
		switch {
		case r.DeadlineExceeded:
			b.WriteString("the time limit (" + setting(v.Deadline, strconv.FormatInt(r.Limits.Deadline.Milliseconds(), 10)) + ")")
		case r.BytesTruncated:
			b.WriteString("the byte budget (" + setting(v.TotalBytes, strconv.FormatInt(r.Limits.MaxTotalBytes, 10)) + ")")
		default:
			b.WriteString("the file cap (" + setting(v.Files, strconv.Itoa(r.Limits.MaxFiles)) + ")")
		}
		b.WriteString(" stopped it after " + catalog.Thousands(r.reached()) + " " + of + ", in path order.")
	}
	if !r.Complete() {
		b.WriteString(" Narrow the search with path_prefix")
		var raise []string
		if r.ResultsTruncated {
			raise = append(raise, v.Results)
		}
		if r.FilesTruncated {
			raise = append(raise, v.Files)
		}
		if r.BytesTruncated {
			raise = append(raise, v.TotalBytes)
		}
		if r.DeadlineExceeded {
			raise = append(raise, v.Deadline)
		}
		if raise = nonEmpty(raise); len(raise) > 0 {
			b.WriteString(", or ask the operator to raise " + strings.Join(raise, " or "))
		}
		b.WriteString(".")
	}
	if sk := r.Skipped; sk.Total() > 0 {
		var parts []string
		if sk.TooLarge > 0 {
			limit := "the per-file cap"
			if r.Limits.MaxFileBytes > 0 {
				limit += " (" + setting(v.FileBytes, strconv.FormatInt(r.Limits.MaxFileBytes, 10)) + " bytes)"
			}
			parts = append(parts, strconv.Itoa(sk.TooLarge)+" larger than "+limit)
		}
		if sk.Binary > 0 {
			parts = append(parts, strconv.Itoa(sk.Binary)+" not text")
		}
		if sk.Denied > 0 {
			parts = append(parts, strconv.Itoa(sk.Denied)+" not authorized for you")
		}
		if sk.Gone > 0 {
			parts = append(parts, strconv.Itoa(sk.Gone)+" changed, gone or unreadable when read")
		}
		b.WriteString(" Passed over " + catalog.Count(sk.Total(), noun) + ": " + strings.Join(parts, ", ") + ".")
	}
	if r.SecretsRedacted {
		b.WriteString(" " + SecretsNote)
	}
	return b.String()
}

// all is "all N files", or "the one file".
func (r Report) all(noun string) string {
	if r.FilesScanned == 1 {
		return "the one " + catalog.Singular(noun)
	}
	return "all " + catalog.Count(r.FilesScanned, noun)
}

// where qualifies "all N files" when a prefix narrowed the search.
func (r Report) where() string {
	if r.Prefix != "" {
		return " under the prefix"
	}
	return ""
}

// reached is how many listed files the search got through, searched or
// passed over.
func (r Report) reached() int { return r.FilesScanned + r.Skipped.Total() }

// ofListed is "of N files" (or "of at least N files" when the walk did
// not finish counting).
func (r Report) ofListed(noun string) string {
	if r.ListedExact {
		return "of " + catalog.Count(r.FilesListed, noun)
	}
	return "of at least " + catalog.Count(r.FilesListed, noun)
}

// setting is "NAME=value", or the value alone when the caller named no
// variable.
func setting(name, value string) string {
	if name == "" {
		return value
	}
	return name + "=" + value
}

func nonEmpty(s []string) []string {
	out := s[:0]
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
