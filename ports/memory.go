package ports

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Provenance says who wrote a memory or kv record: the tool, the verified
// caller, and when. It is stored with the record and returned with it.
type Provenance struct {
	Tool   string
	Caller string
	At     time.Time
}

// MemoryWrite is one memory_store call, already validated and bounded by
// the core. ID empty creates (or dedups); ID set updates that record in
// place.
type MemoryWrite struct {
	Namespace string
	ID        string
	Content   string
	// Metadata is the caller's JSON object, encoded (bounded by the core).
	Metadata []byte
	// Hash is the hex SHA-256 of Content: the dedup key within a namespace.
	Hash string
	// NewID is the id a created record takes: 128 random bits the core
	// drew, so a retried transaction never changes it.
	NewID string
	// Embedding is Content's embedding, nil unless semantic recall is
	// configured (a backend that does not recall semantically ignores it).
	Embedding  []float32
	Provenance Provenance
}

// MemoryRecord is one stored memory.
type MemoryRecord struct {
	Namespace  string
	ID         string
	Content    string
	Metadata   []byte
	Hash       string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Provenance Provenance
}

// Size is what the record counts against ARROWHEAD_MEMORY_QUOTA_BYTES.
func (r MemoryRecord) Size() int { return len(r.Content) + len(r.Metadata) }

// MemoryHit is a recalled memory and its score (higher is better).
type MemoryHit struct {
	Record MemoryRecord
	Score  float64
}

// Recall names the search a backend actually performed.
type Recall string

// Recall kinds.
const (
	RecallKeyword  Recall = "keyword"
	RecallSemantic Recall = "semantic"
)

// MemoryTerms are the words keyword recall matches: the distinct
// case-folded runs of letters and digits of text, in order of first
// appearance. Every backend ranks by the share of a query's terms a
// memory's content holds, so the same words match everywhere.
func MemoryTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// KeywordRank scores records by the fraction of the query's distinct words
// (MemoryTerms) their content contains; records with
// no word in common are left out; ties go to the newer record. It is the
// keyword recall of the backends that rank in Go rather than in a query
// (the embedded stores), so they rank alike.
func KeywordRank(recs []MemoryRecord, query string, k int) []MemoryHit {
	terms := termSet(query)
	if len(terms) == 0 {
		return nil
	}
	var hits []MemoryHit
	for _, r := range recs {
		have := termSet(r.Content)
		n := 0
		for t := range terms {
			if have[t] {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, MemoryHit{Record: r, Score: float64(n) / float64(len(terms))})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Record.UpdatedAt.After(hits[j].Record.UpdatedAt)
	})
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

func termSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range MemoryTerms(s) {
		out[f] = true
	}
	return out
}

// KVEntry is one scratchpad value.
type KVEntry struct {
	Key   string
	Value string
	// ExpiresAt is zero for a key without TTL.
	ExpiresAt  time.Time
	UpdatedAt  time.Time
	Provenance Provenance
}

// MemoryLimits are the per-owner bounds a backend enforces inside the same
// transaction as the write (ARROWHEAD_MEMORY_* and ARROWHEAD_KV_MAX_KEYS).
type MemoryLimits struct {
	MaxEntriesPerNamespace int
	MaxNamespaces          int
	QuotaBytes             int
	MaxKeys                int
}

// MemoryLimitError is a write refused by one of MemoryLimits; Var names the
// setting.
type MemoryLimitError struct{ Var string }

func (e *MemoryLimitError) Error() string { return "memory bound reached: " + e.Var }

// MemoryBackend stores memories and kv entries per owner. A missing record,
// namespace or key is ErrNotFound, and so is a foreign one: the owner is
// part of every lookup. owner is always
// the verified caller identity, never an argument; names are validated by
// the core. Every method is safe for concurrent use, and a write returns
// only once it is durable.
type MemoryBackend interface {
	// Store creates, dedups or updates. Identical content (same Hash) in
	// the namespace returns the existing record with created false and
	// changes nothing. An ID that does not exist for owner is
	// ErrNotFound.
	Store(ctx context.Context, owner string, w MemoryWrite, lim MemoryLimits) (rec MemoryRecord, created bool, err error)
	// Search recalls up to k memories of namespace relevant to query;
	// embedding is nil unless a semantic embedder is configured.
	Search(ctx context.Context, owner, namespace, query string, embedding []float32, k int) ([]MemoryHit, Recall, error)
	// List returns up to limit records of namespace, oldest first, and
	// whether more exist.
	List(ctx context.Context, owner, namespace string, limit int) ([]MemoryRecord, bool, error)
	// Delete removes one record; a missing one is ErrNotFound.
	Delete(ctx context.Context, owner, namespace, id string) error

	// KVSet stores value under key, replacing it.
	KVSet(ctx context.Context, owner string, e KVEntry, lim MemoryLimits) error
	// KVGet returns a live (unexpired as of now) entry or ErrNotFound.
	KVGet(ctx context.Context, owner, key string, now time.Time) (KVEntry, error)
	// KVDelete removes key; a missing key is ErrNotFound.
	KVDelete(ctx context.Context, owner, key string) error
}
