package security

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveWinnow is winnowing written the slow, obvious way: the rightmost
// minimum of every window, each distinct value once.
func naiveWinnow(hashes []uint64, w int) []uint64 {
	if len(hashes) <= w {
		return []uint64{slices.Min(hashes)}
	}
	var out []uint64
	for start := 0; start+w <= len(hashes); start++ {
		best := start
		for i := start; i < start+w; i++ {
			if hashes[i] <= hashes[best] {
				best = i
			}
		}
		if !slices.Contains(out, hashes[best]) {
			out = append(out, hashes[best])
		}
	}
	return out
}

func words(r *rand.Rand, n int) string {
	vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(vocab[r.IntN(len(vocab))])
		b.WriteString(" ")
	}
	return b.String()
}

func TestWinnowMatchesTheNaiveDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		hashes := make([]uint64, 1+r.IntN(300))
		for i := range hashes {
			hashes[i] = uint64(r.IntN(40)) // small range: many ties
		}
		w := 1 + r.IntN(40)
		got, want := winnow(hashes, w), naiveWinnow(hashes, w)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("w=%d: winnow %v, naive %v", w, got, want)
		}
	}
}

func TestNormalizationFoldsWhatMustNotHideAMatch(t *testing.T) {
	plain := "The quarterly revenue forecast for the northern region is 4.2 million dollars and rising"
	for _, variant := range []string{
		strings.ToUpper(plain),
		strings.ReplaceAll(plain, " ", "\u200b \n\t"),
		strings.ReplaceAll(plain, " ", "_-"),
		"ＴＨＥ ｑｕａｒｔｅｒｌｙ revenue forecast for the northern region is 4.2 million dollars and rising",
	} {
		if string(normalizeForFingerprint(variant)) != string(normalizeForFingerprint(plain)) {
			t.Errorf("%q normalizes to %q", variant, string(normalizeForFingerprint(variant)))
		}
	}
}

// TestSharedRunsAtTheGuaranteeAreAlwaysFound plants a run of exactly
// MinFingerprintMatch normalized characters from a recorded text in
// unrelated text, at every offset class, and requires a shared hash; a run
// shorter than k never shares one.
func TestSharedRunsAtTheGuaranteeAreAlwaysFound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		recorded := words(r, 400)
		norm := string(normalizeForFingerprint(recorded))
		start := r.IntN(len(norm) - MinFingerprintMatch)
		run := norm[start : start+MinFingerprintMatch]
		query := "zzqq" + strings.Repeat("x", r.IntN(50)) + run + "qqzz"
		if !sharesAny(RecordFingerprints(recorded), q(QueryFingerprints(query))) {
			t.Fatalf("trial %d: a %d-character shared run was missed", trial, len(run))
		}
		short := norm[start : start+FingerprintK-1]
		if sharesAny(RecordFingerprints(recorded), q(QueryFingerprints("zzqq"+short+"qqzz"))) {
			t.Fatalf("trial %d: a run shorter than k matched", trial)
		}
	}
}

func TestRecordedFingerprintsAreBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	big := words(r, 60000) // ~350 KB
	fp := RecordFingerprints(big)
	if len(fp) == 0 || len(fp) > MaxRecordFingerprints {
		t.Fatalf("%d fingerprints for %d bytes", len(fp), len(big))
	}
	// A long passage copied out of the big text is still found.
	norm := string(normalizeForFingerprint(big))
	passage := norm[100000:101000]
	if !sharesAny(fp, q(QueryFingerprints(passage))) {
		t.Fatal("a 1000-character passage of a large recorded text was missed")
	}
	if got, ok := QueryFingerprints(strings.Repeat("ab", 10)); got != nil || !ok {
		t.Fatalf("text shorter than k has fingerprints %v", got)
	}
	if _, ok := QueryFingerprints(strings.Repeat("a", MaxQueryNormalized+1)); ok {
		t.Fatal("an oversized text was fingerprinted")
	}
}

func TestLinksInARecordedTextAreNotFingerprinted(t *testing.T) {
	link := "https://docs.example.com/guides/configuration/advanced-topics/connection-pooling-and-timeouts?version=latest"
	prose := "The connection pool keeps at most twenty idle connections per replica and closes the rest after five minutes."
	recorded := RecordFingerprints("See [the guide](" + link + ") for details.\n" + prose + "\nOr HTTPS://" + link[8:] + " too.")
	if sharesAny(recorded, q(QueryFingerprints(link))) {
		t.Fatal("following a link from the page matches the page")
	}
	if !sharesAny(recorded, q(QueryFingerprints("note: "+prose))) {
		t.Fatal("the page's prose does not match")
	}
	if got := stripURLs("a http://x.example/p b (https://y.example/q) c"); got != "a   b ( ) c" {
		t.Fatalf("stripURLs = %q", got)
	}
}

func TestTokenMarkIgnoresCase(t *testing.T) {
	if TokenMark("ABCDEF0123") != TokenMark("abcdef0123") || TokenMark("a") == TokenMark("b") {
		t.Fatal("token marks")
	}
}

// q drops QueryFingerprints' ok (the texts here are small).
func q(fp []uint64, _ bool) []uint64 { return fp }

func sharesAny(a, b []uint64) bool {
	set := map[uint64]bool{}
	for _, v := range a {
		set[v] = true
	}
	for _, v := range b {
		if set[v] {
			return true
		}
	}
	return false
}

func BenchmarkRecordFingerprints100KB(b *testing.B) {
	text := words(rand.New(rand.NewPCG(7, 8)), 17000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		RecordFingerprints(text)
	}
}
