package wire

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/adapters/ctags"
	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// openRepo opens the repository jail and finds universal-ctags. A root
// that is not an existing directory is not an error: the seed's default
// ("repo") usually does not exist, and the repo tools then refuse as not
// configured while the rest of the server runs. Both results are nil
// interfaces when absent.
func (rt *Runtime) openRepo(s *settings.Settings) (ports.RepoStore, ports.SymbolTagger, error) {
	r, err := fs.OpenRepo(fs.RepoConfig{
		Root:         s.RepoRoot,
		Extensions:   s.RepoAllowedExtensions,
		ExcludedDirs: s.RepoExcludedDirs,
		Names:        s.RepoAllowedNames,
		MaxFileBytes: int64(s.RepoMaxFileBytes),
	})
	switch {
	case errors.Is(err, fs.ErrRepoRootMissing):
		return nil, nil, nil
	case err != nil:
		return nil, nil, errors.New("ARROWHEAD_REPO_ROOT: the repository cannot be opened")
	}
	rt.closers = append(rt.closers, func(context.Context) error { return r.Close() })
	var tagger ports.SymbolTagger
	if t, err := ctags.New(ctags.Config{}); err == nil {
		tagger = t
	}
	return r, tagger, nil
}
