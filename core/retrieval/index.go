package retrieval

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Weights of a chunk's own terms in its lexical field: a definition's
// name says most about it, a section's heading nearly as much.
const (
	nameWeight    = 3
	headingWeight = 2
)

// minRefLen is the shortest identifier counted as a reference: shorter
// ones (i, x, ok) are loop variables, not uses of a definition.
const minRefLen = 3

// Entry is one file's analysis: its chunks, the terms in each, the
// definitions it holds and the identifiers it uses. An Entry is immutable
// once built and safe to share between calls and callers.
type Entry struct {
	// Kind and Path name the file (the pack's pin kind and its path).
	Kind, Path string
	Size       int64
	ModTime    time.Time
	Chunks     []Chunk
	// post maps a term to the chunks holding it, with its frequency.
	post map[string][]posting
	// lens is each chunk's term count.
	lens []int32
	// refs counts each identifier the file mentions.
	refs map[string]int32
	// test: the file is a test or a fixture (codeintel.IsTestFile).
	test bool
}

type posting struct {
	chunk int32
	tf    int32
}

// Analyze builds a file's Entry from its content and the definitions the
// symbol extractor found in it (nil for a document).
func Analyze(kind string, info ports.FileInfo, content []byte, symbols []ports.Symbol) *Entry {
	lines := splitLines(content)
	e := &Entry{Kind: kind, Path: info.Path, Size: info.Size, ModTime: info.ModTime, post: map[string][]posting{}, refs: map[string]int32{},
		test: codeintel.IsTestFile(info.Path)}
	e.Chunks = chunkFile(info.Path, lines, symbols)
	e.lens = make([]int32, len(e.Chunks))
	tf := map[string]int32{}
	// Identifiers repeat through a file: split and stem each once.
	memo := map[string][]string{}
	for ci, c := range e.Chunks {
		clear(tf)
		for i := c.Start; i <= c.End; i++ {
			eachWord(string(lines[i-1]), func(w string) {
				terms, ok := memo[w]
				if !ok {
					terms = wordTerms(w)
					memo[w] = terms
				}
				for _, t := range terms {
					tf[t]++
				}
			})
		}
		boost := int32(0)
		switch {
		case c.DefLine > 0:
			boost = nameWeight
		case c.Kind == KindSection:
			boost = headingWeight
		}
		if boost > 0 {
			for _, t := range Terms(c.Name) {
				tf[t] += boost
			}
		}
		var n int32
		for t, f := range tf {
			e.post[t] = append(e.post[t], posting{chunk: int32(ci), tf: f})
			n += f
		}
		e.lens[ci] = n
	}
	if !isDocument(info.Path) {
		eachWord(string(content), func(w string) {
			if len(w) >= minRefLen {
				e.refs[w]++
			}
		})
	}
	return e
}

// Cache holds file analyses across calls, keyed by kind and path and
// valid while the file's size and modification time are unchanged, and
// the last few corpora built from them. Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]*Entry
	corpora []*Corpus // most recent first
}

type cacheKey struct{ kind, path string }

// corporaKept is how many assembled corpora a Cache remembers (one per
// distinct set of readable files: callers with different grants).
const corporaKept = 4

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[cacheKey]*Entry{}} }

// Lookup returns the cached analysis of a file when it is still current.
func (c *Cache) Lookup(kind string, info ports.FileInfo) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[cacheKey{kind, info.Path}]
	if e == nil || e.Size != info.Size || !e.ModTime.Equal(info.ModTime) {
		return nil
	}
	return e
}

// Store remembers an analysis, replacing an older one of the same file.
func (c *Cache) Store(e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[cacheKey{e.Kind, e.Path}] = e
}

// Forget drops the analyses of kind's files that keep rejects (files no
// longer listed), so a cache never outgrows the tree.
func (c *Cache) Forget(kind string, keep func(path string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.kind == kind && !keep(k.path) {
			delete(c.entries, k)
		}
	}
}

// Corpus returns the corpus over exactly these entries, from the cache
// when one was built over the same analyses.
func (c *Cache) Corpus(entries []*Entry) *Corpus {
	key := corpusKey(entries)
	c.mu.Lock()
	for i, k := range c.corpora {
		if k.key == key {
			copy(c.corpora[1:i+1], c.corpora[:i])
			c.corpora[0] = k
			c.mu.Unlock()
			return k
		}
	}
	c.mu.Unlock()
	k := NewCorpus(entries)
	k.key = key
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corpora = append([]*Corpus{k}, c.corpora...)
	if len(c.corpora) > corporaKept {
		c.corpora = c.corpora[:corporaKept]
	}
	return k
}

// corpusKey identifies a set of analyses by each file's kind, path, size
// and modification time.
func corpusKey(entries []*Entry) [32]byte {
	h := sha256.New()
	var b [8]byte
	for _, e := range entries {
		h.Write([]byte(e.Kind))
		h.Write([]byte{0})
		h.Write([]byte(e.Path))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(b[:], uint64(e.Size))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(e.ModTime.UnixNano()))
		h.Write(b[:])
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}
