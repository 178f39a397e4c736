// Package embed holds the embedders the core can run without any adapter:
// today the deterministic, offline, explicitly non-semantic embedder that
// tests, demos and the RAG walkthrough use when no model is configured.
package embed

import (
	"context"
	"errors"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Bounds of the deterministic embedder.
const (
	// MaxDimensions is the widest vector NewDeterministic honours; it is the
	// upper bound of ARROWHEAD_EMBEDDING_DIMENSIONS.
	MaxDimensions = 16000
	// DefaultMaxTexts is how many texts one Embed call may carry unless
	// WithMaxTexts says otherwise (the ARROWHEAD_EMBEDDING_MAX_TEXTS default).
	DefaultMaxTexts = 10000
	// MaxTextBytes is the largest single text embedded. It is far above any
	// chunk or query the tools produce; a larger text is refused, not cut,
	// so two long texts sharing a prefix never embed identically.
	MaxTextBytes = 1 << 20
)

// Feature weights. Whole words count double a character trigram, so
// sharing a word moves two texts closer than sharing a fragment of one.
// Weights are integers so that accumulation is exact (see vector).
const (
	wordWeight    = 2
	trigramWeight = 1
)

// Feature kinds, hashed ahead of the feature's bytes so a one-letter word
// and a trigram never collide by construction.
const (
	kindWord    byte = 'w'
	kindTrigram byte = 't'
	kindRaw     byte = 'r'
)

// Errors of the deterministic embedder. Their text is fixed: it never
// carries a text or a count a caller supplied.
var (
	ErrDimensions   = errors.New("embed: dimensions must be between 1 and 16000")
	ErrTooManyTexts = errors.New("embed: too many texts in one call")
	ErrTextTooLong  = errors.New("embed: a text exceeds the size limit")
)

// Deterministic is a stable, offline embedder for tests, demos and local
// development. It is NOT semantic: it hashes lower-cased word unigrams and
// padded character trigrams into Dimensions signed buckets (64-bit FNV-1a;
// the bucket is the hash modulo the width and the sign its top bit) and
// L2-normalises the counts. Identical texts get identical vectors on every
// platform and run, and texts sharing words or word fragments score a
// higher cosine than unrelated texts, which keeps a retrieval walkthrough
// illustrative; paraphrases and synonyms are invisible to it. A text with
// no letters or digits hashes as one raw feature, so every vector is a unit
// vector, the empty text included.
//
// Deterministic is immutable and safe for concurrent use.
type Deterministic struct {
	dims     int
	maxTexts int
}

var _ ports.Embedder = (*Deterministic)(nil)

// NewDeterministic returns a deterministic embedder producing dims-wide
// vectors. A width outside 1..MaxDimensions is not rejected here (settings
// validation already bounds it); every Embed call then fails with
// ErrDimensions rather than producing vectors of a nonsensical width.
func NewDeterministic(dims int) *Deterministic {
	return &Deterministic{dims: dims, maxTexts: DefaultMaxTexts}
}

// WithMaxTexts returns a copy of d that refuses calls carrying more than n
// texts (n < 1 keeps DefaultMaxTexts). The wiring passes
// ARROWHEAD_EMBEDDING_MAX_TEXTS so both providers share the cap.
func (d *Deterministic) WithMaxTexts(n int) *Deterministic {
	c := *d
	if n >= 1 {
		c.maxTexts = n
	}
	return &c
}

// Dimensions is the width of every vector returned.
func (d *Deterministic) Dimensions() int { return d.dims }

// Semantic is false: similarity reflects shared words, not meaning.
func (d *Deterministic) Semantic() bool { return false }

// Embed returns one unit vector per text, in order. It refuses more than
// the configured number of texts and any text over MaxTextBytes, and stops
// early when ctx is done.
func (d *Deterministic) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if d.dims < 1 || d.dims > MaxDimensions {
		return nil, ErrDimensions
	}
	if len(texts) > d.maxTexts {
		return nil, ErrTooManyTexts
	}
	for _, t := range texts {
		if len(t) > MaxTextBytes {
			return nil, ErrTextTooLong
		}
	}
	out := make([][]float32, len(texts))
	counts := make([]int64, d.dims)
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(counts)
		out[i] = d.vector(t, counts)
	}
	return out, nil
}

// vector hashes the features of text into counts and normalises them.
//
// Cross-platform determinism: counts are integers, so their sum is exact in
// any order; the squared norm is an exact integer too (at most a few
// million features of weight 2 per text, far inside int64); math.Sqrt and
// one division are correctly rounded IEEE operations; and the conversion
// to float32 rounds once. No step is open to fused multiply-add or to
// summation-order differences. The one input outside this file is the
// standard library's Unicode tables (which runes are letters, and their
// lower case): a Go release adopting a new Unicode version can change the
// vectors of text using newly assigned characters; the golden test pins
// the rest.
func (d *Deterministic) vector(text string, counts []int64) []float32 {
	buckets := uint64(d.dims)
	add := func(h uint64, w int64) {
		if h>>63 == 1 {
			w = -w
		}
		counts[h%buckets] += w
	}
	features := 0
	// padded holds " word " for the current word: a run of letters and
	// digits, lower-cased rune by rune. starts holds its rune offsets, so
	// trigram i is padded[starts[i]:starts[i+3]] with no re-encoding.
	padded := make([]byte, 0, 64)
	starts := make([]int, 0, 64)
	flush := func() {
		if len(padded) <= 1 {
			return
		}
		add(fnv1a(kindWord, padded[1:]), wordWeight)
		features++
		starts = append(starts, len(padded))
		padded = append(padded, ' ')
		starts = append(starts, len(padded))
		for i := 0; i+3 < len(starts); i++ {
			add(fnv1a(kindTrigram, padded[starts[i]:starts[i+3]]), trigramWeight)
		}
		features += len(starts) - 3
		padded, starts = padded[:0], starts[:0]
	}
	for _, r := range text {
		var isWord bool
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			isWord = 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
			r, isWord = unicode.ToLower(r), true
		}
		if !isWord {
			flush()
			continue
		}
		if len(padded) == 0 {
			starts = append(starts, 0)
			padded = append(padded, ' ')
		}
		starts = append(starts, len(padded))
		padded = utf8.AppendRune(padded, r)
	}
	flush()
	sq := squaredNorm(counts)
	if features == 0 || sq == 0 {
		// Punctuation, whitespace or nothing at all (or, in a very narrow
		// vector, signed features that cancelled out): one raw feature keeps
		// the vector a unit vector and distinct texts distinct.
		clear(counts)
		add(fnv1a(kindRaw, []byte(text)), 1)
		sq = 1
	}
	norm := math.Sqrt(float64(sq))
	v := make([]float32, len(counts))
	for i, c := range counts {
		if c != 0 {
			v[i] = float32(float64(c) / norm)
		}
	}
	return v
}

func squaredNorm(counts []int64) int64 {
	var sq int64
	for _, c := range counts {
		sq += c * c
	}
	return sq
}

// 64-bit FNV-1a (the hash/fnv parameters), inlined to hash without
// allocating.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnv1a(kind byte, b []byte) uint64 {
	h := (fnvOffset ^ uint64(kind)) * fnvPrime
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}
