package ports

import (
	"context"
	"errors"
)

// ErrBinary refuses a repository file whose content is not text (found by
// a content sniff, whatever its extension). Its text carries no path.
var ErrBinary = errors.New("is not a text file")

// ErrFileType refuses a repository path whose name is neither an allowed
// extension nor an allowed exact name. It is decided from the name alone,
// before the tree is touched, so it says nothing about whether such a file
// exists; a caller reports it as a type refusal, never as "not found".
var ErrFileType = errors.New("is not a served file type")

// RepoStore is the read-only, jailed source tree the repo tools read and
// search, separate from the document corpus: code_search, code_read,
// symbol_map and dependency_graph, and the context packer's pinned and
// retrieved repository files, all go through it. Paths are relative and
// slash-separated; the store validates them itself and refuses:
//
//   - a path leaving the root, or a symlink anywhere in it, wherever it
//     points (ErrOutsideJail);
//   - a path through an excluded directory (.git, node_modules, ...)
//     (ErrNotFound: such a file cannot exist as far as a caller can tell,
//     so .git/config is not found);
//   - a name that is neither an allowed extension nor an allowed exact
//     name (ErrFileType, decided from the name alone);
//   - a file above the per-file cap (ErrTooLarge), one that is not a
//     regular file (ErrNotRegular), and one whose content is not text
//     (ErrBinary).
//
// List prunes the excluded directories from its walk and never lists what
// Read would refuse for its name; a listed file may still be refused by
// Read (binary content, grown past the cap, removed meanwhile), so a
// caller walking many files skips such refusals. The store has no write
// method: it is read-only by construction. Authorization is the caller's
// job (KindRepoFile), before it reads. Errors are the sentinels in
// files.go and above (wrapped), never an os error carrying a path.
//
// Implementations are safe for concurrent use; List and Read are not
// atomic together (the tree may change between them).
type RepoStore interface {
	// Read returns a file's bytes, refusing one above maxBytes or above
	// the store's own per-file cap, whichever is lower (maxBytes <= 0
	// means the store's cap).
	Read(ctx context.Context, rel string, maxBytes int64) ([]byte, FileInfo, error)
	// Stat describes a file without reading it (so without the binary
	// sniff); ErrNotFound when absent or excluded.
	Stat(ctx context.Context, rel string) (FileInfo, error)
	// List returns the files under prefix (a path-component prefix; "" is
	// the whole tree) in lexical order, at most limit of them; truncated
	// reports whether more exist. limit must be positive.
	List(ctx context.Context, prefix string, limit int) (files []FileInfo, truncated bool, err error)
}
