package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

func docs(kv ...string) Source {
	var out []Doc
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Doc{Path: kv[i], Content: []byte(kv[i+1])})
	}
	return SliceSource(out)
}

func TestRunPositions(t *testing.T) {
	for _, regex := range []bool{false, true} {
		t.Run(fmt.Sprintf("regex=%v", regex), func(t *testing.T) {
			src := docs(
				"a.md", "first line\nsecond needle here\r\nthird\n\nneedle at start, needle again\nno",
				"b.txt", "été needle",
				"c.txt", "ends with needle",
				"d.txt", "",
			)
			res, err := Run(t.Context(), src, mustMatcher(t, "needle", regex, MatcherOptions{}), Limits{Deadline: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
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

func TestRunLongLines(t *testing.T) {
	// MaxLineBytes 20: only the first 20 bytes of each line are searched.
	content := strings.Join([]string{
		"0123456789012345needle",    // straddles the cut: not found
		"0123456789012needle",       // ends at byte 19: found
		strings.Repeat("x", 100000), // long, no match
		strings.Repeat("y", 30) + "needle",
		"needle",
	}, "\n")
	for _, regex := range []bool{false, true} {
		res, err := Run(t.Context(), docs("a", content), mustMatcher(t, "needle", regex, MatcherOptions{}), Limits{MaxLineBytes: 20, Deadline: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		for _, m := range res.Matches {
			lines = append(lines, m.Line)
		}
		if !slices.Equal(lines, []int{2, 5}) {
			t.Errorf("regex=%v: matching lines %v, want [2 5]", regex, lines)
		}
	}
}

func TestRunLimits(t *testing.T) {
	three := "x needle\ny needle\nz needle\n"
	m := mustMatcher(t, "needle", false, MatcherOptions{})
	ctx := t.Context()

	res, _ := Run(ctx, docs("a", three), m, Limits{MaxResults: 3, Deadline: time.Hour})
	if len(res.Matches) != 3 || res.ResultsTruncated {
		t.Errorf("exactly MaxResults matches is not truncated: %d %v", len(res.Matches), res.ResultsTruncated)
	}
	res, _ = Run(ctx, docs("a", three, "b", "needle"), m, Limits{MaxResults: 3, Deadline: time.Hour})
	if len(res.Matches) != 3 || !res.ResultsTruncated || res.FilesScanned != 2 {
		t.Errorf("one more match truncates: %+v", res)
	}

	res, _ = Run(ctx, docs("a", "needle", "b", "needle"), m, Limits{MaxFiles: 2, Deadline: time.Hour})
	if res.FilesScanned != 2 || res.FilesTruncated {
		t.Errorf("exactly MaxFiles files is not truncated: %+v", res)
	}
	res, _ = Run(ctx, docs("a", "needle", "b", "needle", "c", "needle"), m, Limits{MaxFiles: 2, Deadline: time.Hour})
	if res.FilesScanned != 2 || !res.FilesTruncated || len(res.Matches) != 2 {
		t.Errorf("a third file truncates: %+v", res)
	}

	// 27 bytes per copy of three; the budget ends inside the second
	// document, after its first line.
	res, _ = Run(ctx, docs("a", three, "b", three, "c", three), m, Limits{MaxTotalBytes: 27 + 12, Deadline: time.Hour})
	if !res.BytesTruncated || res.BytesScanned != 39 || res.FilesScanned != 2 || len(res.Matches) != 4 {
		t.Errorf("byte budget: %+v", res)
	}
	res, _ = Run(ctx, docs("a", three, "b", three), m, Limits{MaxTotalBytes: 27, Deadline: time.Hour})
	if !res.BytesTruncated || res.FilesScanned != 1 || len(res.Matches) != 3 {
		t.Errorf("a budget spent exactly stops before the next document: %+v", res)
	}
	res, _ = Run(ctx, docs("a", three), m, Limits{MaxTotalBytes: 27, Deadline: time.Hour})
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

// blockingSource never yields: it waits for its context to end.
type blockingSource struct{}

func (blockingSource) Next(ctx context.Context) (string, []byte, error) {
	<-ctx.Done()
	return "", nil, ctx.Err()
}

// onceThenBlock yields one document, then blocks like blockingSource.
type onceThenBlock struct{ done bool }

func (s *onceThenBlock) Next(ctx context.Context) (string, []byte, error) {
	if !s.done {
		s.done = true
		return "a", []byte("needle"), nil
	}
	<-ctx.Done()
	return "", nil, ctx.Err()
}

func TestRunDeadline(t *testing.T) {
	m := mustMatcher(t, "needle", false, MatcherOptions{})
	res, err := Run(t.Context(), &onceThenBlock{}, m, Limits{Deadline: time.Millisecond})
	if err != nil || !res.DeadlineExceeded || len(res.Matches) != 1 {
		t.Fatalf("the deadline ends the search with what was found: %+v %v", res, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Run(ctx, blockingSource{}, m, Limits{Deadline: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller gets its error: %v", err)
	}

	// The caller's own deadline is the caller's error, not a truncation.
	long := strings.Repeat("line without it\n", 100_000)
	rm := mustMatcher(t, "needle", true, MatcherOptions{})
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	res, err = Run(expired, docs("a", long), rm, Limits{Deadline: time.Hour})
	if !errors.Is(err, context.DeadlineExceeded) || res.DeadlineExceeded {
		t.Fatalf("an expired caller deadline is the caller's error: %+v %v", res, err)
	}
}

// yieldAfterExpiry yields its document only once the run's own context
// has ended, so the scan of that document starts past the deadline.
type yieldAfterExpiry struct {
	content []byte
	done    bool
}

func (s *yieldAfterExpiry) Next(ctx context.Context) (string, []byte, error) {
	if s.done {
		return "", nil, io.EOF
	}
	s.done = true
	<-ctx.Done()
	return "a", s.content, nil
}

// TestRunDeadlineInsideDocument: the deadline is checked inside a
// document (between lines, or line-aligned chunks for a literal), not only
// between documents: a document handed over after the deadline is not
// scanned to its end.
func TestRunDeadlineInsideDocument(t *testing.T) {
	content := []byte(strings.Repeat("needle\n", 1000))
	for _, regex := range []bool{false, true} {
		src := &yieldAfterExpiry{content: content}
		m := mustMatcher(t, "needle", regex, MatcherOptions{})
		res, err := Run(t.Context(), src, m, Limits{MaxResults: 10_000, Deadline: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !res.DeadlineExceeded || len(res.Matches) != 0 {
			t.Errorf("regex=%v: scanned past the deadline: %d matches, flag %v", regex, len(res.Matches), res.DeadlineExceeded)
		}
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
		lit, err := Run(t.Context(), docs("d", b.String()), mustMatcher(t, query, false, opts), lim)
		if err != nil {
			t.Fatal(err)
		}
		re, err := Run(t.Context(), docs("d", b.String()), mustMatcher(t, regexp.QuoteMeta(query), true, opts), lim)
		if err != nil {
			t.Fatal(err)
		}
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

func TestStoreSource(t *testing.T) {
	store := &fakeStore{docs: map[string]string{}, errs: map[string]error{}}
	var paths []string
	for i := range 50 {
		p := fmt.Sprintf("d/%02d.md", i)
		paths = append(paths, p)
		store.docs[p] = strings.Repeat(fmt.Sprintf("doc %02d ", i), i+1)
	}
	store.docs["d/07.md"] = strings.Repeat("x", 500) // too large for maxBytes below
	delete(store.docs, "d/08.md")                    // vanished since the listing
	store.errs["d/09.md"] = ports.ErrOutsideJail     // became a symlink
	deny := func(_ context.Context, p string) (bool, error) { return p != "d/10.md", nil }
	skippedWant := map[string]bool{"d/07.md": true, "d/08.md": true, "d/09.md": true, "d/10.md": true}

	for _, reader := range []Reader{store, bufferStore{store}} {
		for _, prefetch := range []int{1, 3, 0} {
			t.Run(fmt.Sprintf("%T/prefetch=%d", reader, prefetch), func(t *testing.T) {
				src := NewStoreSource(reader, paths, deny, StoreSourceOptions{MaxBytes: 400, Prefetch: prefetch})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var got []string
				for {
					p, content, err := src.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					// Content is valid until the next call: check it now.
					if string(content) != store.docs[p] {
						t.Fatalf("%s: wrong content %.20q", p, content)
					}
					got = append(got, p)
				}
				var want []string
				for _, p := range paths {
					if !skippedWant[p] {
						want = append(want, p)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("yielded\n%q\nwant\n%q", got, want)
				}
				if src.Skipped() != 4 {
					t.Errorf("skipped %d, want 4", src.Skipped())
				}
				if _, _, err := src.Next(ctx); err != io.EOF {
					t.Errorf("after the end: %v", err)
				}
			})
		}
	}
}

func TestStoreSourceErrorsAndDenial(t *testing.T) {
	store := &fakeStore{docs: map[string]string{"a": "needle", "b": "needle"}, errs: map[string]error{"b": errors.New("disk on fire")}}
	for _, prefetch := range []int{1, 4} {
		src := NewStoreSource(store, []string{"a", "b"}, func(context.Context, string) (bool, error) { return true, nil }, StoreSourceOptions{Prefetch: prefetch})
		res, err := Run(t.Context(), src, mustMatcher(t, "needle", false, MatcherOptions{}), Limits{Deadline: time.Hour})
		if err == nil || err.Error() != "disk on fire" || len(res.Matches) != 1 {
			t.Errorf("prefetch %d: a store failure ends the search: %+v %v", prefetch, res, err)
		}
		authzErr := errors.New("policy unavailable")
		src = NewStoreSource(store, []string{"a"}, func(context.Context, string) (bool, error) { return false, authzErr }, StoreSourceOptions{Prefetch: prefetch})
		if _, err := Run(t.Context(), src, mustMatcher(t, "needle", false, MatcherOptions{}), Limits{Deadline: time.Hour}); !errors.Is(err, authzErr) {
			t.Errorf("prefetch %d: an authorization failure ends the search: %v", prefetch, err)
		}
	}
	before := store.readCount()
	src := NewStoreSource(store, []string{"a"}, nil, StoreSourceOptions{})
	res, err := Run(t.Context(), src, mustMatcher(t, "needle", false, MatcherOptions{}), Limits{Deadline: time.Hour})
	if err != nil || res.FilesScanned != 0 || src.Skipped() != 1 || store.readCount() != before {
		t.Errorf("a nil Allow denies everything without reading: %+v %v", res, err)
	}
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
	fs.s.mu.Lock()
	fs.s.reads[fs]++
	fs.s.mu.Unlock()
	return fs.s.fakeStore.Read(ctx, rel, maxBytes)
}

func (fs *fakeSession) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	d, fi, err := fs.Read(ctx, rel, maxBytes)
	return append(buf[:0], d...), fi, err
}

func (fs *fakeSession) Close() error {
	fs.s.wg.Done()
	return nil
}

// TestStoreSourceSessions: with a store that offers sessions, every read
// goes through one, one per reading goroutine, and all are closed once Run
// has returned (the test would hang otherwise).
func TestStoreSourceSessions(t *testing.T) {
	base := &fakeStore{docs: map[string]string{}}
	var paths []string
	for i := range 40 {
		p := fmt.Sprintf("%02d", i)
		paths = append(paths, p)
		base.docs[p] = "needle " + p
	}
	for _, maxResults := range []int{1000, 3} { // to the end, and stopping early
		st := &sessionStore{fakeStore: base, reads: map[*fakeSession]int{}}
		src := NewStoreSource(st, paths, func(context.Context, string) (bool, error) { return true, nil }, StoreSourceOptions{Prefetch: 3})
		res, err := Run(t.Context(), src, mustMatcher(t, "needle", false, MatcherOptions{}), Limits{MaxResults: maxResults, Deadline: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		st.wg.Wait()
		total := 0
		for _, n := range st.reads {
			total += n
		}
		// Stopping early may cancel the readers before all of them opened a
		// session; a full scan always opens exactly Prefetch of them.
		if (maxResults == 1000 && st.opened != 3) || st.opened < 1 || st.opened > 3 || total < res.FilesScanned {
			t.Errorf("max %d: %d sessions, %d session reads for %d files scanned", maxResults, st.opened, total, res.FilesScanned)
		}
	}
}

func TestStoreSourceClose(t *testing.T) {
	store := &fakeStore{docs: map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}}
	allow := func(context.Context, string) (bool, error) { return true, nil }
	for _, prefetch := range []int{1, 2} {
		src := NewStoreSource(store, []string{"a", "b", "c", "d"}, allow, StoreSourceOptions{Prefetch: prefetch})
		if p, _, err := src.Next(t.Context()); err != nil || p != "a" {
			t.Fatal(p, err)
		}
		src.Close()
		for range 3 {
			if p, _, err := src.Next(t.Context()); !errors.Is(err, errSourceClosed) {
				t.Fatalf("prefetch %d: Next after Close = %q, %v", prefetch, p, err)
			}
		}
	}
}

// TestStoreSourceStopsEarly: when Run stops at MaxResults, read-ahead
// stays bounded: at most 2*prefetch+1 documents past the last one used.
func TestStoreSourceStopsEarly(t *testing.T) {
	store := &fakeStore{docs: map[string]string{}}
	var paths []string
	for i := range 1000 {
		p := fmt.Sprintf("%04d", i)
		paths = append(paths, p)
		store.docs[p] = "needle"
	}
	const prefetch = 4
	src := NewStoreSource(store, paths, func(context.Context, string) (bool, error) { return true, nil }, StoreSourceOptions{Prefetch: prefetch})
	res, err := Run(t.Context(), src, mustMatcher(t, "needle", false, MatcherOptions{}), Limits{MaxResults: 10, Deadline: time.Hour})
	if err != nil || !res.ResultsTruncated {
		t.Fatal(res, err)
	}
	if n := store.readCount(); n > res.FilesScanned+2*prefetch+1 {
		t.Errorf("read %d documents to scan %d", n, res.FilesScanned)
	}
}

// corpusDocs generates n documents of about size bytes of word salad, the
// term appearing in every hundredth one.
func corpusDocs(n, size int, term string) []Doc {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the of and to in is for on with as by at from that this it be are was document corpus search index server client request response token scope policy audit guard")
	out := make([]Doc, n)
	for i := range out {
		var b bytes.Buffer
		for b.Len() < size {
			for j := 0; j < 12; j++ {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		if i%100 == 0 {
			b.WriteString("a line with " + term + " in it\n")
		}
		out[i] = Doc{Path: fmt.Sprintf("d/%05d.md", i), Content: b.Bytes()}
	}
	return out
}

func benchmarkRun(b *testing.B, query string, regex, fold bool) {
	corpus := corpusDocs(1000, 10_000, "zebracorn")
	var total int64
	for _, d := range corpus {
		total += int64(len(d.Content))
	}
	m := mustMatcher(b, query, regex, MatcherOptions{CaseInsensitive: fold})
	lim := Limits{MaxFiles: len(corpus), MaxResults: 1 << 20, MaxTotalBytes: total, Deadline: time.Minute}
	b.SetBytes(total)
	for b.Loop() {
		res, err := Run(b.Context(), SliceSource(corpus), m, lim)
		if err != nil || len(res.Matches) != 10 {
			b.Fatal(len(res.Matches), err)
		}
	}
}

func BenchmarkRunLiteral(b *testing.B)     { benchmarkRun(b, "zebracorn", false, false) }
func BenchmarkRunLiteralFold(b *testing.B) { benchmarkRun(b, "ZEBRACORN", false, true) }
func BenchmarkRunRegex(b *testing.B)       { benchmarkRun(b, `zebra\w+`, true, false) }
