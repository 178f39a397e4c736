package ports

import (
	"context"
	"errors"
	"time"
)

// File-access errors. Their text is caller-safe: none carries a path.
var (
	ErrNotFound    = errors.New("not found")
	ErrTooLarge    = errors.New("exceeds the size limit")
	ErrOutsideJail = errors.New("resolves outside the allowed root")
	ErrNotRegular  = errors.New("is not a regular file")
	ErrExists      = errors.New("already exists")
	ErrQuota       = errors.New("the storage quota is exhausted")
	// ErrNotDocument refuses a path that cannot name a document (an
	// extension outside the allowed set, a reserved temporary name).
	ErrNotDocument = errors.New("is not an allowed document name")
)

// ErrOutcomeUnknown is a write whose commit was sent but never answered
// (the connection dropped, or the store stalled past the deadline, after
// the commit left): it may or may not have been applied. Every store
// whose writes can end this way says so with this error rather than a
// generic failure; repeating the write is safe where the port says how.
var ErrOutcomeUnknown = errors.New("the write may or may not have been applied")

// ErrStoreFull is a write a store refused, whole and unapplied, because
// its disk is full. Deletes still work there, so a caller can free space.
var ErrStoreFull = errors.New("the store's disk is full")

// FileInfo describes a file inside a jail.
type FileInfo struct {
	// Path is the slash-separated path relative to the jail root.
	Path    string
	Size    int64
	ModTime time.Time
}

// FileJail reads regular files under one root directory. Paths are relative
// and already validated by the core; the jail still resolves every symlink
// and refuses anything that leaves the root. Errors are the sentinels above
// (wrapped), never an os error carrying the path. Safe for concurrent use.
type FileJail interface {
	ReadFile(ctx context.Context, rel string, maxBytes int64) ([]byte, FileInfo, error)
}
