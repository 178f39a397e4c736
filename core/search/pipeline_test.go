package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// memStore is an in-memory Store: files in lexical order, a read
// refusal per path when set, and an optional delay per read so workers
// finish out of order.
type memStore struct {
	paths   []string
	files   map[string][]byte
	refuse  map[string]error
	delay   func(path string) time.Duration
	maxRead int64
	reads   atomic.Int64
}

func newMemStore(kv map[string]string) *memStore {
	s := &memStore{files: map[string][]byte{}, refuse: map[string]error{}}
	for p, c := range kv {
		s.paths = append(s.paths, p)
		s.files[p] = []byte(c)
	}
	slices.Sort(s.paths)
	return s
}

func (s *memStore) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	s.reads.Add(1)
	if s.delay != nil {
		time.Sleep(s.delay(rel))
	}
	if err := s.refuse[rel]; err != nil {
		return nil, ports.FileInfo{}, err
	}
	data, ok := s.files[rel]
	if !ok {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	return data, ports.FileInfo{Path: rel, Size: int64(len(data))}, nil
}

func (s *memStore) List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
	var out []ports.FileInfo
	for _, p := range s.paths {
		if prefix != "" && !strings.HasPrefix(p, prefix) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, ports.FileInfo{Path: p, Size: int64(len(s.files[p]))})
	}
	return out, false, nil
}

// walkStore adds the streaming Walker to memStore.
type walkStore struct{ *memStore }

func (w walkStore) WalkPaths(ctx context.Context, prefix string, visit func(string) bool) error {
	for _, p := range w.paths {
		if prefix != "" && !strings.HasPrefix(p, prefix) {
			continue
		}
		if visit(p) {
			return nil
		}
	}
	return nil
}

func allowAll(context.Context, string) (bool, error) { return true, nil }

// lateWalkStore is a walkStore whose WalkPaths, having handed over every
// path, returns only once the search has ended (its context is done): the
// listing goroutine descheduled between its last path and its return,
// which a loaded machine does at random.
type lateWalkStore struct{ walkStore }

func (w lateWalkStore) WalkPaths(ctx context.Context, prefix string, visit func(string) bool) error {
	err := w.walkStore.WalkPaths(ctx, prefix, visit)
	<-ctx.Done()
	return err
}

// seqSearch is the reference: the files one at a time, in path order,
// each matched to its end with the package's matcher, the bounds applied
// as they are met (the files cap before a file, the byte budget cutting
// the file that crosses it, the result cap at the match past it).
func seqSearch(t *testing.T, s *memStore, m *Matcher, lim Limits) Result {
	t.Helper()
	lim = lim.withDefaults()
	var res Result
	res.Matches = []Match{}
	for _, p := range s.paths {
		if res.FilesScanned >= lim.MaxFiles {
			res.FilesTruncated = true
			break
		}
		data := s.files[p]
		budget := lim.MaxTotalBytes - res.BytesScanned
		if int64(len(data)) > budget {
			res.BytesTruncated = true
			if budget <= 0 {
				break
			}
			data = data[:budget]
		}
		res.FilesScanned++
		res.BytesScanned += int64(len(data))
		r := runner{m: m, lim: Limits{MaxResults: 1 << 30, MaxLineBytes: lim.MaxLineBytes, SnippetMaxChars: lim.SnippetMaxChars}}
		if err := r.scanLines(t.Context(), p, data); err != nil {
			t.Fatal(err)
		}
		for _, h := range r.hits {
			if len(res.Matches) == lim.MaxResults {
				res.ResultsTruncated = true
				return res
			}
			res.Matches = append(res.Matches, h.Match)
		}
		if res.BytesTruncated {
			break
		}
	}
	return res
}

// TestSearchMatchesSequential checks that the parallel pipeline, with
// reads finishing in random order, gives exactly what a one-file-at-a-
// time search gives, under every bound: results, files, bytes.
func TestSearchMatchesSequential(t *testing.T) {
	kv := map[string]string{}
	for i := range 60 {
		var b strings.Builder
		for j := range i % 7 {
			fmt.Fprintf(&b, "line %d of %d needle\nfiller\n", j, i)
		}
		kv[fmt.Sprintf("d%02d/f%02d.txt", i%5, i)] = b.String()
	}
	base := newMemStore(kv)
	base.delay = func(p string) time.Duration { return time.Duration(len(p)*7%5) * 100 * time.Microsecond }
	m := mustMatcher(t, "needle", false, MatcherOptions{})
	for _, lim := range []Limits{
		{MaxResults: 1000, MaxTotalBytes: 1 << 30},
		{MaxResults: 7},
		{MaxResults: 1000, MaxFiles: 13},
		{MaxResults: 1000, MaxTotalBytes: 900},
		{MaxResults: 3, MaxFiles: 2},
	} {
		lim.Deadline, lim.Workers = time.Minute, 4
		for _, store := range []Store{base, walkStore{base}} {
			rep, err := Search(t.Context(), Request{Store: store, Allow: allowAll, Matcher: m, Limits: lim})
			if err != nil {
				t.Fatal(err)
			}
			want := seqSearch(t, base, m, lim)
			if !slices.Equal(rep.Matches, want.Matches) {
				t.Errorf("%+v: matches differ:\n got %v\nwant %v", lim, rep.Matches, want.Matches)
			}
			if rep.ResultsTruncated != want.ResultsTruncated || rep.FilesTruncated != want.FilesTruncated ||
				rep.BytesTruncated != want.BytesTruncated || rep.FilesScanned != want.FilesScanned || rep.BytesScanned != want.BytesScanned {
				t.Errorf("%+v: report %+v, sequential %+v", lim, rep.Result, want)
			}
			// A search that ran to its end listed everything. One a bound
			// stopped may have stopped the listing too, before or after
			// its last path (the race TestSearchCountIsExactOnceListed
			// pins down): its count is then exact only if it is all 60.
			switch {
			case !rep.ResultsTruncated && !rep.BytesTruncated && !rep.FilesTruncated:
				if rep.FilesListed != 60 || !rep.ListedExact {
					t.Errorf("%+v: listed %d (exact %v), want 60", lim, rep.FilesListed, rep.ListedExact)
				}
			case rep.ListedExact && rep.FilesListed != 60, rep.FilesListed < rep.FilesScanned:
				t.Errorf("%+v: listed %d (exact %v) for %d scanned", lim, rep.FilesListed, rep.ListedExact, rep.FilesScanned)
			}
		}
	}
}

func TestSearchSkipsAndSanitizes(t *testing.T) {
	s := newMemStore(map[string]string{
		"a.txt":         "needle one\r\n",
		"b\x1b[31m.txt": "x needle \x1b[2J y\u202e z\rw needle\n",
		"big.txt":       strings.Repeat("needle ", 100),
		"bin.txt":       "needle\x00",
		"denied.txt":    "needle",
		"gone.txt":      "needle",
		"secret.txt":    "key needle AKIAIOSFODNN7EXAMPLE\n",
	})
	s.refuse["bin.txt"] = ports.ErrBinary
	s.refuse["gone.txt"] = ports.ErrNotRegular
	allow := func(_ context.Context, p string) (bool, error) { return p != "denied.txt", nil }
	redact := func(t string) string { return strings.ReplaceAll(t, "AKIAIOSFODNN7EXAMPLE", "[REDACTED]") }
	rep, err := Search(t.Context(), Request{Store: s, Allow: allow, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{MaxFileBytes: 100, Deadline: time.Minute}, Redact: redact})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rep.Matches {
		got = append(got, fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Snippet))
	}
	want := []string{
		"a.txt:1:needle one",
		"b.txt:1:x needle  y z w needle", // the lone CR inside the line becomes a space
		"secret.txt:1:key needle [REDACTED]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if sk := rep.Skipped; sk != (Skipped{Denied: 1, TooLarge: 1, Binary: 1, Gone: 1}) {
		t.Errorf("skipped %+v", sk)
	}
	if !rep.Complete() || rep.FilesScanned != 3 || rep.FilesListed != 7 {
		t.Errorf("report %+v", rep)
	}
	sum := rep.Summary("files", RepoVars(false))
	for _, part := range []string{"3 matches. Searched all 3 files.",
		"Passed over 4 files: 1 larger than the per-file cap (ARROWHEAD_REPO_MAX_FILE_BYTES=100 bytes), 1 not text, 1 not authorized for you, 1 changed, gone or unreadable when read."} {
		if !strings.Contains(sum, part) {
			t.Errorf("summary %q lacks %q", sum, part)
		}
	}
}

// TestSearchSummaries checks the text a caller reads for each way a
// search ends: "No matches." only after the whole admitted set.
func TestSearchSummaries(t *testing.T) {
	kv := map[string]string{}
	for i := range 30 {
		kv[fmt.Sprintf("f%02d.go", i)] = strings.Repeat("needle\n", i%3)
	}
	s := walkStore{newMemStore(kv)}
	run := func(q string, lim Limits) (Report, string) {
		lim.Workers = 2
		if lim.Deadline == 0 {
			lim.Deadline = time.Minute
		}
		rep, err := Search(t.Context(), Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, q, false, MatcherOptions{}), Limits: lim})
		if err != nil {
			t.Fatal(err)
		}
		return rep, rep.Summary("files", RepoVars(false))
	}
	cases := []struct {
		name  string
		q     string
		lim   Limits
		trunc []string
		text  string
	}{
		{"complete, none", "absent", Limits{}, []string{}, "No matches. Searched all 30 files."},
		{"complete, some", "needle", Limits{MaxResults: 100}, []string{}, "30 matches. Searched all 30 files."},
		{"result cap", "needle", Limits{MaxResults: 4}, []string{"results"},
			"Showing the first 4 matches in path order; more exist. The result cap (ARROWHEAD_SEARCH_MAX_RESULTS=4) stopped the search after 6 of * files. Narrow the search with path_prefix, or ask the operator to raise ARROWHEAD_SEARCH_MAX_RESULTS."},
		{"file cap, none", "absent", Limits{MaxFiles: 16}, []string{"files"},
			"No matches in the part searched, but the search did not finish: the file cap (ARROWHEAD_REPO_SEARCH_MAX_FILES=16) stopped it after 16 of 30 files, in path order. Narrow the search with path_prefix, or ask the operator to raise ARROWHEAD_REPO_SEARCH_MAX_FILES."},
		{"byte budget", "needle", Limits{MaxResults: 100, MaxTotalBytes: 20}, []string{"bytes"},
			"3 matches in the part searched; the search did not finish: the byte budget (ARROWHEAD_REPO_SEARCH_MAX_TOTAL_BYTES=20) stopped it after 3 of 30 files, in path order. Narrow the search with path_prefix, or ask the operator to raise ARROWHEAD_REPO_SEARCH_MAX_TOTAL_BYTES."},
	}
	// A prefix under which nothing lies says so, not "searched all 0".
	rep, err := Search(t.Context(), Request{Store: s, Allow: allowAll, Prefix: "f9", Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{Workers: 2, Deadline: time.Minute}})
	if want := "No matches: no file of a type this server serves lies under the prefix. path_prefix matches whole path components " +
		"from the root (\"src\" covers \"src/a.py\", not \"lib/src/a.py\" or \"srcx/a.py\")."; err != nil || rep.Summary("files", RepoVars(false)) != want {
		t.Errorf("empty prefix: %v %q", err, rep.Summary("files", RepoVars(false)))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, text := run(tc.q, tc.lim)
			if got := rep.Truncated(); !slices.Equal(got, tc.trunc) {
				t.Errorf("truncated %v, want %v", got, tc.trunc)
			}
			// How much of the listing the walk counted before the result
			// cap stopped it depends on timing.
			before, after, wild := strings.Cut(tc.text, "*")
			if wild && (!strings.HasPrefix(text, before) || !strings.HasSuffix(text, after)) || !wild && text != tc.text {
				t.Errorf("summary\n got %q\nwant %q", text, tc.text)
			}
		})
	}
}

// TestSearchCountIsExactOnceListed: a bound that ends the search after
// the listing went through every path does not make the count "at least":
// the walk finished, so the answer says "of N" whatever the timing.
func TestSearchCountIsExactOnceListed(t *testing.T) {
	kv := map[string]string{}
	for i := range batchFiles {
		kv[fmt.Sprintf("%02d.md", i)] = "the deadline is friday\n"
	}
	rep, err := Search(t.Context(), Request{Store: lateWalkStore{walkStore{newMemStore(kv)}}, Allow: allowAll,
		Matcher: mustMatcher(t, "deadline", false, MatcherOptions{}),
		Limits:  Limits{MaxTotalBytes: 40, Deadline: time.Minute, Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.BytesTruncated || rep.DeadlineExceeded || rep.FilesListed != batchFiles || !rep.ListedExact {
		t.Fatalf("report %+v", rep)
	}
	want := fmt.Sprintf("the byte budget (ARROWHEAD_SEARCH_MAX_TOTAL_BYTES=40) stopped it after 2 of %d documents,", batchFiles)
	if text := rep.Summary("documents", DocVars); !strings.Contains(text, want) {
		t.Errorf("summary %q, want %q", text, want)
	}
}

// slowStore blocks every read after the first until its context ends.
type slowStore struct{ *memStore }

func (s slowStore) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	if rel != "a.txt" {
		<-ctx.Done()
		return nil, ports.FileInfo{}, ctx.Err()
	}
	return s.memStore.Read(ctx, rel, maxBytes)
}

func TestSearchDeadline(t *testing.T) {
	s := slowStore{newMemStore(map[string]string{"a.txt": "needle", "b.txt": "needle", "c.txt": "needle"})}
	rep, err := Search(t.Context(), Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{Deadline: 20 * time.Millisecond, Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.DeadlineExceeded || rep.FilesScanned != 1 || len(rep.Matches) != 1 || rep.Complete() {
		t.Fatalf("report %+v", rep)
	}
	text := rep.Summary("files", RepoVars(false))
	if !strings.Contains(text, "the time limit (ARROWHEAD_REPO_SEARCH_TIMEOUT_MS=20) stopped it after 1 of at least 3 files") {
		t.Errorf("summary %q", text)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Search(ctx, Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{Deadline: time.Minute}}); err == nil {
		t.Error("a cancelled caller gets its error")
	}
}

// TestSearchStopsEarly checks that the result cap stops the reads: a
// search for a common word over many files reads few of them.
func TestSearchStopsEarly(t *testing.T) {
	kv := map[string]string{}
	for i := range 5000 {
		kv[fmt.Sprintf("f%05d.txt", i)] = "needle\n"
	}
	s := newMemStore(kv)
	rep, err := Search(t.Context(), Request{Store: walkStore{s}, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{MaxResults: 50, MaxFiles: 10000, Deadline: time.Minute, Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Matches) != 50 || !rep.ResultsTruncated || rep.Matches[49].Path != "f00049.txt" {
		t.Fatalf("report %+v", rep.Result)
	}
	if n := s.reads.Load(); n > 1000 {
		t.Errorf("%d files read for 51 hits", n)
	}
}

// TestSearchReadsBoundedAheadOfAStall: a worker stalled on the first
// file does not let the others read on to the file cap; reads stay within
// the window of batches the merger has not yet taken.
func TestSearchReadsBoundedAheadOfAStall(t *testing.T) {
	kv := map[string]string{}
	for i := range 5000 {
		kv[fmt.Sprintf("f%05d.txt", i)] = "needle\n"
	}
	s := newMemStore(kv)
	s.delay = func(p string) time.Duration {
		if p == "f00000.txt" {
			return 200 * time.Millisecond
		}
		return 0
	}
	const workers = 2
	rep, err := Search(t.Context(), Request{Store: walkStore{s}, Allow: allowAll, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}),
		Limits: Limits{MaxResults: 50, MaxFiles: 10000, Deadline: time.Minute, Workers: workers}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Matches) != 50 || rep.Matches[0].Path != "f00000.txt" {
		t.Fatalf("report %+v", rep.Result)
	}
	// The window, the batch each worker holds and the one the walk holds.
	if n, most := s.reads.Load(), int64((4*workers+workers+1)*batchFiles); n > most {
		t.Errorf("%d files read behind a stalled first file, want at most %d", n, most)
	}
}

func TestSanitizeSnippet(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"a\rb":              "a b",
		"a\r\nb\nc":         "a b c",
		"x\x1b[31my\u200bz": "xyz",
	} {
		if got := SanitizeSnippet(in); got != want {
			t.Errorf("SanitizeSnippet(%q) = %q, want %q", in, got, want)
		}
	}
	if bytes.ContainsAny([]byte(SanitizeSnippet("\u2028\u2029")), "\r\n") {
		t.Error("line separators survive")
	}
}

// TestSearchFailsClosedOnAuthorizerError: a failing authorizer ends the
// search with its error rather than passing files over.
func TestSearchFailsClosedOnAuthorizerError(t *testing.T) {
	s := newMemStore(map[string]string{"a.txt": "needle", "b.txt": "needle"})
	boom := errors.New("policy backend down")
	allow := func(_ context.Context, p string) (bool, error) {
		if p == "b.txt" {
			return false, boom
		}
		return true, nil
	}
	_, err := Search(t.Context(), Request{Store: s, Allow: allow, Matcher: mustMatcher(t, "needle", false, MatcherOptions{}), Limits: Limits{Deadline: time.Minute}})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// TestRedactedSearchSaysSo is the gap a grep oracle shows: a file holding
// a key and a comment naming its prefix has two lines grep finds for the
// prefix; a search that redacts before matching finds one, and its summary
// must say that text inside a secret is never found. The sentence is the
// same for a query that follows the secret and one that does not (or a
// caller could guess the key a character at a time), and a search that
// redacts nothing makes no claim.
func TestRedactedSearchSaysSo(t *testing.T) {
	s := newMemStore(map[string]string{
		"key.go": "// AKIA keys are AWS access keys\nconst key = \"AKIAIOSFODNN7EXAMPLE\"\n",
	})
	redact := func(t string) string { return strings.ReplaceAll(t, "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws:1]") }
	run := func(q string, redact func(string) string) (Report, string) {
		rep, err := Search(t.Context(), Request{Store: s, Allow: allowAll, Matcher: mustMatcher(t, q, false, MatcherOptions{}),
			Limits: Limits{Deadline: time.Minute}, Redact: redact})
		if err != nil {
			t.Fatal(err)
		}
		return rep, rep.Summary("files", RepoVars(false))
	}
	raw, rawText := run("AKIA", nil)
	if len(raw.Matches) != 2 || raw.SecretsRedacted || strings.Contains(rawText, SecretsNote) {
		t.Fatalf("unredacted: %d matches, %q", len(raw.Matches), rawText)
	}
	rep, text := run("AKIA", redact)
	if len(rep.Matches) != 1 || rep.Matches[0].Line != 1 {
		t.Fatalf("redacted: matches %+v", rep.Matches)
	}
	if !rep.SecretsRedacted || text != "1 match. Searched the one file. "+SecretsNote {
		t.Errorf("redacted: %q", text)
	}
	// A right guess at the key and a wrong one read alike.
	right, rightText := run("AKIAIOSF", redact)
	wrong, wrongText := run("AKIAXXXX", redact)
	if rightText != wrongText || right.SecretsRedacted != wrong.SecretsRedacted || len(right.Matches) != 0 {
		t.Errorf("a guess shows: %q vs %q", rightText, wrongText)
	}
	if want := "No matches. Searched the one file. " + SecretsNote; rightText != want {
		t.Errorf("got %q, want %q", rightText, want)
	}
}
