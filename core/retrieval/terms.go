// Package retrieval is ranked retrieval over source code and documents,
// the way pack_context answers a question: files are cut into chunks that
// are whole definitions (from the symbol extractor) or whole sections, and
// a query ranks them by three signals together: a lexical score (BM25 over
// terms that understand code: identifiers split on camelCase and
// snake_case, stop words dropped, light stemming), definitions a query
// term names (the symbols retriever), and the structure of the tree (a
// personalized PageRank over the reference graph, after Aider's repo map:
// a file defining identifiers that the matching files use ranks higher).
//
// It is pure computation: reading, authorization and caps are the calling
// tool's. A Cache keeps each file's analysis keyed on its size and
// modification time, so a warm query does no parsing.
package retrieval

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords are dropped from queries and from indexed text: English
// function words and the keywords of the common languages, which say
// nothing about what a chunk is about.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does doing done for from
		had has have how i if in into is it its itself me my no not of on or our so such than that the their them
		then there these they this those to too us was we were what when where which while who whom why will with
		would you your yes also any all each just only own same some very should may might must shall about above
		after again against before below between both during further here more most other out over under until
		up down off once get gets got goes use used uses using make makes made happen happens
		func return var const package import nil err else range break continue default case switch
		def self none true false pass elif lambda yield fn let mut pub impl void null new this`) {
		m[w] = true
	}
	return m
}()

// Terms splits text into index terms: each identifier-like word whole and
// split at camelCase, digit and snake_case boundaries, lowercased,
// stemmed, with stop words and one-letter words dropped. The same function
// indexes chunks and reads queries, so both sides agree.
func Terms(text string) []string {
	var out []string
	eachWord(text, func(word string) { out = append(out, wordTerms(word)...) })
	return out
}

// wordTerms is Terms of one word.
func wordTerms(word string) []string {
	var out []string
	parts := splitIdentifier(word)
	if len(parts) > 1 {
		if t := normalize(word); t != "" {
			out = append(out, t)
		}
	}
	for _, p := range parts {
		if t := normalize(p); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// queryTerms are a query's Terms plus each pair of adjacent words joined
// ("flag set" also looks for flagset, "go flag" for goflag), since an
// identifier is indexed whole as well as split.
func queryTerms(query string) []string {
	out := Terms(query)
	var prev string
	eachWord(query, func(w string) {
		lw := strings.ToLower(w)
		if stopWords[lw] || len(lw) < 2 {
			prev = ""
			return
		}
		if prev != "" {
			if t := normalize(prev + lw); t != "" {
				out = append(out, t)
			}
		}
		prev = lw
	})
	return out
}

// normalize lowercases, drops stop words and short words, and stems.
func normalize(w string) string {
	w = strings.ToLower(strings.Trim(w, "_"))
	w = strings.ReplaceAll(w, "_", "")
	if utf8.RuneCountInString(w) < 2 || stopWords[w] {
		return ""
	}
	return Stem(w)
}

// eachWord calls fn with each maximal run of letters, digits and
// underscores.
func eachWord(text string, fn func(string)) {
	start := -1
	for i, r := range text {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// splitIdentifier cuts an identifier at underscores and case changes:
// parseErrorsWhitelist, ParseErrorsWhitelist and parse_errors_whitelist
// all give parse, Errors/errors, Whitelist/whitelist; HTTPServer gives
// HTTP, Server. Digits stay with the letters before them.
func splitIdentifier(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(rs[start:end]))
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '_' {
			flush(i)
			start = i + 1
			continue
		}
		if i == start {
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
		case unicode.IsLetter(r) && unicode.IsDigit(prev):
			flush(i)
		}
	}
	flush(len(rs))
	return parts
}

// suffixes are stripped by Stem, longest first; each maps to what replaces it.
var suffixes = []struct{ from, to string }{
	{"ations", ""}, {"ation", ""}, {"ings", ""}, {"ing", ""}, {"ers", ""}, {"er", ""},
	{"ies", "y"}, {"ied", "y"}, {"ed", ""}, {"es", ""}, {"s", ""},
}

// Stem is a light suffix stripper (not Porter's): enough that parse,
// parses, parsed, parsing and parser meet, without merging unrelated
// words. A stem keeps at least three letters.
func Stem(w string) string {
	if len(w) <= 3 || strings.HasSuffix(w, "ss") {
		return w
	}
	for _, s := range suffixes {
		if strings.HasSuffix(w, s.from) && len(w)-len(s.from)+len(s.to) >= 3 {
			w = w[:len(w)-len(s.from)] + s.to
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// symbolKey is how a definition's name and a query phrase meet: the name
// lowercased, underscores dropped, stemmed (FlagSet and "flag sets" both
// give flagset).
func symbolKey(name string) string {
	w := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	if w == "" {
		return ""
	}
	return Stem(w)
}
