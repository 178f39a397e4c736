package inmem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Persistence of the embedded vector index, in its namespace of the
// embedded store (adapters/bolt, which owns the file, its lock, its fsync
// and its corruption checks). The index is served from memory; the store
// is what memory is rebuilt from at start-up.
//
// Each collection is a bucket of the namespace holding:
//
//	"meta"     format version u32, dimensions u32, chunk count u64
//	"chunks"/  a bucket: tenant NUL source NUL index(u32, big-endian)
//	           -> id, hash, content (u32 length + bytes each), then the
//	              unit-length embedding (dimensions float32 values)
//
// Keys by position keep a document's chunks together in the file, so a
// document's write touches few pages. Every value is sealed (a CRC-32C
// over key and value) and the chunk count is rewritten with every change,
// so at load a damaged value or a chunk hidden by a damaged page is
// ErrVectorCorrupt rather than a silently smaller index. Integers are
// little-endian except the index in a key, which sorts.
//
// A write is one store transaction: Upsert and Truncate commit (fsynced)
// before they change memory or return, so an acknowledged write survives
// SIGKILL, and a failed one changes neither disk nor memory.

const (
	vectorFormatVersion = 1
	vectorMetaBytes     = 4 + 4 + 8
)

var (
	vectorMetaKey   = []byte("meta")
	vectorChunksKey = []byte("chunks")
)

// vstore is one collection's persistence; the collection's lock guards it.
type vstore struct {
	ns   *bolt.Namespace
	name []byte
}

// storeErr maps a store failure to a caller-safe vector error.
func storeErr(err error) error {
	var ve *ports.VectorError
	switch {
	case errors.As(err, &ve):
		return ve
	case errors.Is(err, bolt.ErrCorrupt):
		return vectorErr(ports.VectorFailed, fmt.Errorf("%w: %w", ErrVectorCorrupt, err))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ctxVectorErr(err)
	}
	return vectorErr(ports.VectorUnavailable, err)
}

func corrupt(collection, what string) error {
	return vectorErr(ports.VectorFailed, fmt.Errorf("%w: collection %s: %s", ErrVectorCorrupt, collection, what))
}

// create makes collection c's bucket, empty, unless it exists by now.
func (s *vstore) create(ctx context.Context, c *vcollection) error {
	return s.ns.Update(ctx, func(ns *bbolt.Bucket) error {
		if ns.Bucket(s.name) != nil {
			return nil
		}
		b, err := ns.CreateBucket(s.name)
		if err != nil {
			return err
		}
		if _, err := b.CreateBucket(vectorChunksKey); err != nil {
			return err
		}
		return b.Put(vectorMetaKey, bolt.Seal(vectorMetaKey, encodeMeta(c.dim, 0)))
	})
}

// load fills the (empty) collection c from its bucket, creating the bucket
// when absent.
func (s *vstore) load(ctx context.Context, c *vcollection) error {
	// Only a missing bucket needs a write transaction (and its fdatasyncs);
	// an existing collection is read in a View alone.
	exists := false
	err := s.ns.View(ctx, func(ns *bbolt.Bucket) error {
		exists = ns.Bucket(s.name) != nil
		return nil
	})
	if err == nil && !exists {
		err = s.create(ctx, c)
	}
	if err != nil {
		return storeErr(err)
	}
	var chunks []ports.Chunk
	var want uint64
	err = s.ns.View(ctx, func(ns *bbolt.Bucket) error {
		b := ns.Bucket(s.name)
		chunkB := b.Bucket(vectorChunksKey)
		if chunkB == nil {
			return corrupt(c.name, "its chunk bucket is missing")
		}
		m, err := bolt.Unseal(vectorMetaKey, b.Get(vectorMetaKey))
		if err != nil || len(m) != vectorMetaBytes {
			return corrupt(c.name, "its meta record is damaged")
		}
		if v := binary.LittleEndian.Uint32(m); v != vectorFormatVersion {
			return corrupt(c.name, fmt.Sprintf("format version %d, this build reads %d", v, vectorFormatVersion))
		}
		if d := binary.LittleEndian.Uint32(m[4:]); int(d) != c.dim {
			return vectorErr(ports.VectorDimension, fmt.Errorf("collection %s was indexed with %d dimensions, configured %d", c.name, d, c.dim))
		}
		want = binary.LittleEndian.Uint64(m[8:])
		if want > MaxVectorChunks {
			return corrupt(c.name, "its chunk count is beyond the index limits")
		}
		chunks = make([]ports.Chunk, 0, want)
		return chunkB.ForEach(func(k, v []byte) error {
			if uint64(len(chunks)) >= want {
				return corrupt(c.name, "it holds more chunks than it counts")
			}
			ch, err := decodeChunk(k, v, c.dim)
			if err != nil {
				return corrupt(c.name, err.Error())
			}
			chunks = append(chunks, ch)
			return nil
		})
	})
	if err != nil {
		return storeErr(err)
	}
	c.applyUpsert(chunks)
	if uint64(c.chunks) != want || uint64(len(chunks)) != want {
		return corrupt(c.name, "it holds fewer chunks than it counts")
	}
	return nil
}

// upsert writes chunks (validated and planned) in order, deleting the old
// entry of a chunk whose position changes, and the collection's new count.
func (s *vstore) upsert(ctx context.Context, c *vcollection, chunks []ports.Chunk, count int) error {
	err := s.ns.Update(ctx, func(ns *bbolt.Bucket) error {
		b, chunkB, err := s.buckets(ns)
		if err != nil {
			return err
		}
		moved := map[string][]byte{} // id -> key, for ids this call moves
		for _, ch := range chunks {
			key := chunkKey(ch.Tenant, ch.Source, ch.Index)
			old, ok := moved[ch.ID]
			if !ok {
				old = c.keyOf(ch.ID)
			}
			if old != nil && string(old) != string(key) {
				if err := chunkB.Delete(old); err != nil {
					return err
				}
			}
			moved[ch.ID] = key
			if err := chunkB.Put(key, bolt.Seal(key, encodeChunk(ch))); err != nil {
				return err
			}
		}
		return b.Put(vectorMetaKey, bolt.Seal(vectorMetaKey, encodeMeta(c.dim, count)))
	})
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// truncate deletes tenant's chunks of source at the given indexes and
// writes the collection's new count.
func (s *vstore) truncate(ctx context.Context, c *vcollection, tenant, source string, doomed []int, count int) error {
	err := s.ns.Update(ctx, func(ns *bbolt.Bucket) error {
		b, chunkB, err := s.buckets(ns)
		if err != nil {
			return err
		}
		for _, idx := range doomed {
			if err := chunkB.Delete(chunkKey(tenant, source, idx)); err != nil {
				return err
			}
		}
		return b.Put(vectorMetaKey, bolt.Seal(vectorMetaKey, encodeMeta(c.dim, count)))
	})
	if err != nil {
		return storeErr(err)
	}
	return nil
}

func (s *vstore) buckets(ns *bbolt.Bucket) (*bbolt.Bucket, *bbolt.Bucket, error) {
	b := ns.Bucket(s.name)
	if b == nil {
		return nil, nil, fmt.Errorf("%w: a collection bucket is missing", bolt.ErrCorrupt)
	}
	chunkB := b.Bucket(vectorChunksKey)
	if chunkB == nil {
		return nil, nil, fmt.Errorf("%w: a chunk bucket is missing", bolt.ErrCorrupt)
	}
	return b, chunkB, nil
}

// keyOf is the store key of the chunk id holds now, or nil.
func (c *vcollection) keyOf(id string) []byte {
	t := c.owner[id]
	if t == nil {
		return nil
	}
	ch := &t.chunks[t.byID[id]]
	return chunkKey(t.name, ch.source, ch.index)
}

// ---- encoding ----

func encodeMeta(dim, count int) []byte {
	b := make([]byte, 0, vectorMetaBytes)
	b = binary.LittleEndian.AppendUint32(b, vectorFormatVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	return binary.LittleEndian.AppendUint64(b, uint64(count))
}

// chunkKey is tenant NUL source NUL index: tenants and sources never hold
// a NUL (ports.ValidVectorText), and the big-endian index sorts a source's chunks.
func chunkKey(tenant, source string, index int) []byte {
	k := make([]byte, 0, len(tenant)+len(source)+2+4)
	k = append(k, tenant...)
	k = append(k, 0)
	k = append(k, source...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(index))
}

func encodeChunk(ch ports.Chunk) []byte {
	b := make([]byte, 0, 12+len(ch.ID)+len(ch.Hash)+len(ch.Content)+4*len(ch.Embedding))
	for _, s := range []string{ch.ID, ch.Hash, ch.Content} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	for _, f := range ch.Embedding {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

var errChunkRecord = errors.New("a chunk record is damaged")

// decodeChunk reads one sealed chunk entry back, bounding every length by
// the index's limits.
func decodeChunk(key, sealed []byte, dim int) (ports.Chunk, error) {
	v, err := bolt.Unseal(key, sealed)
	if err != nil {
		return ports.Chunk{}, errors.New("a chunk record fails its checksum")
	}
	var ch ports.Chunk
	tenant, rest, ok1 := strings.Cut(string(key), "\x00")
	source, idx, ok2 := strings.Cut(rest, "\x00")
	if !ok1 || !ok2 || len(idx) != 4 {
		return ch, errChunkRecord
	}
	ch.Tenant, ch.Source = tenant, source
	ch.Index = int(binary.BigEndian.Uint32([]byte(idx)))
	for _, f := range []struct {
		dst   *string
		limit int
	}{{&ch.ID, ports.MaxVectorIDBytes}, {&ch.Hash, ports.MaxVectorHashBytes}, {&ch.Content, ports.MaxVectorContentBytes}} {
		if len(v) < 4 {
			return ch, errChunkRecord
		}
		n := binary.LittleEndian.Uint32(v)
		if int64(n) > int64(f.limit) || int(n) > len(v)-4 {
			return ch, errChunkRecord
		}
		*f.dst = string(v[4 : 4+n])
		v = v[4+n:]
	}
	if len(v) != 4*dim || ch.Index > math.MaxInt32 {
		return ch, errChunkRecord
	}
	ch.Embedding = make([]float32, dim)
	for i := range ch.Embedding {
		ch.Embedding[i] = math.Float32frombits(binary.LittleEndian.Uint32(v[4*i:]))
	}
	return ch, nil
}
