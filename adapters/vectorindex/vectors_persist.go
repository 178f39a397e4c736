package vectorindex

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Persistence of the embedded vector index. The index is served from
// memory (one implementation of search and fusion, in this package); what
// it serves lives in a store that every server process on the data
// directory shares (adapters/sqlite's VectorStore), so memory is a cache
// that must follow the other processes' writes:
//
//   - Each collection carries a change counter (its version) that every
//     write to it, by any process, moves on, and each tenant the counter's
//     value at its last write. Before it answers, a read compares the
//     collection's version on disk with the one memory reflects (one
//     indexed row read, skipped while the store's PRAGMA data_version
//     stands still) and, when they differ, reloads the tenants whose
//     version changed, all as of one snapshot: a write acknowledged by
//     any process before the read began is in its answer.
//   - A write is planned (limits, id and position conflicts) against
//     memory, and persisted in one durable transaction that first checks
//     the collection is still at the version memory reflects. When
//     another process wrote in between (ErrVectorStale), memory catches
//     up and the write is planned again. Memory changes only after the
//     transaction committed, so a failed write changes neither.
//   - A collection is loaded on first use, and a damaged one is refused
//     then (ErrVectorCorrupt), whole: nothing of a load is applied until
//     all of it has been read and checked.

// VectorPersistence is where an index's collections live durably. Every
// method is safe for concurrent use by many processes. Errors are
// *ports.VectorError where the store can say which kind, or the store's
// own (mapped by storeErr).
type VectorPersistence interface {
	// CheckVectors refuses, with a VectorDimension error, a collection
	// among names that the store holds at other dimensions than dim.
	CheckVectors(ctx context.Context, dim int, names []string) error
	// VectorVersion is collection's change counter: 0 for a collection
	// never written, and a different value after every write to it.
	VectorVersion(ctx context.Context, collection string) (uint64, error)
	// LoadVectors reads, as of one snapshot, collection's version and
	// every tenant whose version is not known[tenant] (including tenants
	// known but gone), with all of its chunks. A damaged row fails the
	// whole call with ErrVectorCorrupt.
	LoadVectors(ctx context.Context, collection string, dim int, known map[string]uint64) (VectorDelta, error)
	// WriteVectors applies w to collection in one durable transaction, if
	// the collection is still at version w.At, and returns its new
	// version; ErrVectorStale, having changed nothing, when it is not.
	WriteVectors(ctx context.Context, collection string, dim int, w VectorWrite) (uint64, error)
}

// ErrVectorStale says a write was planned against a version of the
// collection another process has since moved on from.
var ErrVectorStale = errors.New("vector collection changed since the write was planned")

// VectorDelta is what LoadVectors read.
type VectorDelta struct {
	Version uint64
	// Tenants maps each changed tenant to its state; a tenant with no
	// chunks left has none.
	Tenants map[string]VectorTenantState
}

// VectorTenantState is one tenant's chunks as of a version.
type VectorTenantState struct {
	Version uint64
	Chunks  []ports.Chunk
	// Vecs, when not nil, holds the chunks' embeddings back to back in
	// their order (Chunks[i].Embedding is Vecs[i*dim:(i+1)*dim]): the
	// index takes it as its vector table instead of copying 150 MB at
	// 100,000 x 384.
	Vecs []float32
}

// VectorWrite is one write to a collection: an upsert (chunks in order,
// embeddings unit length, each replacing the chunk of its id wherever it
// was) or a truncation.
type VectorWrite struct {
	// At is the version the write was planned against.
	At       uint64
	Upsert   []ports.Chunk
	Truncate *VectorTruncate
	// Count is the collection's chunk count after the write, and Tenants
	// each written tenant's: the store keeps them so a load can tell a
	// lost row from a deleted one.
	Count   int
	Tenants map[string]int
}

// VectorTruncate removes tenant's chunks of source with index >= Keep.
type VectorTruncate struct {
	Tenant, Source string
	Keep           int
}

// maxStaleRetries bounds how often one write is planned again because
// other processes kept writing the collection first.
const maxStaleRetries = 32

var errVectorContended = errors.New("vector collection kept changing under the write")

// fresh brings c up to the version on disk, if memory is behind it.
func (x *VectorIndex) fresh(ctx context.Context, c *vcollection) error {
	if x.persist == nil {
		return nil
	}
	v, err := x.persist.VectorVersion(ctx, c.name)
	if err != nil {
		return storeErr(err)
	}
	c.mu.RLock()
	current := c.version == v
	c.mu.RUnlock()
	if current {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == v {
		return nil // another caller caught up meanwhile
	}
	return x.reload(ctx, c)
}

// reload replaces the tenants of c whose version changed on disk. The
// caller holds c.mu exclusively.
func (x *VectorIndex) reload(ctx context.Context, c *vcollection) error {
	d, err := x.persist.LoadVectors(ctx, c.name, c.dim, c.tenantVer)
	if err != nil {
		return storeErr(err)
	}
	// Drop every changed tenant before adding any back, so an id that
	// moved between two of them meets no stale copy.
	for name := range d.Tenants {
		if t := c.tenants[name]; t != nil {
			for id, slot := range t.byID {
				c.contentBytes -= int64(len(t.chunks[slot].content))
				c.chunks--
				delete(c.owner, id)
			}
			delete(c.tenants, name)
		}
		delete(c.tenantVer, name)
	}
	for name, st := range d.Tenants {
		if len(st.Chunks) == 0 {
			continue
		}
		if err := c.loadTenant(name, st); err != nil {
			// Never serve a collection half-loaded: forget it all, so
			// the next call loads it whole again (and refuses again).
			c.reset()
			return err
		}
		c.tenantVer[name] = st.Version
	}
	c.version = d.Version
	return nil
}

// write persists and then applies one write to c: plan builds it from
// memory (an empty write is a no-op), apply makes it in memory. Both run
// under c's exclusive lock, plan again after each time another process
// wrote first.
func (x *VectorIndex) write(ctx context.Context, c *vcollection, plan func() (VectorWrite, error), apply func()) error {
	if err := x.fresh(ctx, c); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for try := 0; ; try++ {
		w, err := plan()
		if err != nil {
			return err
		}
		if w.Upsert == nil && w.Truncate == nil {
			return nil
		}
		if x.persist == nil {
			apply()
			return nil
		}
		w.At = c.version
		v, err := x.persist.WriteVectors(ctx, c.name, c.dim, w)
		if errors.Is(err, ErrVectorStale) {
			if try == maxStaleRetries {
				return vectorErr(ports.VectorUnavailable, errVectorContended)
			}
			if err := x.reload(ctx, c); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return storeErr(err)
		}
		apply()
		c.version = v
		for name, n := range w.Tenants {
			if n > 0 {
				c.tenantVer[name] = v
			} else {
				delete(c.tenantVer, name)
			}
		}
		return nil
	}
}

// storeErr maps a persistence failure to a caller-safe vector error.
func storeErr(err error) error {
	var ve *ports.VectorError
	switch {
	case errors.As(err, &ve):
		return ve
	case errors.Is(err, ErrVectorCorrupt):
		return vectorErr(ports.VectorFailed, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ctxVectorErr(err)
	}
	return vectorErr(ports.VectorUnavailable, err)
}

// CorruptVectors is the error of a damaged collection: what names only the
// collection and the kind of damage, never a caller's value.
func CorruptVectors(collection, what string) error {
	return vectorErr(ports.VectorFailed, fmt.Errorf("%w: collection %s: %s", ErrVectorCorrupt, collection, what))
}
