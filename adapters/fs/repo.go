package fs

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults for RepoConfig, matching ARROWHEAD_REPO_ROOT,
// ARROWHEAD_REPO_MAX_FILE_BYTES, ARROWHEAD_REPO_ALLOWED_EXTENSIONS and
// ARROWHEAD_REPO_EXCLUDED_DIRS.
const (
	DefaultRepoRoot         = "repo"
	DefaultRepoMaxFileBytes = 500_000
)

var (
	defaultRepoExtensions = strings.Split(".c,.cpp,.cs,.go,.h,.hpp,.java,.js,.json,.jsx,.kt,.md,.php,.py,.pyi,.rb,.rs,.scala,.sh,.sql,.swift,.toml,.ts,.tsx,.txt,.yaml,.yml", ",")
	defaultExcludedDirs   = strings.Split(".git,.hg,.svn,.venv,node_modules,__pycache__,dist,build,target", ",")
)

// ErrRepoRootMissing is OpenRepo's refusal when the root is not an
// existing directory: the repository is never created, since nothing
// writes it.
var ErrRepoRootMissing = errors.New("the repository root is not an existing directory")

// RepoConfig configures OpenRepo. Empty lists and a zero or negative size
// take their defaults: there is no "unlimited" and no "everything".
type RepoConfig struct {
	// Root is the source tree; it must exist.
	Root string
	// Extensions are the allowed final extensions (".go"), lowercased;
	// matching is case-sensitive.
	Extensions []string
	// Names are exact base names served whatever their extension, such as
	// "go.mod", which dependency_graph reads for module paths.
	Names []string
	// ExcludedDirs are directory names pruned from every walk and
	// unreachable by a direct path. They match case-insensitively, so a
	// case-insensitive filesystem cannot reach ".git" as ".GIT".
	ExcludedDirs []string
	// MaxFileBytes caps a single file read, whatever the caller asks.
	MaxFileBytes int64
}

// Repo is the read-only repository jail. It implements ports.RepoStore on
// the same verified tree as the document corpus (a symlink anywhere in a
// path is refused), adds the excluded directories (pruned from walks,
// not found by direct path) and refuses binary content: a file holding a
// NUL byte anywhere is not text (the test git and grep apply), whatever
// its extension. Nothing in Repo creates, changes or removes a file.
//
// A search reads through a ReadSession (OpenReadSession), as for the
// corpus. Repo is safe for concurrent use.
type Repo struct {
	tree
}

var _ ports.RepoStore = (*Repo)(nil)

// OpenRepo opens an existing source tree read-only.
func OpenRepo(cfg RepoConfig) (*Repo, error) {
	exts, err := extensionSet(orDefault(cfg.Extensions, defaultRepoExtensions))
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(cfg.Names))
	for _, n := range cfg.Names {
		if n == "" || strings.ContainsAny(n, `/\`) || strings.ContainsFunc(n, isControl) || n == "." || n == ".." {
			return nil, errors.New("a repository file name is malformed")
		}
		names[n] = true
	}
	excluded := make(map[string]bool)
	for _, e := range orDefault(cfg.ExcludedDirs, defaultExcludedDirs) {
		e = strings.TrimSpace(e)
		if e == "" || strings.ContainsAny(e, `/\`) || strings.ContainsFunc(e, isControl) {
			return nil, errors.New("an excluded directory name is malformed")
		}
		excluded[strings.ToLower(e)] = true
	}
	abs, err := filepath.Abs(cmp.Or(cfg.Root, DefaultRepoRoot))
	if err != nil {
		return nil, errors.New("resolving the repository root failed")
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, ErrRepoRootMissing
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, ioFailure("opening the repository root", err)
	}
	return &Repo{tree: tree{
		root:    r,
		beneath: openBeneath(r, abs),
		dir:     abs,
		exts:    exts,
		names:   names,
		maxRead: positiveOr(cfg.MaxFileBytes, DefaultRepoMaxFileBytes),
		hidden:  func(name string) bool { return excluded[strings.ToLower(name)] },
		vet:     refuseBinary,
		// A name outside both lists is refused as a type, so code_read
		// can say which setting serves it instead of "not found".
		typeRefusal: ports.ErrFileType,
	}}, nil
}

func orDefault(list, def []string) []string {
	if len(list) == 0 {
		return def
	}
	return list
}

// refuseBinary is the repository's content sniff.
func refuseBinary(data []byte) error {
	if bytes.IndexByte(data, 0) >= 0 {
		return ports.ErrBinary
	}
	return nil
}

// Close releases the root directory handle.
func (r *Repo) Close() error { return r.close() }

// Dir returns the absolute repository root.
func (r *Repo) Dir() string { return r.dir }

// MaxFileBytes returns the per-file cap.
func (r *Repo) MaxFileBytes() int64 { return r.maxRead }

// Read returns a file's text (see ports.RepoStore).
func (r *Repo) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	return r.readInto(ctx, rel, maxBytes, nil)
}

// ReadInto is Read appending into buf[:0], so a search can reuse buffers.
func (r *Repo) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	return r.readInto(ctx, rel, maxBytes, buf)
}

// Stat describes a file without reading it.
func (r *Repo) Stat(ctx context.Context, rel string) (ports.FileInfo, error) {
	return r.stat(ctx, rel)
}

// List returns the files under prefix in lexical order (see
// ports.RepoStore), never descending into an excluded directory.
func (r *Repo) List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
	return r.list(ctx, prefix, limit)
}

// OpenReadSession starts a ReadSession over the repository; it implements
// search.SessionOpener.
func (r *Repo) OpenReadSession() search.ReadSession { return &ReadSession{t: &r.tree} }
