package vectorindex

import (
	"sync"
	"sync/atomic"

	"github.com/arrowhead-go/arrowhead/ports"
)

// The embedded index's in-memory state: collections of tenants, each a
// slot table of chunks with a flat vector table and keyword postings. The
// persistence (vectors_persist.go) keeps it; these types serve reads.

// Rebuild the keyword postings once stale entries (of replaced or removed
// chunks) outnumber live ones and there are at least this many.
const minStalePostings = 1 << 16

// ---- collections ----

// vcollection is one collection: its tenants and the bookkeeping its limits
// need. mu guards everything.
type vcollection struct {
	name string
	dim  int

	mu           sync.RWMutex
	tenants      map[string]*vtenant
	owner        map[string]*vtenant // chunk id -> its tenant, across tenants
	chunks       int
	contentBytes int64

	// version is the persisted collection's change counter this memory
	// reflects, and tenantVer each tenant's (the counter's value at the
	// tenant's last write): see vectors_persist.go.
	version   uint64
	tenantVer map[string]uint64
}

func newCollection(name string, dim int) *vcollection {
	return &vcollection{name: name, dim: dim, tenants: map[string]*vtenant{}, owner: map[string]*vtenant{}, tenantVer: map[string]uint64{}}
}

type position struct {
	tenant, source string
	index          int
}

// plan checks an upsert against the limits and the uniqueness of ids and
// positions, replaying it in order over the current state without changing
// anything, and returns the collection's chunk count after it and the
// chunk count of each tenant it writes.
func (c *vcollection) plan(chunks []ports.Chunk) (int, map[string]int, error) {
	idTenant := map[string]string{} // id -> tenant, as of the planned step
	idPos := map[string]position{}  // id -> position, as of the planned step
	posID := map[position]string{}  // position -> id ("" = freed)
	idBytes := map[string]int{}     // id -> content bytes, as of the planned step
	newTenants := map[string]bool{}
	tenants := map[string]int{} // tenant -> its chunk count after the upsert
	chunks0, bytes0 := c.chunks, c.contentBytes
	for _, ch := range chunks {
		pos := position{ch.Tenant, ch.Source, ch.Index}
		tenant, existed := idTenant[ch.ID]
		var oldPos position
		var oldBytes int
		if existed {
			oldPos, oldBytes = idPos[ch.ID], idBytes[ch.ID]
		} else if t := c.owner[ch.ID]; t != nil {
			existed = true
			slot := t.byID[ch.ID]
			tenant = t.name
			oldPos = position{t.name, t.chunks[slot].source, t.chunks[slot].index}
			oldBytes = len(t.chunks[slot].content)
		}
		if existed && tenant != ch.Tenant {
			return 0, nil, vectorErr(ports.VectorFailed, ports.ErrVectorIDConflict)
		}
		holder, planned := posID[pos]
		if !planned {
			if t := c.tenants[pos.tenant]; t != nil {
				if slot, ok := t.bySource[pos.source][pos.index]; ok {
					holder = t.chunks[slot].id
				}
			}
		}
		if holder != "" && holder != ch.ID {
			return 0, nil, vectorErr(ports.VectorFailed, ports.ErrVectorIDConflict)
		}
		if existed && oldPos != pos {
			posID[oldPos] = ""
		}
		posID[pos] = ch.ID
		idPos[ch.ID] = pos
		idTenant[ch.ID] = ch.Tenant
		idBytes[ch.ID] = len(ch.Content)
		if _, ok := tenants[ch.Tenant]; !ok {
			if t := c.tenants[ch.Tenant]; t != nil {
				tenants[ch.Tenant] = t.live
			} else {
				tenants[ch.Tenant] = 0
			}
		}
		if !existed {
			chunks0++
			tenants[ch.Tenant]++
		}
		bytes0 += int64(len(ch.Content) - oldBytes)
		if c.tenants[ch.Tenant] == nil {
			newTenants[ch.Tenant] = true
		}
	}
	if chunks0 > MaxVectorChunks || bytes0 > MaxVectorCollectionBytes || len(c.tenants)+len(newTenants) > MaxVectorTenants {
		return 0, nil, vectorErr(ports.VectorLimit, ports.ErrVectorTooLarge)
	}
	return chunks0, tenants, nil
}

// applyUpsert applies a planned (or loaded) upsert. Embeddings are unit
// length already.
func (c *vcollection) applyUpsert(chunks []ports.Chunk) {
	for _, ch := range chunks {
		if t := c.owner[ch.ID]; t != nil {
			slot := t.byID[ch.ID]
			c.contentBytes -= int64(len(t.chunks[slot].content))
			c.chunks--
			t.remove(slot)
			delete(c.owner, ch.ID)
			if t.live == 0 && t.name != ch.Tenant {
				// Only a damaged store loaded at start-up moves an id
				// between tenants; the plan refuses it.
				delete(c.tenants, t.name)
			}
		}
		t := c.tenants[ch.Tenant]
		if t == nil {
			t = newTenant(ch.Tenant, c.dim)
			c.tenants[ch.Tenant] = t
		}
		if slot, ok := t.bySource[ch.Source][ch.Index]; ok {
			// Only a damaged store loaded at start-up gets here: the
			// plan refuses a second holder of a position.
			id := t.chunks[slot].id
			c.contentBytes -= int64(len(t.chunks[slot].content))
			c.chunks--
			t.remove(slot)
			delete(c.owner, id)
		}
		t.insert(ch)
		c.owner[ch.ID] = t
		c.chunks++
		c.contentBytes += int64(len(ch.Content))
	}
}

// loadTenant adds tenant name, absent from c, as loaded: chunks with
// unique ids and positions, none held by another tenant. The tenant takes
// st.Vecs as its vector table when the load provides it.
func (c *vcollection) loadTenant(name string, st VectorTenantState) error {
	if st.Vecs == nil || len(st.Vecs) != len(st.Chunks)*c.dim {
		for _, ch := range st.Chunks {
			if ch.Tenant != name || c.owner[ch.ID] != nil {
				return CorruptVectors(c.name, "a chunk is held twice")
			}
		}
		c.applyUpsert(st.Chunks)
		return nil
	}
	t := newTenant(name, c.dim)
	t.vecs = st.Vecs
	t.chunks = make([]vchunk, len(st.Chunks))
	for i, ch := range st.Chunks {
		if ch.Tenant != name || c.owner[ch.ID] != nil {
			return CorruptVectors(c.name, "a chunk is held twice")
		}
		m := t.bySource[ch.Source]
		if m == nil {
			m = map[int]uint32{}
			t.bySource[ch.Source] = m
		}
		if _, dup := m[ch.Index]; dup {
			return CorruptVectors(c.name, "a position is held twice")
		}
		slot := uint32(i)
		m[ch.Index] = slot
		t.byID[ch.ID] = slot
		t.chunks[i] = vchunk{id: ch.ID, source: ch.Source, content: ch.Content, hash: ch.Hash, index: ch.Index, alive: true}
		t.live++
		c.owner[ch.ID] = t
		c.chunks++
		c.contentBytes += int64(len(ch.Content))
	}
	c.tenants[name] = t
	return nil
}

// reset forgets everything c holds, so the next use loads it whole.
func (c *vcollection) reset() {
	c.tenants, c.owner, c.tenantVer = map[string]*vtenant{}, map[string]*vtenant{}, map[string]uint64{}
	c.chunks, c.contentBytes, c.version = 0, 0, 0
}

func (c *vcollection) applyTruncate(tenant, source string, keep int) {
	t := c.tenants[tenant]
	if t == nil {
		return
	}
	for idx, slot := range t.bySource[source] {
		if idx < keep {
			continue
		}
		id := t.chunks[slot].id
		c.contentBytes -= int64(len(t.chunks[slot].content))
		c.chunks--
		t.remove(slot)
		delete(c.owner, id)
	}
	if t.live == 0 {
		delete(c.tenants, tenant)
	}
}

// ---- tenants ----

// vtenant is one tenant's chunks. Chunks live in slots: the vector of slot
// s is vecs[s*dim:(s+1)*dim], contiguous so a scan streams through memory.
// A removed slot is reused by the next insert; its generation changes so
// keyword postings that still name it are recognised as stale.
type vtenant struct {
	name string
	dim  int

	vecs   []float32
	chunks []vchunk
	free   []uint32
	live   int

	byID     map[string]uint32
	bySource map[string]map[int]uint32

	// The keyword index: term -> postings, and per-term document frequency
	// over live chunks. stale counts postings of removed chunks. It is
	// built on the tenant's first keyword query (indexKeywords), not at
	// load: tokenising every chunk would hold up the first vector query
	// after a start, which needs none of it. Once built, writes keep it
	// up to date.
	indexed  atomic.Bool
	indexMu  sync.Mutex // serialises the build among concurrent readers
	terms    map[string]uint32
	postings [][]vposting
	df       []int32
	stale    int
	nPosting int
	totalLen int64
}

type vchunk struct {
	id, source, content, hash string
	index                     int
	alive                     bool
	gen                       uint32
	length                    int32 // tokens, for BM25 length normalisation
}

type vposting struct {
	slot, gen uint32
	tf        uint32
}

func newTenant(name string, dim int) *vtenant {
	return &vtenant{
		name: name, dim: dim,
		byID: map[string]uint32{}, bySource: map[string]map[int]uint32{}, terms: map[string]uint32{},
	}
}

func (t *vtenant) hit(slot uint32, score float64) ports.VectorHit {
	ch := &t.chunks[slot]
	return ports.VectorHit{ID: ch.id, Source: ch.source, Index: ch.index, Content: ch.content, Score: score}
}

func (t *vtenant) insert(ch ports.Chunk) {
	var slot uint32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
		copy(t.vecs[int(slot)*t.dim:], ch.Embedding)
	} else {
		slot = uint32(len(t.chunks))
		t.chunks = append(t.chunks, vchunk{})
		t.vecs = append(t.vecs, ch.Embedding...)
	}
	c := &t.chunks[slot]
	c.id, c.source, c.content, c.hash, c.index, c.alive = ch.ID, ch.Source, ch.Content, ch.Hash, ch.Index, true
	t.live++
	t.byID[ch.ID] = slot
	m := t.bySource[ch.Source]
	if m == nil {
		m = map[int]uint32{}
		t.bySource[ch.Source] = m
	}
	m[ch.Index] = slot

	if t.indexed.Load() {
		c.length = int32(t.post(slot))
	}
}

// indexKeywords builds the keyword index of a tenant loaded without it.
// Readers of the collection call it under its read lock, so it takes the
// tenant's own; writers hold the collection's lock exclusively, so none
// runs beside it.
func (t *vtenant) indexKeywords() {
	if t.indexed.Load() {
		return
	}
	t.indexMu.Lock()
	defer t.indexMu.Unlock()
	if t.indexed.Load() {
		return
	}
	t.rebuildPostings()
	t.indexed.Store(true)
}

// post adds the keyword postings of the chunk in slot and returns its
// token count.
func (t *vtenant) post(slot uint32) int {
	c := &t.chunks[slot]
	counts, length := tokenize(c.content)
	t.totalLen += int64(length)
	for term, tf := range counts {
		id, ok := t.terms[term]
		if !ok {
			id = uint32(len(t.postings))
			t.terms[term] = id
			t.postings = append(t.postings, nil)
			t.df = append(t.df, 0)
		}
		t.postings[id] = append(t.postings[id], vposting{slot: slot, gen: c.gen, tf: tf})
		t.df[id]++
		t.nPosting++
	}
	return length
}

func (t *vtenant) remove(slot uint32) {
	c := &t.chunks[slot]
	delete(t.byID, c.id)
	if m := t.bySource[c.source]; m != nil {
		delete(m, c.index)
		if len(m) == 0 {
			delete(t.bySource, c.source)
		}
	}
	indexed := t.indexed.Load()
	if indexed {
		counts, _ := tokenize(c.content)
		for term := range counts {
			t.df[t.terms[term]]--
			t.stale++
		}
		t.totalLen -= int64(c.length)
	}
	*c = vchunk{gen: c.gen + 1}
	t.free = append(t.free, slot)
	t.live--
	if indexed && t.stale >= minStalePostings && t.stale*2 > t.nPosting {
		t.rebuildPostings()
	}
}

// rebuildPostings drops stale postings and terms no live chunk holds.
func (t *vtenant) rebuildPostings() {
	t.terms = map[string]uint32{}
	t.postings, t.df = nil, nil
	t.stale, t.nPosting, t.totalLen = 0, 0, 0
	for slot := range t.chunks {
		if c := &t.chunks[slot]; c.alive {
			c.length = int32(t.post(uint32(slot)))
		}
	}
}
