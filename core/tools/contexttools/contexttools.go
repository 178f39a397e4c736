// Package contexttools is the context family: working sets, named lists of
// pinned documents and repository files that belong to the caller's
// verified identity (workingset_get, workingset_update), kept durably (in
// the embedded store, or in PostgreSQL with ARROWHEAD_STATE_DSN) so they
// survive a restart, and pack_context, which
// assembles a token-budgeted, secret-redacted, framed bundle from a
// working set's pins, from literal retrieval over the corpus and the
// repository and, when an embedder and a vector index are configured,
// from vector retrieval over the caller's own doc_index collection. Every
// pin and every retrieved snippet is authorized as reading it would be, at
// pack time.
package contexttools

import (
	"errors"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the context family uses.
type Ports struct {
	// Sets stores the working sets: the embedded store in a server, or
	// PostgreSQL with ARROWHEAD_STATE_DSN.
	Sets ports.WorkingSets
	// Corpus is the jailed document corpus doc pins refer to.
	Corpus ports.DocumentStore
	// Repo is the jailed source tree repo_file pins refer to; nil when
	// ARROWHEAD_REPO_ROOT names no directory (repo_file pins are then
	// refused and retrieval covers the corpus only).
	Repo ports.RepoStore `port:"optional"`
	// Authorizer decides every pin and every packed snippet.
	Authorizer ports.Authorizer
	// Scanner redacts secrets from every packed snippet.
	Scanner *security.Scanner
	// Tokenizer counts the pack's tokens.
	Tokenizer ports.Tokenizer
	// Embedder and Vectors are vector retrieval: the query is embedded and
	// the caller's chunks nearest it in the first allow-listed collection
	// are packed after the literal hits. Either nil (or no collection)
	// leaves vector retrieval off, which the result reports.
	Embedder ports.Embedder     `port:"optional"`
	Vectors  ports.VectorReader `port:"optional"`
}

// Family is the context family.
var Family = core.LegacyFamily[Ports]{
	ID: catalog.FamilyContext,
	Declare: func(s *settings.Settings) core.Components {
		return core.Components{Tools: []catalog.ToolSpec{
			packContext(s).Spec(), workingsetGet(s).Spec(), workingsetUpdate(s).Spec(),
		}}
	},
	Bind: func(s *settings.Settings, p Ports) core.Components {
		r := &resolver{settings: s, corpus: p.Corpus, repo: p.Repo, authorizer: p.Authorizer}
		w := workingSets{sets: p.Sets, resolver: r}
		pk := packer{settings: s, sets: p.Sets, resolver: r, scanner: p.Scanner, tokenizer: p.Tokenizer, vectors: vectorsOf(s, p),
			index: retrieval.NewCache()}
		return core.Components{Tools: []catalog.ToolSpec{
			packContext(s).Bind(pk.pack), workingsetGet(s).Bind(w.get), workingsetUpdate(s).Bind(w.update),
		}}
	},
}

// vectorsOf is the one place the family decides whether pack_context
// runs vector retrieval: with an embedder, a vector index and at least one
// collection.
func vectorsOf(s *settings.Settings, p Ports) vectorRetriever {
	collections := s.VectorCollections()
	if p.Embedder == nil || p.Vectors == nil || len(collections) == 0 {
		return noVectorIndex{}
	}
	return vectorIndex{settings: s, embedder: p.Embedder, vectors: p.Vectors, authorizer: p.Authorizer, collection: collections[0]}
}

// maxNoteBytes bounds one pin's note.
const maxNoteBytes = 500

// owner is the key a caller's sets are stored under: the verified subject
// only, never an argument.
func owner(p ports.Principal) (string, error) {
	if !p.Authenticated || p.Subject == "" {
		return "", catalog.Denied()
	}
	return p.Key(), nil
}

// setRefusal maps store errors to refusals that name nothing.
func setRefusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("Working set")
	case errors.Is(err, ports.ErrSetFull):
		return catalog.Invalid("The working set would exceed its item limit (ARROWHEAD_WORKINGSET_MAX_ITEMS).")
	case errors.Is(err, ports.ErrTooManySets):
		return catalog.Invalid("You hold the maximum number of working sets (ARROWHEAD_WORKINGSET_MAX_SETS); clear one first.")
	case errors.Is(err, ports.ErrSetsExhausted):
		return catalog.Refuse(catalog.KindValidation, "The server holds the maximum number of working sets; try again later.")
	}
	if r, ok := catalog.StoreRefusal(err, "The working set store",
		"Read the set with workingset_get before repeating the update."); ok {
		return r
	}
	if _, ok := catalog.AsToolError(err); ok {
		return err
	}
	return catalog.Failed("The working set store could not complete the request.").WithCause(err)
}
