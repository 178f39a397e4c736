package contexttools

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// resolver reaches what a pin names through the same checks the
// standalone tools apply: the lexical path rule, the per-resource read
// grant of its kind, and the store's own jail, extension, size and binary
// refusals.
type resolver struct {
	corpus     ports.DocumentStore
	repo       ports.RepoStore
	authorizer ports.Authorizer
	// docMaxBytes and repoMaxBytes cap one read of each kind.
	docMaxBytes, repoMaxBytes int64
}

// Why a pin could not be resolved, as the pack manifest's dropped list
// reports it.
const (
	dropDenied     = "denied"
	dropGone       = "not_found"
	dropUnreadable = "unreadable"
	dropBudget     = "over_budget"
)

// errPin is a resolution failure with its manifest reason.
type errPin struct{ reason string }

func (e errPin) Error() string { return "pin " + e.reason }

// resourceKind is the authorization kind of a pin kind.
func resourceKind(kind string) string {
	if kind == ports.PinRepoFile {
		return ports.KindRepoFile
	}
	return ports.KindDocument
}

// allowed runs the per-resource check for reading or searching rel.
func (r *resolver) allowed(ctx context.Context, p ports.Principal, action ports.Action, kind, rel string) bool {
	return r.authorizer.Authorize(ctx, p, action, ports.Resource{Kind: resourceKind(kind), ID: rel}).Allowed
}

// read authorizes and reads a pin's target. The read grant is checked
// before the store is touched, so a denied caller learns nothing about
// existence.
func (r *resolver) read(ctx context.Context, p ports.Principal, item ports.WorkingSetItem) ([]byte, error) {
	rel, err := catalog.CleanPath(item.Identifier)
	if err != nil || rel != item.Identifier {
		return nil, errPin{dropGone}
	}
	if !r.allowed(ctx, p, ports.ActionRead, item.Kind, rel) {
		return nil, errPin{dropDenied}
	}
	var data []byte
	switch item.Kind {
	case ports.PinDoc:
		data, _, err = r.corpus.Read(ctx, rel, r.docMaxBytes)
	case ports.PinRepoFile:
		if r.repo == nil {
			return nil, errPin{dropGone}
		}
		data, _, err = r.repo.Read(ctx, rel, r.repoMaxBytes)
	default:
		return nil, errPin{dropGone}
	}
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, ports.ErrNotDocument), errors.Is(err, ports.ErrOutsideJail):
		return nil, errPin{dropGone}
	case errors.Is(err, ports.ErrTooLarge), errors.Is(err, ports.ErrNotRegular), errors.Is(err, ports.ErrBinary),
		errors.Is(err, ports.ErrFileType):
		return nil, errPin{dropUnreadable}
	}
	return nil, err // a cancellation among them
}

// pinRefusal is the refusal workingset_update gives for item i that cannot
// be pinned. It names the item's position, never its identifier.
func pinRefusal(i int, err error) error {
	var pe errPin
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.reason {
	case dropDenied:
		return catalog.Refuse(catalog.KindAuthorization, fmt.Sprintf("Item %d is not authorized for reading; nothing was pinned.", i+1))
	case dropUnreadable:
		return catalog.Invalid("Item %d cannot be pinned: it is too large, not a regular file, or not text; nothing was pinned.", i+1)
	}
	return catalog.Refuse(catalog.KindNotFound, fmt.Sprintf("Item %d was not found; nothing was pinned.", i+1))
}
