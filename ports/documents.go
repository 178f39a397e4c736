package ports

import "context"

// WriteMode says what a document write may do to an existing document.
type WriteMode int

// Write modes.
const (
	// CreateOnly fails with ErrExists when the document exists (no-clobber).
	CreateOnly WriteMode = iota
	// Replace atomically replaces an existing document or creates it.
	Replace
)

// WriteResult describes a completed write.
type WriteResult struct {
	Path string
	Size int64
	// Created is false when an existing document was replaced.
	Created bool
	// PreviousSize is the replaced document's size (0 when created).
	PreviousSize int64
}

// DocumentStore is the jailed document corpus. Paths are relative,
// slash-separated and already validated lexically by the core; the store
// still resolves symlinks and refuses anything leaving its root, serves only
// the allowed extensions, and never lists, reads or searches its own
// temporary files. Errors are the sentinels in files.go (wrapped), never an
// os error carrying a path. Implementations are safe for concurrent use.
type DocumentStore interface {
	// Read returns a document's bytes, refusing one above maxBytes.
	Read(ctx context.Context, rel string, maxBytes int64) ([]byte, FileInfo, error)
	// Stat describes a document; ErrNotFound when absent.
	Stat(ctx context.Context, rel string) (FileInfo, error)
	// List returns the documents under prefix (a path-component prefix;
	// "" is the whole corpus) in lexical order, at most limit of them;
	// truncated reports whether more exist.
	List(ctx context.Context, prefix string, limit int) (docs []FileInfo, truncated bool, err error)
	// Write stores data atomically at rel: readers see the old document or
	// the new one, never a partial one. mode decides whether an existing
	// document may be replaced. ErrTooLarge above the per-document cap,
	// ErrQuota when the corpus quota would be exceeded.
	Write(ctx context.Context, rel string, data []byte, mode WriteMode) (WriteResult, error)
}
