package inmem

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Persistence of the embedded vector index.
//
// Each collection owns a directory, <Dir>/<collection>/, holding two files:
//
//   - index.wal, a write-ahead log. Every write appends one record and
//     fsyncs it before the write is applied in memory or acknowledged.
//   - index.snap, a snapshot of the whole collection as of a log sequence
//     number, written to a temporary file, fsynced, renamed into place and
//     the directory fsynced (so it is either the old or the new snapshot,
//     never a torn one). Once the log outgrows the snapshot, the next write
//     compacts: a fresh snapshot, then an empty log.
//
// Opening loads the snapshot, then replays the log records newer than it.
// Both formats start with a magic string, a format version and the
// embedding width, and are checksummed with CRC-32C (the snapshot as a
// whole, the log per record and its length). A file that fails a check is
// refused with ErrVectorCorrupt. The one tolerated defect is a torn final
// log record, the trace of a crash during an append that was therefore
// never acknowledged: it is cut off.
//
// A lock file (<Dir>/LOCK, flock) keeps a second process from opening the
// same directory, since two writers would interleave their logs.
//
// All integers are little-endian. Strings are a uint32 byte length and the
// bytes. A chunk is: tenant, id, source, content, hash (strings), index
// (uint32), then Dimensions float32 values of its unit-length embedding.
//
//	snapshot: "AHVXSNAP" version:u32 dim:u32 seq:u64 tenants:u32
//	          { tenant:str chunks:u32 { chunk without its tenant } }
//	          crc32c-of-everything-before:u32
//	log:      "AHVXWLOG" version:u32 dim:u32 crc32c-of-the-16-bytes-before:u32
//	          { len:u32 crc32c(len):u32 crc32c(payload):u32 payload[len] }
//	payload:  seq:u64 op:u8 body
//	          op 1 (upsert):   count:u32 { chunk }
//	          op 2 (truncate): tenant:str source:str keep:u32
const (
	vectorFormatVersion = 1

	vectorSnapFile    = "index.snap"
	vectorSnapTmpFile = "index.snap.tmp"
	vectorWALFile     = "index.wal"
	vectorWALTmpFile  = "index.wal.tmp"
	vectorLockFile    = "LOCK"

	snapMagic = "AHVXSNAP"
	walMagic  = "AHVXWLOG"

	walHeaderBytes       = 8 + 4 + 4 + 4
	walRecordHeaderBytes = 4 + 4 + 4

	opUpsert   = 1
	opTruncate = 2

	// maxRecordBytes bounds one log record (one Upsert call).
	maxRecordBytes = 1 << 30
	// compactMinBytes is the smallest log worth compacting away.
	compactMinBytes = 8 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// diskErr turns a file-system error into a caller-safe one: the operation
// and the system error (ENOSPC, EACCES...), never the path.
func diskErr(op string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return vectorErr(ports.VectorUnavailable, fmt.Errorf("%s: %w", op, err))
}

func corrupt(collection, what string) error {
	return vectorErr(ports.VectorFailed, fmt.Errorf("%w: collection %s: %s", ErrVectorCorrupt, collection, what))
}

// vdir is the index's data directory, locked for this process.
type vdir struct {
	root *os.Root
	lock *os.File
}

func openVDir(path string) (*vdir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, diskErr("creating the vector index directory", err)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, diskErr("opening the vector index directory", err)
	}
	lock, err := root.OpenFile(vectorLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		root.Close()
		return nil, diskErr("opening the vector index lock", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		root.Close()
		if errors.Is(err, ErrVectorLocked) {
			return nil, vectorErr(ports.VectorUnavailable, err)
		}
		return nil, diskErr("locking the vector index directory", err)
	}
	return &vdir{root: root, lock: lock}, nil
}

func (d *vdir) close() error {
	err := d.lock.Close() // closing releases the flock
	return errors.Join(err, d.root.Close())
}

// load fills the (empty) collection c from its directory and attaches its
// log, creating both when absent.
func (d *vdir) load(c *vcollection) error {
	if err := d.root.MkdirAll(c.name, 0o700); err != nil {
		return diskErr("creating a collection directory", err)
	}
	root, err := d.root.OpenRoot(c.name)
	if err != nil {
		return diskErr("opening a collection directory", err)
	}
	l := &vlog{root: root}
	if err := l.open(c); err != nil {
		root.Close()
		return err
	}
	c.log = l
	return nil
}

// vlog is one collection's persistence: its directory, its open log, and
// the sizes that decide when to compact. The collection's lock guards it.
type vlog struct {
	root     *os.Root
	f        *os.File // the log, open for appending
	size     int64    // bytes of the log
	snapSize int64    // bytes of the current snapshot
	seq      uint64   // sequence number of the last record written
	// broken is set when the log may no longer match memory (a failed
	// write could not be rolled back): every later write is refused until a
	// restart reloads from disk.
	broken error
}

func (l *vlog) open(c *vcollection) error {
	snapSeq, err := l.loadSnapshot(c)
	if err != nil {
		return err
	}
	l.seq = snapSeq
	f, err := l.root.OpenFile(vectorWALFile, os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l.resetLog(c.dim)
	case err != nil:
		return diskErr("opening a vector index log", err)
	}
	defer f.Close()
	good, err := l.replay(c, f, snapSeq)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return diskErr("reading a vector index log", err)
	}
	if good < st.Size() {
		// A torn final record: cut it off, durably, before appending.
		if err := f.Truncate(good); err != nil {
			return diskErr("repairing a vector index log", err)
		}
		if err := f.Sync(); err != nil {
			return diskErr("repairing a vector index log", err)
		}
	}
	af, err := l.root.OpenFile(vectorWALFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return diskErr("opening a vector index log", err)
	}
	l.f, l.size = af, good
	return nil
}

func (l *vlog) close() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	return errors.Join(err, l.root.Close())
}

// ---- snapshot ----

// loadSnapshot reads index.snap into c and returns its sequence number (0
// when there is none).
func (l *vlog) loadSnapshot(c *vcollection) (uint64, error) {
	f, err := l.root.Open(vectorSnapFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, diskErr("opening a vector index snapshot", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, diskErr("reading a vector index snapshot", err)
	}
	h := crc32.New(crcTable)
	r := &decoder{r: io.TeeReader(bufio.NewReaderSize(f, 1<<20), h), dim: c.dim, name: c.name}
	magic := r.bytes(len(snapMagic))
	if r.err == nil && string(magic) != snapMagic {
		return 0, corrupt(c.name, "index.snap is not a vector index snapshot")
	}
	if v := r.u32(); r.err == nil && v != vectorFormatVersion {
		return 0, corrupt(c.name, fmt.Sprintf("index.snap has format version %d, this build reads %d", v, vectorFormatVersion))
	}
	if d := r.u32(); r.err == nil && int(d) != c.dim {
		return 0, vectorErr(ports.VectorDimension, fmt.Errorf("collection %s was indexed with %d dimensions, configured %d", c.name, d, c.dim))
	}
	seq := r.u64()
	tenants := r.count(MaxVectorTenants)
	var batch []ports.Chunk
	for range tenants {
		tenant := r.str(MaxVectorTenantBytes)
		n := r.count(MaxVectorChunks)
		for range n {
			ch := r.chunkBody()
			ch.Tenant = tenant
			if r.err != nil {
				break
			}
			batch = append(batch, ch)
		}
		if r.err != nil {
			break
		}
	}
	if r.err != nil {
		return 0, r.failure()
	}
	sum := h.Sum32()
	var trailer [4]byte
	if _, err := io.ReadFull(r.r, trailer[:]); err != nil {
		return 0, corrupt(c.name, "index.snap is truncated")
	}
	if binary.LittleEndian.Uint32(trailer[:]) != sum {
		return 0, corrupt(c.name, "index.snap fails its checksum")
	}
	if _, err := r.r.Read(trailer[:1]); err != io.EOF {
		return 0, corrupt(c.name, "index.snap has trailing bytes")
	}
	c.applyUpsert(batch)
	l.snapSize = st.Size()
	return seq, nil
}

// writeSnapshot writes c as of l.seq to index.snap, atomically.
func (l *vlog) writeSnapshot(c *vcollection) (int64, error) {
	f, err := l.root.OpenFile(vectorSnapTmpFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, diskErr("writing a vector index snapshot", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = l.root.Remove(vectorSnapTmpFile)
		}
	}()
	h := crc32.New(crcTable)
	buf := bufio.NewWriterSize(f, 1<<20)
	w := &countWriter{w: io.MultiWriter(buf, h)}
	e := encoder{}
	e.raw([]byte(snapMagic))
	e.u32(vectorFormatVersion)
	e.u32(uint32(c.dim))
	e.u64(l.seq)
	names := slices.Sorted(maps.Keys(c.tenants))
	e.u32(uint32(len(names)))
	w.write(e.take())
	for _, name := range names {
		t := c.tenants[name]
		e.str(name)
		e.u32(uint32(t.live))
		w.write(e.take())
		for slot := range t.chunks {
			ch := &t.chunks[slot]
			if !ch.alive {
				continue
			}
			e.chunkBody(ch.id, ch.source, ch.content, ch.hash, ch.index, t.vecs[slot*c.dim:(slot+1)*c.dim])
			w.write(e.take())
		}
	}
	if w.err == nil {
		var trailer [4]byte
		binary.LittleEndian.PutUint32(trailer[:], h.Sum32())
		_, w.err = buf.Write(trailer[:])
		w.n += 4
	}
	if w.err == nil {
		w.err = buf.Flush()
	}
	if w.err != nil {
		return 0, diskErr("writing a vector index snapshot", w.err)
	}
	if err := f.Sync(); err != nil {
		return 0, diskErr("writing a vector index snapshot", err)
	}
	if err := f.Close(); err != nil {
		return 0, diskErr("writing a vector index snapshot", err)
	}
	ok = true
	if err := l.root.Rename(vectorSnapTmpFile, vectorSnapFile); err != nil {
		_ = l.root.Remove(vectorSnapTmpFile)
		return 0, diskErr("installing a vector index snapshot", err)
	}
	if err := syncDir(l.root); err != nil {
		return 0, err
	}
	return w.n, nil
}

// ---- log ----

// resetLog installs an empty log (header only), atomically, and opens it
// for appending.
func (l *vlog) resetLog(dim int) error {
	f, err := l.root.OpenFile(vectorWALTmpFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return diskErr("creating a vector index log", err)
	}
	var e encoder
	e.raw([]byte(walMagic))
	e.u32(vectorFormatVersion)
	e.u32(uint32(dim))
	e.u32(crc32.Checksum(e.buf, crcTable))
	_, err = f.Write(e.buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.root.Rename(vectorWALTmpFile, vectorWALFile)
	}
	if err != nil {
		_ = l.root.Remove(vectorWALTmpFile)
		return diskErr("creating a vector index log", err)
	}
	if err := syncDir(l.root); err != nil {
		return err
	}
	af, err := l.root.OpenFile(vectorWALFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return diskErr("opening a vector index log", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.size = af, walHeaderBytes
	return nil
}

// replay applies the records of f newer than snapSeq to c and returns the
// offset after the last whole record.
func (l *vlog) replay(c *vcollection, f *os.File, snapSeq uint64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, diskErr("reading a vector index log", err)
	}
	size := st.Size()
	br := bufio.NewReaderSize(f, 1<<20)
	var head [walHeaderBytes]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return 0, corrupt(c.name, "index.wal has no header")
	}
	if string(head[:8]) != walMagic || crc32.Checksum(head[:16], crcTable) != binary.LittleEndian.Uint32(head[16:]) {
		return 0, corrupt(c.name, "index.wal is not a vector index log")
	}
	if v := binary.LittleEndian.Uint32(head[8:]); v != vectorFormatVersion {
		return 0, corrupt(c.name, fmt.Sprintf("index.wal has format version %d, this build reads %d", v, vectorFormatVersion))
	}
	if d := binary.LittleEndian.Uint32(head[12:]); int(d) != c.dim {
		return 0, vectorErr(ports.VectorDimension, fmt.Errorf("collection %s was indexed with %d dimensions, configured %d", c.name, d, c.dim))
	}
	off := int64(walHeaderBytes)
	last := snapSeq
	l.seq = last
	for off < size {
		if size-off < walRecordHeaderBytes {
			return off, nil // torn header of the final record
		}
		var rh [walRecordHeaderBytes]byte
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			return 0, diskErr("reading a vector index log", err)
		}
		n := binary.LittleEndian.Uint32(rh[0:])
		if crc32.Checksum(rh[0:4], crcTable) != binary.LittleEndian.Uint32(rh[4:]) || n > maxRecordBytes {
			if off+walRecordHeaderBytes == size {
				return off, nil
			}
			return 0, corrupt(c.name, "index.wal has a damaged record length")
		}
		end := off + walRecordHeaderBytes + int64(n)
		if end > size {
			return off, nil // torn payload of the final record
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return 0, diskErr("reading a vector index log", err)
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(rh[8:]) {
			if end == size {
				return off, nil // the final record, never acknowledged
			}
			return 0, corrupt(c.name, "index.wal fails a record checksum")
		}
		seq, err := l.applyRecord(c, payload, snapSeq)
		if err != nil {
			return 0, err
		}
		if seq <= last && seq > snapSeq {
			return 0, corrupt(c.name, "index.wal records are out of order")
		}
		last = max(last, seq)
		l.seq = last
		off = end
	}
	return off, nil
}

// applyRecord decodes one payload and applies it unless the snapshot
// already holds it.
func (l *vlog) applyRecord(c *vcollection, payload []byte, snapSeq uint64) (uint64, error) {
	r := &decoder{r: bytes.NewReader(payload), dim: c.dim, name: c.name}
	seq := r.u64()
	op := r.bytes(1)
	if r.err != nil {
		return 0, r.failure()
	}
	switch op[0] {
	case opUpsert:
		n := r.count(MaxVectorChunks)
		chunks := make([]ports.Chunk, 0, n)
		for range n {
			tenant := r.str(MaxVectorTenantBytes)
			ch := r.chunkBody()
			ch.Tenant = tenant
			chunks = append(chunks, ch)
		}
		if r.err != nil || !r.done() {
			return 0, r.failure()
		}
		if seq > snapSeq {
			c.applyUpsert(chunks)
		}
	case opTruncate:
		tenant := r.str(MaxVectorTenantBytes)
		source := r.str(MaxVectorSourceBytes)
		keep := r.u32()
		if r.err != nil || !r.done() {
			return 0, r.failure()
		}
		if seq > snapSeq {
			c.applyTruncate(tenant, source, int(keep))
		}
	default:
		return 0, corrupt(c.name, "index.wal has an unknown record type")
	}
	return seq, nil
}

func (l *vlog) appendUpsert(c *vcollection, chunks []ports.Chunk) error {
	var e encoder
	e.u64(l.seq + 1)
	e.buf = append(e.buf, opUpsert)
	e.u32(uint32(len(chunks)))
	for _, ch := range chunks {
		e.str(ch.Tenant)
		e.chunkBody(ch.ID, ch.Source, ch.Content, ch.Hash, ch.Index, ch.Embedding)
	}
	return l.append(e.buf)
}

func (l *vlog) appendTruncate(c *vcollection, tenant, source string, keep int) error {
	var e encoder
	e.u64(l.seq + 1)
	e.buf = append(e.buf, opTruncate)
	e.str(tenant)
	e.str(source)
	e.u32(uint32(keep))
	return l.append(e.buf)
}

// append writes one record and fsyncs it. On failure it cuts the file back
// to its previous end, so memory and disk still agree.
func (l *vlog) append(payload []byte) error {
	if l.broken != nil {
		return vectorErr(ports.VectorUnavailable, l.broken)
	}
	if len(payload) > maxRecordBytes {
		return vectorErr(ports.VectorLimit, ErrVectorTooLarge)
	}
	rec := make([]byte, walRecordHeaderBytes, walRecordHeaderBytes+len(payload))
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(rec[0:4], crcTable))
	binary.LittleEndian.PutUint32(rec[8:], crc32.Checksum(payload, crcTable))
	rec = append(rec, payload...)
	_, err := l.f.Write(rec)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = errors.New("the vector index log could not be rolled back; restart to reload it")
		}
		return diskErr("appending to a vector index log", err)
	}
	l.size += int64(len(rec))
	l.seq++
	return nil
}

// maybeCompact replaces a log that outgrew the snapshot with a fresh
// snapshot and an empty log. The write that triggered it is already
// durable, so a failure here costs nothing but the retry on a later write.
func (c *vcollection) maybeCompact() {
	l := c.log
	if l == nil || l.broken != nil || l.size < compactMinBytes || l.size < l.snapSize {
		return
	}
	_ = l.compact(c)
}

func (l *vlog) compact(c *vcollection) error {
	n, err := l.writeSnapshot(c)
	if err != nil {
		return err
	}
	l.snapSize = n
	// The snapshot now holds every record of the log; a crash before the
	// log is reset only means its records are skipped on the next open.
	if err := l.resetLog(c.dim); err != nil {
		// The rename may have happened and l.f may be the unlinked old log:
		// appends there would be lost, so stop writing.
		l.broken = errors.New("the vector index log could not be reset; restart to reload it")
		return err
	}
	return nil
}

func syncDir(root *os.Root) error {
	d, err := root.Open(".")
	if err != nil {
		return diskErr("syncing a vector index directory", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return diskErr("syncing a vector index directory", err)
	}
	return nil
}

// ---- encoding ----

type encoder struct{ buf []byte }

func (e *encoder) raw(b []byte) { e.buf = append(e.buf, b...) }
func (e *encoder) u32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }
func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) chunkBody(id, source, content, hash string, index int, vec []float32) {
	e.str(id)
	e.str(source)
	e.str(content)
	e.str(hash)
	e.u32(uint32(index))
	for _, f := range vec {
		e.u32(math.Float32bits(f))
	}
}

// take returns the encoded bytes and starts over, keeping the buffer.
func (e *encoder) take() []byte {
	b := e.buf
	e.buf = e.buf[:0]
	return b
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (w *countWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	var n int
	n, w.err = w.w.Write(b)
	w.n += int64(n)
}

// decoder reads the formats above, bounding every length by a limit so a
// damaged length cannot make it allocate without bound. The first failure
// sticks.
type decoder struct {
	r    io.Reader
	dim  int
	name string
	err  error
	tmp  []byte
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if cap(d.tmp) < n {
		d.tmp = make([]byte, n)
	}
	b := d.tmp[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = errTruncated
		return nil
	}
	return b
}

var (
	errTruncated = errors.New("ends early")
	errBound     = errors.New("has a length beyond the index limits")
)

func (d *decoder) u32() uint32 {
	b := d.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64() uint64 {
	b := d.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) count(limit int) int {
	n := d.u32()
	if d.err == nil && int64(n) > int64(limit) {
		d.err = errBound
		return 0
	}
	return int(n)
}

func (d *decoder) str(limit int) string {
	n := d.count(limit)
	b := d.bytes(n)
	if b == nil {
		return ""
	}
	return string(b)
}

func (d *decoder) chunkBody() ports.Chunk {
	var ch ports.Chunk
	ch.ID = d.str(MaxVectorKeyBytes)
	ch.Source = d.str(MaxVectorSourceBytes)
	ch.Content = d.str(MaxVectorContentBytes)
	ch.Hash = d.str(MaxVectorKeyBytes)
	idx := d.u32()
	if d.err == nil && idx > math.MaxInt32 {
		d.err = errBound
	}
	ch.Index = int(idx)
	raw := d.bytes(4 * d.dim)
	if raw == nil {
		return ch
	}
	ch.Embedding = make([]float32, d.dim)
	for i := range ch.Embedding {
		ch.Embedding[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return ch
}

func (d *decoder) done() bool {
	if br, ok := d.r.(*bytes.Reader); ok {
		return br.Len() == 0
	}
	return true
}

func (d *decoder) failure() error {
	what := "is damaged"
	if d.err != nil {
		what = d.err.Error()
	}
	return corrupt(d.name, "a vector index file "+what)
}
