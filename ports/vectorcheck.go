package ports

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// The argument bounds and checks every vector store applies, in one place,
// so the embedded index and pgvector refuse the same calls the same way
// (adapters/vectortest holds both to it). The key sizes are PostgreSQL's:
// a (tenant, source, chunk_index) entry of the position index must fit a
// btree row (2704 bytes).
const (
	MaxVectorTenantBytes = 512
	MaxVectorIDBytes     = 1024
	MaxVectorHashBytes   = 1024
	MaxVectorSourceBytes = 2048
	// MaxVectorContentBytes bounds one chunk (the default chunker cuts at
	// 1,500 characters, at most 6,000 bytes); it also keeps PostgreSQL's
	// generated tsvector far below its 1 MB limit.
	MaxVectorContentBytes = 64 << 10
	// MaxVectorQueryBytes bounds a hybrid query's text.
	MaxVectorQueryBytes = 16 << 10
	// DefaultVectorMaxK is ARROWHEAD_PGVECTOR_MAX_K's default; MaxVectorK
	// the largest configurable k.
	DefaultVectorMaxK = 50
	MaxVectorK        = 10_000
	// MaxVectorCandidateMultiplier and MaxVectorRRFK bound HybridOptions.
	MaxVectorCandidateMultiplier = 100
	MaxVectorRRFK                = 1_000_000
	// DefaultVectorLanguage is the full-text configuration used when
	// HybridOptions.Language is empty.
	DefaultVectorLanguage = "english"
)

// Errors of the vector stores, found under the *VectorError they return.
// None carries a caller's value.
var (
	ErrVectorConfig     = errors.New("invalid vector store configuration")
	ErrVectorCollection = errors.New("collection is not allow-listed")
	ErrVectorArgument   = errors.New("invalid vector store argument")
	ErrVectorDimension  = errors.New("embedding width does not match the collection")
	ErrVectorNonFinite  = errors.New("embedding has a value that is not a finite number")
	ErrVectorZeroNorm   = errors.New("embedding has zero length")
	ErrVectorK          = errors.New("k is outside the allowed range")
	ErrVectorTooLarge   = errors.New("a vector store size limit was reached")
	ErrVectorIDConflict = errors.New("chunk id or position is held by another chunk")
)

// ValidVectorIdentifier is the strict guard for collection, column and
// language names, which become table and bucket names:
// ^[a-z_][a-z0-9_]{0,62}$, checked without a regexp so that nothing is
// compiled at start-up.
func ValidVectorIdentifier(s string) bool {
	if len(s) < 1 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ValidVectorText is what a PostgreSQL text column stores: valid UTF-8
// without NUL. Both stores refuse the rest, so they agree.
func ValidVectorText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

func vectorFail(kind VectorErrorKind, err error) error { return &VectorError{Kind: kind, Err: err} }

// CheckVectorMaxK resolves a configured max k (0 means DefaultVectorMaxK).
func CheckVectorMaxK(maxK int) (int, error) {
	if maxK == 0 {
		maxK = DefaultVectorMaxK
	}
	if maxK < 1 || maxK > MaxVectorK {
		return 0, fmt.Errorf("%w: max k must be between 1 and %d", ErrVectorConfig, MaxVectorK)
	}
	return maxK, nil
}

// CheckVectorKey accepts a non-empty text of at most max bytes.
func CheckVectorKey(s string, max int) error {
	if s == "" || len(s) > max || !ValidVectorText(s) {
		return vectorFail(VectorFailed, ErrVectorArgument)
	}
	return nil
}

// CheckVectorSource checks a tenant and a source path (Hashes, Truncate).
func CheckVectorSource(tenant, source string) error {
	if err := CheckVectorKey(tenant, MaxVectorTenantBytes); err != nil {
		return err
	}
	return CheckVectorKey(source, MaxVectorSourceBytes)
}

// CheckVectorPrefix checks a tenant and a Sources path prefix (which may
// be empty).
func CheckVectorPrefix(tenant, prefix string) error {
	if err := CheckVectorKey(tenant, MaxVectorTenantBytes); err != nil {
		return err
	}
	if len(prefix) > MaxVectorSourceBytes || !ValidVectorText(prefix) {
		return vectorFail(VectorFailed, ErrVectorArgument)
	}
	return nil
}

// CheckVectorEmbedding refuses a wrong width, a non-finite value and the
// zero vector, whose direction (and cosine distance) is undefined.
func CheckVectorEmbedding(v []float32, dim int) error {
	if len(v) != dim {
		return vectorFail(VectorDimension, ErrVectorDimension)
	}
	zero := true
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return vectorFail(VectorFailed, ErrVectorNonFinite)
		}
		zero = zero && f == 0
	}
	if zero {
		return vectorFail(VectorFailed, ErrVectorZeroNorm)
	}
	return nil
}

// CheckVectorQuery checks a search's tenant, embedding and k.
func CheckVectorQuery(tenant string, embedding []float32, k, maxK, dim int) error {
	if err := CheckVectorKey(tenant, MaxVectorTenantBytes); err != nil {
		return err
	}
	if k < 1 || k > maxK {
		return vectorFail(VectorLimit, ErrVectorK)
	}
	return CheckVectorEmbedding(embedding, dim)
}

// CheckHybridOptions checks a hybrid query's text and fusion options and
// returns the full-text language (DefaultVectorLanguage when empty).
func CheckHybridOptions(query string, opt HybridOptions) (string, error) {
	if len(query) > MaxVectorQueryBytes || !ValidVectorText(query) {
		return "", vectorFail(VectorFailed, ErrVectorArgument)
	}
	if opt.RRFK < 0 || opt.RRFK > MaxVectorRRFK ||
		opt.CandidateMultiplier < 1 || opt.CandidateMultiplier > MaxVectorCandidateMultiplier {
		return "", vectorFail(VectorLimit, ErrVectorArgument)
	}
	lang := opt.Language
	if lang == "" {
		lang = DefaultVectorLanguage
	}
	if !ValidVectorIdentifier(lang) {
		return "", vectorFail(VectorFailed, ErrVectorArgument)
	}
	return lang, nil
}

// CheckVectorChunk checks one chunk for Upsert.
func CheckVectorChunk(ch Chunk, dim int) error {
	if err := CheckVectorSource(ch.Tenant, ch.Source); err != nil {
		return err
	}
	if err := CheckVectorKey(ch.ID, MaxVectorIDBytes); err != nil {
		return err
	}
	if ch.Index < 0 || ch.Index > math.MaxInt32 {
		return vectorFail(VectorFailed, ErrVectorArgument)
	}
	if len(ch.Hash) > MaxVectorHashBytes || !ValidVectorText(ch.Hash) || !ValidVectorText(ch.Content) {
		return vectorFail(VectorFailed, ErrVectorArgument)
	}
	if len(ch.Content) > MaxVectorContentBytes {
		return vectorFail(VectorLimit, ErrVectorTooLarge)
	}
	return CheckVectorEmbedding(ch.Embedding, dim)
}

// CheckVectorTruncate checks Truncate's arguments and returns keep capped
// at the largest chunk index.
func CheckVectorTruncate(tenant, source string, keep int) (int, error) {
	if err := CheckVectorSource(tenant, source); err != nil {
		return 0, err
	}
	if keep < 0 {
		return 0, vectorFail(VectorFailed, ErrVectorArgument)
	}
	return min(keep, math.MaxInt32), nil
}
