package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"

	"go.etcd.io/bbolt"
)

// Opening checks the file in two steps. checkFile reads it with plain
// reads before bbolt maps it, covering everything bbolt.Open itself
// touches; verify then runs on the open store, guarded. Together they
// check:
//
//  1. a valid meta page exists, and the file is at least as long as the
//     newest commit says (a cut file otherwise opens, and faults on the
//     first page past its end);
//  2. the free page list is what the meta page says, within the file;
//  3. the pages below the high-water mark are exactly free pages and runs
//     of a page and its overflow, none running past the end (a damaged
//     overflow count would otherwise send bbolt's check into a loop of
//     billions);
//  4. every bucket, page and value reads back;
//  5. bbolt's own consistency check passes (page references, free pages,
//     key order). It runs on a goroutine of bbolt's, where a damaged page
//     crashes the process instead of failing, so it comes last and only
//     meets pages that steps 1 to 4 have read successfully.

// bbolt's on-disk format (version 2), as far as the checks read it: a
// page starts with a 16-byte header (id u64, flags u16, count u16,
// overflow u32); pages 0 and 1 hold a meta record right after it; all in
// the host's byte order.
const (
	pageHeaderBytes  = 16
	metaMagic        = 0xED0CDAED
	metaVersion      = 2
	metaBytes        = 64
	metaChecksumAt   = 56 // the checksum is FNV-64a of the bytes before it
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0)
	// freelistCountEscape in a freelist page's count means the count is
	// the page's first element.
	freelistCountEscape = 0xFFFF
)

// meta is the part of a meta page the checks use.
type meta struct {
	pageSize                      uint64
	root, freelist, highWater, tx uint64
}

func parseMeta(b []byte) (meta, bool) {
	h := fnv.New64a()
	_, _ = h.Write(b[:metaChecksumAt])
	ne := binary.NativeEndian
	m := meta{
		pageSize: uint64(ne.Uint32(b[8:])), root: ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]), highWater: ne.Uint64(b[40:]), tx: ne.Uint64(b[48:]),
	}
	ok := ne.Uint32(b[0:]) == metaMagic && ne.Uint32(b[4:]) == metaVersion && ne.Uint64(b[metaChecksumAt:]) == h.Sum64()
	return m, ok
}

// checkFile is steps 1 and 2, on the locked but not yet mapped file. An
// empty file is a new store.
func checkFile(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return diskErr("reading the store file", err)
	}
	if st.Size() == 0 {
		return nil
	}
	readAt := func(b []byte, off int64) bool {
		n, err := f.ReadAt(b, off)
		return n == len(b) && (err == nil || errors.Is(err, io.EOF))
	}
	// Meta page 0 names the page size; if it is damaged, look for meta
	// page 1 where each plausible page size would put it, as bbolt does.
	var buf [metaBytes]byte
	var m0, m1 meta
	var ok0, ok1 bool
	if readAt(buf[:], pageHeaderBytes) {
		m0, ok0 = parseMeta(buf[:])
	}
	pageSize := m0.pageSize
	if !ok0 {
		for size := int64(1024); size <= 1<<24 && size+pageHeaderBytes+metaBytes <= st.Size(); size <<= 1 {
			if readAt(buf[:], size+pageHeaderBytes) {
				if m, ok := parseMeta(buf[:]); ok && int64(m.pageSize) == size {
					pageSize = m.pageSize
					break
				}
			}
		}
	}
	if pageSize < 1024 || pageSize > 1<<24 {
		return fmt.Errorf("%w: it has no valid meta page", ErrCorrupt)
	}
	if readAt(buf[:], int64(pageSize)+pageHeaderBytes) {
		m1, ok1 = parseMeta(buf[:])
	}
	// bbolt uses the newer meta page when it is valid, else the older.
	newer, older, okNewer, okOlder := m0, m1, ok0, ok1
	if m1.tx > m0.tx {
		newer, older, okNewer, okOlder = m1, m0, ok1, ok0
	}
	m := newer
	switch {
	case okNewer:
	case okOlder:
		m = older
	default:
		return fmt.Errorf("%w: it has no valid meta page", ErrCorrupt)
	}
	if m.pageSize != pageSize {
		return fmt.Errorf("%w: its meta pages disagree", ErrCorrupt)
	}
	if m.highWater > uint64(st.Size())/pageSize {
		return fmt.Errorf("%w: it is shorter than its last commit", ErrCorrupt)
	}
	if m.root < 2 || m.root >= m.highWater {
		return fmt.Errorf("%w: its root page is out of range", ErrCorrupt)
	}
	if m.freelist == noFreelist {
		// Written without a free page list, which this package never
		// does; bbolt would rebuild the list where a damaged page crashes.
		return fmt.Errorf("%w: it has no free page list", ErrCorrupt)
	}
	return checkFreelist(f, m, readAt)
}

// checkFreelist is step 2: the freelist page's header, its length, and
// that every page it lists is a data page below the high-water mark.
func checkFreelist(f *os.File, m meta, readAt func([]byte, int64) bool) error {
	bad := fmt.Errorf("%w: its free page list is damaged", ErrCorrupt)
	if m.freelist < 2 || m.freelist >= m.highWater {
		return bad
	}
	off := int64(m.freelist * m.pageSize)
	var head [pageHeaderBytes + 8]byte
	if !readAt(head[:], off) {
		return bad
	}
	ne := binary.NativeEndian
	overflow := uint64(ne.Uint32(head[12:]))
	if ne.Uint64(head[0:]) != m.freelist || ne.Uint16(head[8:]) != freelistPageFlag || m.freelist+overflow >= m.highWater {
		return bad
	}
	first, count := uint64(0), uint64(ne.Uint16(head[10:]))
	if count == freelistCountEscape {
		first, count = 1, ne.Uint64(head[pageHeaderBytes:])
	}
	if pageHeaderBytes+(first+count)*8 > (1+overflow)*m.pageSize {
		return bad
	}
	ids := make([]byte, count*8)
	if !readAt(ids, off+pageHeaderBytes+int64(first*8)) {
		return bad
	}
	for i := range count {
		if id := ne.Uint64(ids[i*8:]); id < 2 || id >= m.highWater {
			return bad
		}
	}
	return nil
}

// verify is steps 3 to 5, on the open store.
func (s *Store) verify() error {
	return s.run(false, func(tx *bbolt.Tx) error {
		if err := checkPageRuns(tx); err != nil {
			return err
		}
		var sink byte
		if err := tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return walk(b, &sink) }); err != nil {
			return err
		}
		runtime.KeepAlive(sink)
		// Drain the check to its end: it reads the transaction until then.
		consistent := true
		for err := range tx.Check() {
			consistent = consistent && err == nil
		}
		if !consistent {
			return fmt.Errorf("%w: its pages are inconsistent", ErrCorrupt)
		}
		return nil
	})
}

// checkPageRuns is step 3.
func checkPageRuns(tx *bbolt.Tx) error {
	hwm := uint64(tx.Size()) / uint64(tx.DB().Info().PageSize)
	for id := uint64(2); id < hwm; {
		info, err := tx.Page(int(id))
		if err != nil || info == nil {
			return fmt.Errorf("%w: a page cannot be read", ErrCorrupt)
		}
		switch info.Type {
		case "free":
			id++
			continue
		case "branch", "leaf", "freelist":
		default:
			return fmt.Errorf("%w: a page has an unknown type", ErrCorrupt)
		}
		next := id + 1 + uint64(info.OverflowCount)
		if next > hwm {
			return fmt.Errorf("%w: a page runs past the end of the file", ErrCorrupt)
		}
		id = next
	}
	return nil
}

// walk is step 4: it touches every key and value under b, nested buckets
// included; sink keeps the compiler from dropping the reads.
func walk(b *bbolt.Bucket, sink *byte) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			if len(v) > 0 {
				*sink ^= v[len(v)-1] // the value's last page
			}
			continue
		}
		child := b.Bucket(k)
		if child == nil {
			return fmt.Errorf("%w: a bucket entry is damaged", ErrCorrupt)
		}
		if err := walk(child, sink); err != nil {
			return err
		}
	}
	return nil
}
