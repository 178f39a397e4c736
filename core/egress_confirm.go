package core

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"
)

// Confirmations across replicas. The guard's seal key is per process, so
// a state sealed on one replica does not open on another: the answer to a
// confirmation asked on A, retried on B, would be refused as stale and the
// user asked again. Every state the guard seals is therefore also
// remembered in the flow store (shared by the replicas as the rate buckets
// are) as a 64-bit digest of the exact state and what it was sealed for,
// under a namespace of the caller's own that no content mark is recorded
// in; a replica whose own key does not open a state accepts it when the
// store holds that digest for the caller. Only the guard writes there, and
// the digest covers the exact state, so a client can present on another
// replica only a state some replica issued to it, for that call, within
// the state's lifetime.

// confirmNamespace is the flow-store caller under which the guard keeps
// the digests of the states it sealed for caller.
func confirmNamespace(caller string) string { return "egress-confirm\x00" + caller }

// sealMark is the digest of state as sealed for parts.
func sealMark(state string, parts []string) uint64 {
	h := sha256.New()
	for _, p := range append(parts[:len(parts):len(parts)], state) {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// sealShared seals parts for caller and remembers the state in the flow
// store. Remembering is best effort: without the store the state still
// opens on this replica.
func (g *egressGuard) sealShared(ctx context.Context, caller string, now time.Time, parts []string) string {
	state := g.seal.Seal(now, parts...)
	_ = g.flows.Remember(ctx, confirmNamespace(caller), []uint64{sealMark(state, parts)}, egressSealTTL)
	return state
}

// openShared reports whether state was sealed for parts, for caller, by
// this replica or (per the flow store) another, and has not expired.
func (g *egressGuard) openShared(ctx context.Context, caller string, now time.Time, state string, parts []string) bool {
	if g.seal.Open(now, state, parts...) {
		return true
	}
	if !g.seal.Live(now, state) {
		return false
	}
	n, err := g.flows.Recall(ctx, confirmNamespace(caller), []uint64{sealMark(state, parts)})
	return err == nil && n > 0
}
