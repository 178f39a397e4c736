package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"unsafe"

	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The embedded vector index's persistence (vectorindex.VectorPersistence):
// the index serves from memory (adapters/vectorindex, the one
// implementation of search and fusion), and every process on the data
// directory keeps its memory in step with these tables through the change
// counters.
//
// Layout. One row per chunk, with the embedding as one packed blob
// (dimensions little-endian float32 values, already unit length): at 384
// dimensions a row is about 1.8 KiB and fits one 4 KiB page without an
// overflow chain, so loading a collection is one sequential scan of the
// table in rowid order, and a write touches only the rows of the chunks it
// writes. Packing several chunks per row would cut the rows a load steps
// through, but would make every write rewrite its neighbours' vectors and
// tie a chunk's position in the file to its neighbours'; the load is bound
// by copying the vectors, not by stepping rows (see vectors_bench_test.go).
// The table is a rowid table, not WITHOUT ROWID, because a WITHOUT ROWID
// row of that size would spill into overflow pages.
//
// Damage. SQLite's quick_check (at Open) covers the file's structure, not
// the bytes inside a row, so each row carries sum, a CRC-32C over every
// field, and each tenant and collection its chunk count: a flipped bit or
// a lost row is ErrVectorCorrupt at load, never a silently different
// index.
const vectorSchema = `
CREATE TABLE vec_collection (
	name TEXT PRIMARY KEY,
	dim INTEGER NOT NULL,
	version INTEGER NOT NULL,           -- change counter: moves on with every write
	chunks INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE vec_tenant (
	collection TEXT NOT NULL,
	tenant TEXT NOT NULL,
	version INTEGER NOT NULL,           -- the collection's version at the tenant's last write
	chunks INTEGER NOT NULL,
	PRIMARY KEY (collection, tenant)
) WITHOUT ROWID;
CREATE TABLE vec_chunk (
	collection TEXT NOT NULL,
	tenant TEXT NOT NULL,
	source TEXT NOT NULL,
	idx INTEGER NOT NULL,
	id TEXT NOT NULL,
	hash TEXT NOT NULL,
	content TEXT NOT NULL,
	embedding BLOB NOT NULL,            -- dim little-endian float32, unit length
	sum INTEGER NOT NULL                -- CRC-32C over every field (chunkSum)
);
CREATE UNIQUE INDEX vec_chunk_pos ON vec_chunk (collection, tenant, source, idx);
CREATE UNIQUE INDEX vec_chunk_id ON vec_chunk (collection, id);
`

// VectorStore is the embedded vector index's persistence in the store.
//
// Every query asks VectorVersion first. Reading the change counter is a
// read transaction (about 0.1 ms); PRAGMA data_version on a connection of
// the VectorStore's own is one statement, and changes only when another
// connection, of any process, committed to the file: while it stands
// still, the counters read last still hold.
type VectorStore struct {
	s *Store

	mu       sync.Mutex // guards the fields below
	watch    *sql.DB    // one read connection, for data_version; nil until used
	seen     int64      // its data_version when versions were read
	versions map[string]uint64
	closed   bool
}

var _ vectorindex.VectorPersistence = (*VectorStore)(nil)

// NewVectorStore returns the vector persistence of s, for
// vectorindex.VectorIndexConfig.Persist; Close it before s (the index's Close
// does).
func NewVectorStore(s *Store) *VectorStore { return &VectorStore{s: s, versions: map[string]uint64{}} }

// Close releases the VectorStore's own connection.
func (v *VectorStore) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	if v.watch == nil {
		return nil
	}
	err := v.watch.Close()
	v.watch = nil
	return err
}

// dataVersion is PRAGMA data_version on the VectorStore's own connection.
// The caller holds v.mu.
func (v *VectorStore) dataVersion(ctx context.Context) (int64, error) {
	if v.closed {
		return 0, ErrClosed
	}
	if v.watch == nil {
		db, err := openDB(v.s.path, DefaultBusyTimeout, false)
		if err != nil {
			return 0, err
		}
		db.SetMaxOpenConns(1)
		v.watch = db
	}
	var dv int64
	err := retryBusy(ctx, func() error {
		return v.watch.QueryRowContext(ctx, "PRAGMA data_version").Scan(&dv)
	})
	return dv, classify("reading the store file", err)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// loadMmapBytes bounds the memory map of a read connection that loaded a
// collection (SQLite caps it at its own SQLITE_MAX_MMAP_SIZE).
const loadMmapBytes = "1073741824"

// nativeLittle says float32 slices can be copied to and from the blob's
// little-endian bytes as they are.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// chunkSum is the CRC-32C of a chunk row: its text fields NUL-separated
// (none holds a NUL: ports.ValidVectorText), the index, content behind
// its length, then the embedding's bytes.
func chunkSum(tenant, source string, idx int64, id, hash, content string, emb []byte) int64 {
	var n [8]byte
	h := crc32.Update(0, castagnoli, []byte(tenant))
	h = crc32.Update(h, castagnoli, []byte{0})
	h = crc32.Update(h, castagnoli, []byte(source))
	h = crc32.Update(h, castagnoli, []byte{0})
	binary.LittleEndian.PutUint64(n[:], uint64(idx))
	h = crc32.Update(h, castagnoli, n[:])
	h = crc32.Update(h, castagnoli, []byte(id))
	h = crc32.Update(h, castagnoli, []byte{0})
	h = crc32.Update(h, castagnoli, []byte(hash))
	h = crc32.Update(h, castagnoli, []byte{0})
	binary.LittleEndian.PutUint64(n[:], uint64(len(content)))
	h = crc32.Update(h, castagnoli, n[:])
	h = crc32.Update(h, castagnoli, []byte(content))
	return int64(crc32.Update(h, castagnoli, emb))
}

func encodeEmbedding(v []float32) []byte {
	b := make([]byte, 4*len(v))
	if nativeLittle && len(v) > 0 {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(b)))
		return b
	}
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeEmbedding appends the blob's values to dst, which has room.
func decodeEmbedding(dst []float32, b []byte) []float32 {
	n := len(dst)
	dst = dst[:n+len(b)/4]
	out := dst[n:]
	if nativeLittle && len(out) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(b)), b)
		return dst
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst
}

// vectorErr maps the store's errors onto the index's: a damaged file is
// the collection's damage, the rest (closed, busy, disk) pass as they are
// for vectorindex's storeErr to classify.
func vectorErr(collection string, err error) error {
	if errors.Is(err, ErrCorrupt) {
		return vectorindex.CorruptVectors(collection, "the store file is damaged")
	}
	return err
}

func dimensionErr(collection string, have, want int) error {
	return &ports.VectorError{Kind: ports.VectorDimension,
		Err: fmt.Errorf("collection %s was indexed with %d dimensions, configured %d", collection, have, want)}
}

// CheckVectors implements vectorindex.VectorPersistence.
func (v *VectorStore) CheckVectors(ctx context.Context, dim int, names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var bad error
	err := v.s.Read(ctx, func(tx *Tx) error {
		bad = nil
		rows, err := tx.QueryContext(ctx, "SELECT name, dim FROM vec_collection")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var d int
			if err := rows.Scan(&name, &d); err != nil {
				return err
			}
			if want[name] && d != dim && bad == nil {
				bad = dimensionErr(name, d, dim)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return vectorErr("(all)", err)
	}
	return bad
}

// VectorVersion implements vectorindex.VectorPersistence.
func (v *VectorStore) VectorVersion(ctx context.Context, collection string) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	dv, err := v.dataVersion(ctx)
	if err != nil {
		return 0, vectorErr(collection, err)
	}
	if dv != v.seen {
		clear(v.versions)
		v.seen = dv
	}
	if ver, ok := v.versions[collection]; ok {
		return ver, nil
	}
	// Read after data_version: a commit in between makes the next call
	// read again, never this one stale.
	ver, err := v.readVersion(ctx, collection)
	if err != nil {
		return 0, err
	}
	v.versions[collection] = ver
	return ver, nil
}

func (v *VectorStore) readVersion(ctx context.Context, collection string) (uint64, error) {
	var ver int64
	err := v.s.Read(ctx, func(tx *Tx) error {
		ver = 0
		err := tx.QueryRowContext(ctx, "SELECT version FROM vec_collection WHERE name = ?", collection).Scan(&ver)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, vectorErr(collection, err)
	}
	return uint64(ver), nil
}

// LoadVectors implements vectorindex.VectorPersistence.
func (v *VectorStore) LoadVectors(ctx context.Context, collection string, dim int, known map[string]uint64) (vectorindex.VectorDelta, error) {
	var d vectorindex.VectorDelta
	if err := v.s.checkTable(ctx, "vec_chunk"); err != nil {
		return d, vectorErr(collection, err)
	}
	err := v.s.Read(ctx, func(tx *Tx) error {
		var err error
		d, err = loadVectors(ctx, tx, collection, dim, known)
		return err
	})
	if err != nil {
		return vectorindex.VectorDelta{}, vectorErr(collection, err)
	}
	return d, nil
}

func loadVectors(ctx context.Context, tx *Tx, collection string, dim int, known map[string]uint64) (vectorindex.VectorDelta, error) {
	d := vectorindex.VectorDelta{Tenants: map[string]vectorindex.VectorTenantState{}}
	var ver, total int64
	var haveDim int
	err := tx.QueryRowContext(ctx, "SELECT version, dim, chunks FROM vec_collection WHERE name = ?", collection).Scan(&ver, &haveDim, &total)
	if errors.Is(err, sql.ErrNoRows) {
		for name := range known {
			d.Tenants[name] = vectorindex.VectorTenantState{}
		}
		return d, nil
	} else if err != nil {
		return d, err
	}
	if haveDim != dim {
		return d, dimensionErr(collection, haveDim, dim)
	}
	if total < 0 || total > vectorindex.MaxVectorChunks {
		return d, vectorindex.CorruptVectors(collection, "its chunk count is beyond the index limits")
	}
	d.Version = uint64(ver)

	// Which tenants changed, and how many chunks each must have.
	type want struct {
		version uint64
		chunks  int
		got     []ports.Chunk
		vecs    []float32
	}
	changed := map[string]*want{}
	onDisk := map[string]bool{}
	var sum int64
	rows, err := tx.QueryContext(ctx, "SELECT tenant, version, chunks FROM vec_tenant WHERE collection = ?", collection)
	if err != nil {
		return d, err
	}
	for rows.Next() {
		var name string
		var tv, n int64
		if err := rows.Scan(&name, &tv, &n); err != nil {
			rows.Close()
			return d, err
		}
		if n <= 0 || n > total || tv <= 0 || tv > ver {
			rows.Close()
			return d, vectorindex.CorruptVectors(collection, "a tenant's record is damaged")
		}
		sum += n
		onDisk[name] = true
		if k, ok := known[name]; !ok || k != uint64(tv) {
			changed[name] = &want{version: uint64(tv), chunks: int(n)}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, err
	}
	if sum != total {
		return d, vectorindex.CorruptVectors(collection, "its tenants do not add up to its chunk count")
	}
	for name := range known {
		if !onDisk[name] {
			d.Tenants[name] = vectorindex.VectorTenantState{}
		}
	}
	if len(changed) == 0 {
		return d, nil
	}

	// Every tenant changed (a first load): one scan of the table in rowid
	// order, which reads it front to back; otherwise each changed tenant
	// through the position index.
	scan := func(query string, args ...any) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			tenant, source, id, hash, content string
			idx, rowSum                       int64
			emb                               sql.RawBytes
		)
		for rows.Next() {
			if err := rows.Scan(&tenant, &source, &idx, &id, &hash, &content, &emb, &rowSum); err != nil {
				return err
			}
			w := changed[tenant]
			if w == nil {
				if !onDisk[tenant] {
					return vectorindex.CorruptVectors(collection, "a chunk belongs to no counted tenant")
				}
				continue // unchanged: memory has it
			}
			if len(emb) != 4*dim || idx < 0 || idx > math.MaxInt32 || len(w.got) >= w.chunks ||
				chunkSum(tenant, source, idx, id, hash, content, emb) != rowSum {
				return vectorindex.CorruptVectors(collection, "a chunk record is damaged")
			}
			if w.vecs == nil {
				// Room for an eighth more, so the writes after a load
				// append without copying the table; pages never
				// written cost no memory.
				w.vecs = make([]float32, 0, (w.chunks+w.chunks/8+16)*dim)
			}
			w.vecs = decodeEmbedding(w.vecs, emb)
			n := len(w.vecs)
			w.got = append(w.got, ports.Chunk{ID: id, Tenant: tenant, Source: source, Index: int(idx), Content: content, Hash: hash,
				Embedding: w.vecs[n-dim : n : n]})
		}
		return rows.Err()
	}
	// Read the table through a memory map rather than a pread per page:
	// a first load reads every page of the collection. It stays set on
	// this read connection, which costs address space, not memory.
	if _, err := tx.Tx.ExecContext(ctx, "PRAGMA mmap_size = "+loadMmapBytes); err != nil {
		return d, err
	}
	const columns = "SELECT tenant, source, idx, id, hash, content, embedding, sum FROM vec_chunk"
	if len(changed) == len(onDisk) {
		err = scan(columns+" NOT INDEXED WHERE collection = ?", collection)
	} else {
		for name := range changed {
			if err = scan(columns+" WHERE collection = ? AND tenant = ?", collection, name); err != nil {
				break
			}
		}
	}
	if err != nil {
		return d, err
	}
	for name, w := range changed {
		if len(w.got) != w.chunks {
			return d, vectorindex.CorruptVectors(collection, "it holds fewer chunks than it counts")
		}
		d.Tenants[name] = vectorindex.VectorTenantState{Version: w.version, Chunks: w.got, Vecs: w.vecs}
	}
	return d, nil
}

// WriteVectors implements vectorindex.VectorPersistence.
func (v *VectorStore) WriteVectors(ctx context.Context, collection string, dim int, w vectorindex.VectorWrite) (uint64, error) {
	var next int64
	if err := v.s.checkTable(ctx, "vec_chunk"); err != nil {
		return 0, vectorErr(collection, err)
	}
	// A write that only removes chunks may run on a full disk, in the
	// store's reserve, so a caller can free space (Store.Delete).
	write := v.s.Write
	if len(w.Upsert) == 0 {
		write = v.s.Delete
	}
	err := write(ctx, func(tx *Tx) error {
		var ver int64
		var haveDim int
		err := tx.QueryRowContext(ctx, "SELECT version, dim FROM vec_collection WHERE name = ?", collection).Scan(&ver, &haveDim)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			ver, haveDim = 0, dim
		case err != nil:
			return err
		}
		if uint64(ver) != w.At {
			return vectorindex.ErrVectorStale
		}
		if haveDim != dim {
			return dimensionErr(collection, haveDim, dim)
		}
		next = ver + 1
		for _, ch := range w.Upsert {
			// The id's old row, wherever it was: an upsert may move a
			// chunk to another position.
			if _, err := tx.ExecContext(ctx, "DELETE FROM vec_chunk WHERE collection = ? AND id = ?", collection, ch.ID); err != nil {
				return err
			}
			if err := insertChunk(ctx, tx, "INSERT", collection, ch); err != nil {
				return err
			}
		}
		if t := w.Truncate; t != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM vec_chunk WHERE collection = ? AND tenant = ? AND source = ? AND idx >= ?",
				collection, t.Tenant, t.Source, t.Keep); err != nil {
				return err
			}
		}
		for name, n := range w.Tenants {
			if n > 0 {
				_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO vec_tenant (collection, tenant, version, chunks) VALUES (?, ?, ?, ?)", collection, name, next, n)
			} else {
				_, err = tx.ExecContext(ctx, "DELETE FROM vec_tenant WHERE collection = ? AND tenant = ?", collection, name)
			}
			if err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO vec_collection (name, dim, version, chunks) VALUES (?, ?, ?, ?)", collection, dim, next, w.Count)
		return err
	})
	if err != nil {
		return 0, vectorErr(collection, err)
	}
	return uint64(next), nil
}

// insertChunk writes one chunk row; verb is INSERT, or INSERT OR IGNORE
// where rows already there win (the import).
func insertChunk(ctx context.Context, tx *Tx, verb, collection string, ch ports.Chunk) error {
	emb := encodeEmbedding(ch.Embedding)
	_, err := tx.ExecContext(ctx, verb+" INTO vec_chunk (collection, tenant, source, idx, id, hash, content, embedding, sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		collection, ch.Tenant, ch.Source, ch.Index, ch.ID, ch.Hash, ch.Content, emb,
		chunkSum(ch.Tenant, ch.Source, int64(ch.Index), ch.ID, ch.Hash, ch.Content, emb))
	return err
}

// importVectors copies the previous store's collections into tx: chunks
// the store already holds (by id or by position) win, and the counts and
// versions are recomputed from the rows. A collection held here at other
// dimensions is refused rather than mixed.
func importVectors(ctx context.Context, tx *Tx, src func(func(boltstores.VectorDump) error) error) error {
	return src(func(d boltstores.VectorDump) error {
		var ver int64
		var haveDim int
		err := tx.QueryRowContext(ctx, "SELECT version, dim FROM vec_collection WHERE name = ?", d.Collection).Scan(&ver, &haveDim)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			ver, haveDim = 0, d.Dimensions
		case err != nil:
			return err
		}
		if haveDim != d.Dimensions {
			return fmt.Errorf("the previous store's vector collection %s has %d dimensions, the store's %d", d.Collection, d.Dimensions, haveDim)
		}
		for _, ch := range d.Chunks {
			if err := insertChunk(ctx, tx, "INSERT OR IGNORE", d.Collection, ch); err != nil {
				return err
			}
		}
		next := ver + 1
		if _, err := tx.ExecContext(ctx, "DELETE FROM vec_tenant WHERE collection = ?", d.Collection); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO vec_tenant (collection, tenant, version, chunks) SELECT collection, tenant, ?, count(*) FROM vec_chunk WHERE collection = ? GROUP BY tenant",
			next, d.Collection); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO vec_collection (name, dim, version, chunks) VALUES (?, ?, ?, (SELECT count(*) FROM vec_chunk WHERE collection = ?))",
			d.Collection, d.Dimensions, next, d.Collection)
		return err
	})
}
