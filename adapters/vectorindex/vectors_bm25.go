package vectorindex

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// The embedded index's keyword ranking: Okapi BM25 over per-tenant
// postings, with a small tokenizer (lowercase, stopwords, plural folding).
//
// Why not SQLite FTS5's bm25() (modernc.org/sqlite has FTS5), now that the
// index is persisted in SQLite: bm25() takes its statistics (document
// count, average length, each term's document frequency) from the whole
// FTS table, so across every tenant of a collection. One tenant's writes
// then reorder another tenant's keyword results: with tenant A holding
// d1 "zebra quokka quokka quokka lion" and d2 "zebra zebra zebra quokka
// lion", "zebra quokka" ranked d1 first after tenant B stored 50 chunks
// with "zebra" and d2 first after B stored 50 with "quokka" (measured on
// modernc.org/sqlite v1.62). That is a channel between tenants, which
// never meet here, and no per-tenant table is possible at
// MaxVectorTenants x MaxVectorCollections. Its IDF, log((N-n+0.5)/(n+0.5))
// floored at 1e-6, also stops ranking a term held by half of a small
// corpus (A alone: d1 and d2 both scored -0.0000), and FTS5 has neither
// stopwords nor plural folding ("refund" did not match "refunds"). So the
// postings stay in memory, per tenant, built from the store's rows on the
// tenant's first keyword query (indexKeywords).

const (
	// Okapi BM25 parameters (the usual defaults).
	bm25K1 = 1.2
	bm25B  = 0.75

	// maxTokenBytes drops longer "words" (base64 blobs, minified code) from
	// the keyword index; they are never useful query terms.
	maxTokenBytes = 128
)

type scored64 struct {
	slot  uint32
	score float64
}

// keyword returns up to n live slots holding every term of query, ranked by
// Okapi BM25 (ties by id).
func (t *vtenant) keyword(query string, n int) []scored64 {
	counts, _ := tokenize(query)
	if len(counts) == 0 || t.live == 0 {
		return nil
	}
	t.indexKeywords()
	type qterm struct {
		term string
		id   uint32
	}
	qs := make([]qterm, 0, len(counts))
	for term := range counts {
		id, ok := t.terms[term]
		if !ok || t.df[id] == 0 {
			return nil // every term must match
		}
		qs = append(qs, qterm{term, id})
	}
	// Rarest term first: it bounds the candidates; the fixed order also
	// fixes the floating-point summation order.
	slices.SortFunc(qs, func(a, b qterm) int {
		if c := cmp.Compare(t.df[a.id], t.df[b.id]); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	nDocs := float64(t.live)
	avgLen := float64(t.totalLen) / nDocs
	if avgLen == 0 {
		avgLen = 1
	}
	var acc map[uint32]float64
	for i, q := range qs {
		df := float64(t.df[q.id])
		idf := math.Log(1 + (nDocs-df+0.5)/(df+0.5))
		next := make(map[uint32]float64, min(int(df), 1<<16))
		for _, p := range t.postings[q.id] {
			c := &t.chunks[p.slot]
			if !c.alive || c.gen != p.gen {
				continue
			}
			prev, ok := acc[p.slot]
			if i > 0 && !ok {
				continue
			}
			tf := float64(p.tf)
			norm := tf + bm25K1*(1-bm25B+bm25B*float64(c.length)/avgLen)
			next[p.slot] = prev + idf*tf*(bm25K1+1)/norm
		}
		acc = next
		if len(acc) == 0 {
			return nil
		}
	}
	return t.best(acc, n)
}

// best returns the n highest scores, best first, ties broken by chunk id.
func (t *vtenant) best(scores map[uint32]float64, n int) []scored64 {
	out := make([]scored64, 0, len(scores))
	for slot, score := range scores {
		out = append(out, scored64{slot: slot, score: score})
	}
	slices.SortFunc(out, func(a, b scored64) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(t.chunks[a.slot].id, t.chunks[b.slot].id)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// stopwords is a deliberately tiny list; every entry is also a stopword of
// Postgres's english configuration, so the embedded index never matches
// less than Postgres on them.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "for": true, "from": true, "in": true, "is": true, "it": true, "of": true,
	"on": true, "or": true, "that": true, "the": true, "to": true, "was": true, "with": true,
}

// tokenize lowercases s, splits it on anything that is not a letter or a
// digit, drops stopwords and over-long tokens, folds plurals, and returns
// the term frequencies and the token count.
func tokenize(s string) (map[string]uint32, int) {
	counts := map[string]uint32{}
	n := 0
	for field := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(field) > maxTokenBytes {
			continue
		}
		w := strings.ToLower(field)
		if stopwords[w] {
			continue
		}
		counts[fold(w)]++
		n++
	}
	return counts, n
}

// fold is Harman's S-stemmer: it folds regular English plurals onto their
// singular so "refunds" matches "refund", as Postgres's stemmer would.
func fold(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:len(w)-1]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}
