package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

func mustMatcher(t testing.TB, q string, regex bool, opts MatcherOptions) *Matcher {
	t.Helper()
	m, err := NewMatcher(q, regex, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// searchDocs runs Search over the documents kv (path, content, ...) and
// returns its result.
func searchDocs(t *testing.T, m *Matcher, lim Limits, kv ...string) Result {
	t.Helper()
	files := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		files[kv[i]] = kv[i+1]
	}
	rep, err := Search(t.Context(), Request{Store: newMemStore(files), Allow: allowAll, Matcher: m, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Result
}

func TestSearchPositions(t *testing.T) {
	for _, regex := range []bool{false, true} {
		t.Run(fmt.Sprintf("regex=%v", regex), func(t *testing.T) {
			res := searchDocs(t, mustMatcher(t, "needle", regex, MatcherOptions{}), Limits{Deadline: time.Hour},
				"a.md", "first line\nsecond needle here\r\nthird\n\nneedle at start, needle again\nno",
				"b.txt", "été needle",
				"c.txt", "ends with needle",
				"d.txt", "",
			)
			want := []Match{
				{Path: "a.md", Line: 2, Column: 8, Snippet: "second needle here"},
				{Path: "a.md", Line: 5, Column: 1, Snippet: "needle at start, needle again"},
				{Path: "b.txt", Line: 1, Column: 5, Snippet: "été needle"},
				{Path: "c.txt", Line: 1, Column: 11, Snippet: "ends with needle"},
			}
			if !slices.Equal(res.Matches, want) {
				t.Errorf("matches:\n got %+v\nwant %+v", res.Matches, want)
			}
			size := len("first line\nsecond needle here\r\nthird\n\nneedle at start, needle again\nno") + len("été needle") + len("ends with needle")
			if res.FilesScanned != 4 || res.BytesScanned != int64(size) {
				t.Errorf("counters: %d files, %d bytes", res.FilesScanned, res.BytesScanned)
			}
			if res.ResultsTruncated || res.FilesTruncated || res.BytesTruncated || res.DeadlineExceeded {
				t.Errorf("flags: %+v", res)
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	line := strings.Repeat("a", 50) + "NEEDLE" + strings.Repeat("b", 50)
	cases := []struct {
		name       string
		line       string
		start, end int
		max        int
		want       string
	}{
		{"short line whole", "x NEEDLE y", 2, 8, 20, "x NEEDLE y"},
		{"centred", line, 50, 56, 16, "aaaaaNEEDLEbbbbb"},
		{"at the start", "NEEDLE" + strings.Repeat("b", 50), 0, 6, 10, "NEEDLEbbbb"},
		{"at the end", strings.Repeat("a", 50) + "NEEDLE", 50, 56, 10, "aaaaNEEDLE"},
		{"match longer than the snippet", line, 50, 56, 4, "NEED"},
		{"characters, not bytes", strings.Repeat("é", 20) + "X" + strings.Repeat("ü", 20), 40, 41, 5, "ééXüü"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := snippet([]byte(tc.line), tc.start, tc.end, tc.max)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSearchLongLines(t *testing.T) {
	// MaxLineBytes 20: only the first 20 bytes of each line are searched.
	content := strings.Join([]string{
		"0123456789012345needle",    // straddles the cut: not found
		"0123456789012needle",       // ends at byte 19: found
		strings.Repeat("x", 100000), // long, no match
		strings.Repeat("y", 30) + "needle",
		"needle",
	}, "\n")
	for _, regex := range []bool{false, true} {
		res := searchDocs(t, mustMatcher(t, "needle", regex, MatcherOptions{}), Limits{MaxLineBytes: 20, Deadline: time.Hour}, "a", content)
		var lines []int
		for _, m := range res.Matches {
			lines = append(lines, m.Line)
		}
		if !slices.Equal(lines, []int{2, 5}) {
			t.Errorf("regex=%v: matching lines %v, want [2 5]", regex, lines)
		}
	}
}

func TestSearchLimits(t *testing.T) {
	three := "x needle\ny needle\nz needle\n"
	m := mustMatcher(t, "needle", false, MatcherOptions{})

	res := searchDocs(t, m, Limits{MaxResults: 3, Deadline: time.Hour}, "a", three)
	if len(res.Matches) != 3 || res.ResultsTruncated {
		t.Errorf("exactly MaxResults matches is not truncated: %d %v", len(res.Matches), res.ResultsTruncated)
	}
	res = searchDocs(t, m, Limits{MaxResults: 3, Deadline: time.Hour}, "a", three, "b", "needle")
	if len(res.Matches) != 3 || !res.ResultsTruncated || res.FilesScanned != 2 {
		t.Errorf("one more match truncates: %+v", res)
	}

	res = searchDocs(t, m, Limits{MaxFiles: 2, Deadline: time.Hour}, "a", "needle", "b", "needle")
	if res.FilesScanned != 2 || res.FilesTruncated {
		t.Errorf("exactly MaxFiles files is not truncated: %+v", res)
	}
	res = searchDocs(t, m, Limits{MaxFiles: 2, Deadline: time.Hour}, "a", "needle", "b", "needle", "c", "needle")
	if res.FilesScanned != 2 || !res.FilesTruncated || len(res.Matches) != 2 {
		t.Errorf("a third file truncates: %+v", res)
	}

	// 27 bytes per copy of three; the budget ends inside the second
	// document, after its first line.
	res = searchDocs(t, m, Limits{MaxTotalBytes: 27 + 12, Deadline: time.Hour}, "a", three, "b", three, "c", three)
	if !res.BytesTruncated || res.BytesScanned != 39 || res.FilesScanned != 2 || len(res.Matches) != 4 {
		t.Errorf("byte budget: %+v", res)
	}
	res = searchDocs(t, m, Limits{MaxTotalBytes: 27, Deadline: time.Hour}, "a", three, "b", three)
	if !res.BytesTruncated || res.FilesScanned != 1 || len(res.Matches) != 3 {
		t.Errorf("a budget spent exactly stops before the next document: %+v", res)
	}
	res = searchDocs(t, m, Limits{MaxTotalBytes: 27, Deadline: time.Hour}, "a", three)
	if res.BytesTruncated {
		t.Errorf("a budget spent exactly by the last document is not truncated: %+v", res)
	}
}

func TestLimitsDefaults(t *testing.T) {
	got := Limits{MaxFiles: -1}.withDefaults()
	want := Limits{MaxFiles: 2000, MaxResults: 50, MaxTotalBytes: 200_000, SnippetMaxChars: 200, MaxLineBytes: 64 << 10, Deadline: 250 * time.Millisecond,
		Workers: runtime.GOMAXPROCS(0)}
	if got != want {
		t.Errorf("defaults %+v, want the seed's %+v", got, want)
	}
	kept := Limits{MaxFiles: 1, MaxResults: 2, MaxTotalBytes: 3, SnippetMaxChars: 4, MaxLineBytes: 5, Deadline: 6, MaxFileBytes: 7, Workers: 8}
	if kept.withDefaults() != kept {
		t.Error("set limits must be kept")
	}
}

// expiringStore hands over its documents only once the search's own
// context has ended, so their scan starts past the deadline.
type expiringStore struct{ *memStore }

func (s expiringStore) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	<-ctx.Done()
	return s.memStore.Read(context.Background(), rel, maxBytes)
}

// TestSearchDeadlineInsideDocument: the deadline is checked inside a
// document (between lines, or line-aligned chunks for a literal), not only
// between documents: a document handed over after the deadline is not
// scanned to its end, and nothing of it is reported.
func TestSearchDeadlineInsideDocument(t *testing.T) {
	content := strings.Repeat("needle\n", 1000)
	for _, regex := range []bool{false, true} {
		s := expiringStore{newMemStore(map[string]string{"a": content})}
		rep, err := Search(t.Context(), Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, "needle", regex, MatcherOptions{}),
			Limits: Limits{MaxResults: 10_000, Deadline: time.Millisecond, Workers: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.DeadlineExceeded || len(rep.Matches) != 0 {
			t.Errorf("regex=%v: scanned past the deadline: %d matches, flag %v", regex, len(rep.Matches), rep.DeadlineExceeded)
		}
	}
}

// TestSearchCallerDeadline: the caller's own deadline is the caller's
// error, not a truncation.
func TestSearchCallerDeadline(t *testing.T) {
	expired, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	s := newMemStore(map[string]string{"a": strings.Repeat("line without it\n", 100_000)})
	rep, err := Search(expired, Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, "needle", true, MatcherOptions{}), Limits: Limits{Deadline: time.Hour}})
	if !errors.Is(err, context.DeadlineExceeded) || rep.DeadlineExceeded {
		t.Fatalf("an expired caller deadline is the caller's error: %+v %v", rep.Result, err)
	}
}

// TestLiteralAgreesWithLineScan checks the whole-buffer literal scans
// (plain and case-folded) against the line-by-line regexp scan of the same
// query, quoted, over random documents with short lines, long lines, CRLF,
// case variants, invalid bytes, chunk-crossing sizes and small line caps.
func TestLiteralAgreesWithLineScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	words := []string{"ab", "aBc", "needle", "NEED", "le", "é", "É", "\r", "x", " ", "nee\r", "\u212a", "k", "ſ", "S", "\xff", "\ufffd"}
	// No U+FFFD query: regexp lets it match an invalid byte, a literal
	// search does not (see foldLiteral).
	queries := []string{"needle", "abc", "e", "é", "ks", "Sk", "a b"}
	for iter := range 120 {
		var b strings.Builder
		size := rng.IntN(4000)
		if iter%20 == 0 {
			size = literalChunkBytes + rng.IntN(5000) // crosses a chunk boundary
		}
		for b.Len() < size {
			if rng.IntN(8) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteString(words[rng.IntN(len(words))])
			}
		}
		query := queries[rng.IntN(len(queries))]
		fold := iter%2 == 1
		opts := MatcherOptions{CaseInsensitive: fold}
		lim := Limits{MaxResults: 1 << 20, MaxTotalBytes: 1 << 30, MaxLineBytes: 1 + rng.IntN(64), SnippetMaxChars: 1 + rng.IntN(30), Deadline: time.Hour}
		lit := searchDocs(t, mustMatcher(t, query, false, opts), lim, "d", b.String())
		re := searchDocs(t, mustMatcher(t, regexp.QuoteMeta(query), true, opts), lim, "d", b.String())
		if lit.DeadlineExceeded || re.DeadlineExceeded {
			t.Fatal("a scan hit the deadline")
		}
		if !slices.Equal(lit.Matches, re.Matches) {
			t.Fatalf("iteration %d (query %q, fold %v, line cap %d): literal and line scans disagree: %d vs %d matches",
				iter, query, fold, lim.MaxLineBytes, len(lit.Matches), len(re.Matches))
		}
	}
}

// fakeStore serves documents from a map and records reads.
type fakeStore struct {
	mu    sync.Mutex
	docs  map[string]string
	errs  map[string]error
	reads []string
}

func (s *fakeStore) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	return s.read(rel, maxBytes)
}

// read is Read past its context check, so a session that has made that
// check once counts exactly the reads the base store counts.
func (s *fakeStore) read(rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	s.mu.Lock()
	s.reads = append(s.reads, rel)
	s.mu.Unlock()
	if err := s.errs[rel]; err != nil {
		return nil, ports.FileInfo{}, err
	}
	d, ok := s.docs[rel]
	if !ok {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	if maxBytes > 0 && int64(len(d)) > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	return []byte(d), ports.FileInfo{Path: rel, Size: int64(len(d))}, nil
}

// List lists the documents in path order.
func (s *fakeStore) List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
	paths := slices.Sorted(maps.Keys(s.docs))
	var out []ports.FileInfo
	for _, p := range paths {
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, ports.FileInfo{Path: p, Size: int64(len(s.docs[p]))})
	}
	return out, false, nil
}

func (s *fakeStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reads)
}

// bufferStore adds ReadInto, reusing the caller's buffer.
type bufferStore struct{ *fakeStore }

func (s bufferStore) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	d, fi, err := s.Read(ctx, rel, maxBytes)
	if err != nil {
		return nil, fi, err
	}
	return append(buf[:0], d...), fi, nil
}

// sessionStore hands out sessions and counts them; every session opened
// must be closed (Close calls done).
type sessionStore struct {
	*fakeStore
	mu     sync.Mutex
	opened int
	reads  map[*fakeSession]int
	wg     sync.WaitGroup
}

type fakeSession struct {
	s *sessionStore
}

func (st *sessionStore) OpenReadSession() ReadSession {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.opened++
	st.wg.Add(1)
	return &fakeSession{s: st}
}

func (fs *fakeSession) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	// A read after the search ended is refused uncounted, as the base
	// store refuses it.
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	fs.s.mu.Lock()
	fs.s.reads[fs]++
	fs.s.mu.Unlock()
	return fs.s.fakeStore.read(rel, maxBytes)
}

func (fs *fakeSession) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	d, fi, err := fs.Read(ctx, rel, maxBytes)
	return append(buf[:0], d...), fi, err
}

func (fs *fakeSession) Close() error {
	fs.s.wg.Done()
	return nil
}

// TestWalkSessions: with a store that offers sessions, every read goes
// through one, one per worker, and all are closed once Search has
// returned (the test would hang otherwise).
func TestWalkSessions(t *testing.T) {
	base := &fakeStore{docs: map[string]string{}}
	for i := range 40 {
		base.docs[fmt.Sprintf("%02d", i)] = "needle"
	}
	for _, maxResults := range []int{1000, 3} { // to the end, and stopping early
		st := &sessionStore{fakeStore: base, reads: map[*fakeSession]int{}}
		rep, err := Search(t.Context(), Request{Store: st, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
			Limits: Limits{MaxResults: maxResults, Deadline: time.Hour, Workers: 3}})
		if err != nil {
			t.Fatal(err)
		}
		st.wg.Wait()
		total := 0
		for _, n := range st.reads {
			total += n
		}
		if st.opened != 3 || total < rep.FilesScanned || base.readCount() != total {
			t.Errorf("max %d: %d sessions, %d session reads of %d, for %d files scanned", maxResults, st.opened, total, base.readCount(), rep.FilesScanned)
		}
		base.reads = nil
	}
}

// TestWalkStatAndUnread: with Stat, each file carries the listing's size
// and the listing stops at MaxFiles; a file Unread claims is handed over
// unread; denied and refused files are passed over with their reasons, at
// their listing indexes.
func TestWalkStatAndUnread(t *testing.T) {
	s := newMemStore(map[string]string{"a": "1", "b": "22", "c": "333", "d": "44", "e": "55555"})
	s.refuse["d"] = ports.ErrBinary
	var (
		mu  sync.Mutex
		got = map[int]File{}
	)
	w, err := Walk(t.Context(), WalkRequest{
		Store:        walkStore{s},
		Allow:        func(_ context.Context, p string) (bool, error) { return p != "b", nil },
		MaxFiles:     4,
		MaxFileBytes: 2,
		Workers:      2,
		Stat:         true,
		Unread:       func(f ports.FileInfo) bool { return f.Path == "a" },
	}, func() (func(File), func()) {
		return func(f File) {
			mu.Lock()
			defer mu.Unlock()
			f.Data = slices.Clone(f.Data)
			got[f.Index] = f
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.Listed != 4 || !w.Capped || w.Exact {
		t.Errorf("walked %+v", w)
	}
	var sk Skipped
	for _, f := range got {
		sk.Add(f.Skip)
	}
	if len(got) != 4 || !got[0].Unread || got[0].Data != nil || got[0].Info.Size != 1 || got[1].Skip != SkipDenied ||
		got[2].Skip != SkipTooLarge || got[2].Info.Size != 3 || got[3].Skip != SkipBinary || sk.Total() != 3 {
		t.Errorf("files %+v", got)
	}
	if n := s.reads.Load(); n != 2 {
		t.Errorf("%d reads, want 2 (c and d)", n)
	}
}

// TestWalkFailsClosed: an authorizer error ends the walk with no file
// read after it.
func TestWalkFailsClosed(t *testing.T) {
	s := newMemStore(map[string]string{"a": "1", "b": "2", "c": "3"})
	boom := errors.New("authorizer down")
	var (
		mu   sync.Mutex
		errs int
	)
	_, err := Walk(t.Context(), WalkRequest{
		Store:   s,
		Allow:   func(context.Context, string) (bool, error) { return false, boom },
		Workers: 1,
	}, func() (func(File), func()) {
		return func(f File) {
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(f.Err, boom) {
				errs++
			}
		}, nil
	})
	if err != nil || errs != 1 || s.reads.Load() != 0 {
		t.Errorf("walk err %v, %d files failed, %d reads", err, errs, s.reads.Load())
	}
}

// TestSearchBufferReuse: with a store reading into the worker's recycled
// buffer, each snippet is still its own file's text.
func TestSearchBufferReuse(t *testing.T) {
	base := &fakeStore{docs: map[string]string{}}
	for i := range 40 {
		p := fmt.Sprintf("%02d", i)
		base.docs[p] = strings.Repeat("x", i*97) + "\nneedle " + p + "\n"
	}
	rep, err := Search(t.Context(), Request{Store: bufferStore{base}, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{MaxResults: 1000, Deadline: time.Hour, Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Matches) != 40 {
		t.Fatalf("%d matches", len(rep.Matches))
	}
	for _, m := range rep.Matches {
		if m.Snippet != "needle "+m.Path || m.Line != 2 {
			t.Errorf("match %+v", m)
		}
	}
}
