package boltstores

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The previous release's persistence of the embedded vector index, in its
// namespace of the bbolt store (adapters/bolt). It is read once, to import
// it into the store that replaced it (adapters/sqlite's ImportBolt); this
// build never writes it.
//
// Each collection is a bucket of the namespace holding:
//
//	"meta"     format version u32, dimensions u32, chunk count u64
//	"chunks"/  a bucket: tenant NUL source NUL index(u32, big-endian)
//	           -> id, hash, content (u32 length + bytes each), then the
//	              unit-length embedding (dimensions float32 values)
//
// Every value is sealed (a CRC-32C over key and value) and the chunk count
// was rewritten with every change, so a damaged value or a chunk hidden by
// a damaged page is vectorindex.ErrVectorCorrupt rather than a silently
// smaller import. Integers are little-endian except the index in a key,
// which sorts.

// VectorNamespace is the index's namespace in the previous release's
// bbolt store, read once to import it (DumpBoltVectors).
const VectorNamespace = "vectors"

const (
	vectorFormatVersion = 1
	vectorMetaBytes     = 4 + 4 + 8
)

var (
	vectorMetaKey   = []byte("meta")
	vectorChunksKey = []byte("chunks")
)

// VectorDump is one collection of the previous store.
type VectorDump struct {
	Collection string
	Dimensions int
	Chunks     []ports.Chunk
}

// DumpBoltVectors calls fn with every collection the previous store's
// vector namespace holds (allow-listed today or not: nothing is left
// behind), each read whole and checked, in one read transaction. A
// damaged collection fails the dump with vectorindex.ErrVectorCorrupt.
func DumpBoltVectors(ctx context.Context, ns *bolt.Namespace, fn func(VectorDump) error) error {
	err := ns.View(ctx, func(root *bbolt.Bucket) error {
		return root.ForEachBucket(func(name []byte) error {
			d, err := readBoltCollection(root.Bucket(name), string(name))
			if err != nil {
				return err
			}
			return fn(d)
		})
	})
	if err != nil && errors.Is(err, bolt.ErrCorrupt) {
		return &ports.VectorError{Kind: ports.VectorFailed, Err: fmt.Errorf("%w: %w", vectorindex.ErrVectorCorrupt, err)}
	}
	return err
}

func readBoltCollection(b *bbolt.Bucket, name string) (VectorDump, error) {
	d := VectorDump{Collection: name}
	if !ports.ValidVectorIdentifier(name) {
		return d, vectorindex.CorruptVectors("(unnamed)", "its name is not a collection identifier")
	}
	chunkB := b.Bucket(vectorChunksKey)
	if chunkB == nil {
		return d, vectorindex.CorruptVectors(name, "its chunk bucket is missing")
	}
	m, err := bolt.Unseal(vectorMetaKey, b.Get(vectorMetaKey))
	if err != nil || len(m) != vectorMetaBytes {
		return d, vectorindex.CorruptVectors(name, "its meta record is damaged")
	}
	if v := binary.LittleEndian.Uint32(m); v != vectorFormatVersion {
		return d, vectorindex.CorruptVectors(name, fmt.Sprintf("format version %d, this build reads %d", v, vectorFormatVersion))
	}
	d.Dimensions = int(binary.LittleEndian.Uint32(m[4:]))
	if d.Dimensions < 1 || d.Dimensions > vectorindex.MaxVectorDimensions {
		return d, vectorindex.CorruptVectors(name, "its dimensions are beyond the index limits")
	}
	want := binary.LittleEndian.Uint64(m[8:])
	if want > vectorindex.MaxVectorChunks {
		return d, vectorindex.CorruptVectors(name, "its chunk count is beyond the index limits")
	}
	d.Chunks = make([]ports.Chunk, 0, want)
	err = chunkB.ForEach(func(k, v []byte) error {
		if uint64(len(d.Chunks)) >= want {
			return vectorindex.CorruptVectors(name, "it holds more chunks than it counts")
		}
		ch, err := decodeChunk(k, v, d.Dimensions)
		if err != nil {
			return vectorindex.CorruptVectors(name, err.Error())
		}
		d.Chunks = append(d.Chunks, ch)
		return nil
	})
	if err != nil {
		return d, err
	}
	if uint64(len(d.Chunks)) != want {
		return d, vectorindex.CorruptVectors(name, "it holds fewer chunks than it counts")
	}
	return d, nil
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
