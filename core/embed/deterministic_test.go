package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

func embedOne(t *testing.T, e ports.Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(v) != 1 || len(v[0]) != e.Dimensions() {
		t.Fatalf("got %d vectors of width %d", len(v), len(v[0]))
	}
	return v[0]
}

// digest is the SHA-256 of the vector's float32 bit patterns, little
// endian: a golden that pins every component exactly.
func digest(v []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, f := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(f))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// The goldens fix the algorithm: a change to tokenisation, hashing,
// weighting or normalisation changes a stored vector's meaning and must be
// deliberate (a re-index is then required).
func TestDeterministicGolden(t *testing.T) {
	small := []struct {
		text string
		want []float32
	}{
		{"", []float32{0, 0, 0, 0, 0, -1, 0, 0}},
		{"!!!", []float32{0, 0, -1, 0, 0, 0, 0, 0}},
		{"Refunds take five business days.", []float32{-0.36115757, 0, -0.24077171, -0.120385855, -0.60192925, 0.120385855, -0.24077171, 0.60192925}},
		{"héllo, Wörld! 42", []float32{-0.36514837, 0.36514837, 0.18257418, 0.36514837, 0.73029673, 0, 0, -0.18257418}},
	}
	e8 := NewDeterministic(8)
	for _, tc := range small {
		got := embedOne(t, e8, tc.text)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(tc.want[i]) {
				t.Errorf("%q: got %v, want %v", tc.text, got, tc.want)
				break
			}
		}
	}

	wide := map[string]string{
		"":                                 "f455eb36c3f496a393eba525ead8ecc04da78bfd2151d33027ec41db8d3e5ecd",
		"!!!":                              "994cc81b300089f3e2a84cf730189307002d5da3c0fb5e1edeebc153e48749e9",
		"Refunds take five business days.": "61c3e04bd3a712a4caf6d8ba6d259655a979fbdc2fe62cdc03ae06b1e3c917ca",
		"héllo, Wörld! 42":                 "124c303fb1b3524ff67571cc7ed4915b07de74d8d54b73b30849f92a8161a7c7",
	}
	e := NewDeterministic(1536)
	for text, want := range wide {
		if got := digest(embedOne(t, e, text)); got != want {
			t.Errorf("%q: digest %s, want %s", text, got, want)
		}
	}
}

// The inlined hash is the standard 64-bit FNV-1a over kind byte + bytes.
func TestFNVMatchesStandardLibrary(t *testing.T) {
	for _, s := range []string{"", "refunds", "héllo", strings.Repeat("x", 1000)} {
		h := fnv.New64a()
		h.Write([]byte{kindWord})
		h.Write([]byte(s))
		if got := fnv1a(kindWord, []byte(s)); got != h.Sum64() {
			t.Errorf("%q: %x, want %x", s, got, h.Sum64())
		}
	}
	h := fnv.New64a()
	h.Write([]byte{kindTrigram})
	h.Write([]byte(" hé"))
	if got := fnv1a(kindTrigram, []byte(" hé")); got != h.Sum64() {
		t.Errorf("trigram: %x, want %x", got, h.Sum64())
	}
}

func TestDeterministicProperties(t *testing.T) {
	e := NewDeterministic(256)
	if e.Semantic() {
		t.Fatal("the deterministic embedder must not claim to be semantic")
	}
	if e.Dimensions() != 256 {
		t.Fatalf("Dimensions %d", e.Dimensions())
	}
	texts := []string{
		"How long do refunds take?",
		"Refunds take five business days to process.",
		"The cafeteria serves lunch from noon until two.",
		"",
		"   ...   ",
		"日本語のテキスト",
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewDeterministic(256).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 256 {
			t.Fatalf("text %d: width %d", i, len(v))
		}
		var sq float64
		for j, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				t.Fatalf("text %d: component %d not finite", i, j)
			}
			sq += float64(f) * float64(f)
			if math.Float32bits(f) != math.Float32bits(again[i][j]) {
				t.Fatalf("text %d: not deterministic at %d", i, j)
			}
		}
		if math.Abs(sq-1) > 1e-5 {
			t.Errorf("text %d: squared norm %v, want 1", i, sq)
		}
	}
	related := cosine(vs[0], vs[1])
	unrelated := cosine(vs[0], vs[2])
	if related <= unrelated {
		t.Errorf("shared words should score higher: related %.3f, unrelated %.3f", related, unrelated)
	}
	if related <= 0.2 {
		t.Errorf("related cosine %.3f is implausibly low", related)
	}
	// Case and punctuation do not matter; word order barely does.
	a := embedOne(t, e, "Refunds take five days")
	b := embedOne(t, e, "refunds TAKE five days!!")
	if digest(a) != digest(b) {
		t.Error("case and punctuation changed the vector")
	}
	// Distinct punctuation-only texts stay distinct.
	if digest(embedOne(t, e, "!!!")) == digest(embedOne(t, e, "???")) {
		t.Error("punctuation-only texts collided")
	}
}

// In very narrow vectors the signed features of a short word can cancel
// out; the result must still be a unit vector, never zeros or NaN.
func TestDeterministicNarrowVectorsStayUnit(t *testing.T) {
	var texts []string
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			texts = append(texts, string([]rune{a, b}))
		}
	}
	for dims := 1; dims <= 3; dims++ {
		vs, err := NewDeterministic(dims).Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			var sq float64
			for _, f := range v {
				sq += float64(f) * float64(f)
			}
			if math.Abs(sq-1) > 1e-6 {
				t.Fatalf("dims %d, %q: squared norm %v", dims, texts[i], sq)
			}
		}
	}
}

func TestDeterministicBounds(t *testing.T) {
	ctx := context.Background()
	for _, dims := range []int{0, -1, MaxDimensions + 1} {
		if _, err := NewDeterministic(dims).Embed(ctx, []string{"x"}); !errors.Is(err, ErrDimensions) {
			t.Errorf("dims %d: %v", dims, err)
		}
	}
	if v, err := NewDeterministic(MaxDimensions).Embed(ctx, []string{"x"}); err != nil || len(v[0]) != MaxDimensions {
		t.Errorf("max dims: %v", err)
	}

	e := NewDeterministic(16).WithMaxTexts(3)
	if _, err := e.Embed(ctx, make([]string, 4)); !errors.Is(err, ErrTooManyTexts) {
		t.Errorf("4 texts over a cap of 3: %v", err)
	}
	if v, err := e.Embed(ctx, make([]string, 3)); err != nil || len(v) != 3 {
		t.Errorf("3 texts: %v", err)
	}
	if NewDeterministic(16).WithMaxTexts(0).maxTexts != DefaultMaxTexts {
		t.Error("WithMaxTexts(0) should keep the default")
	}
	if _, err := NewDeterministic(16).Embed(ctx, make([]string, DefaultMaxTexts+1)); !errors.Is(err, ErrTooManyTexts) {
		t.Errorf("default cap: %v", err)
	}

	canary := "CANARY-" + strings.Repeat("a", MaxTextBytes)
	_, err := e.Embed(ctx, []string{"ok", canary})
	if !errors.Is(err, ErrTextTooLong) {
		t.Fatalf("oversized text: %v", err)
	}
	if strings.Contains(err.Error(), "CANARY") {
		t.Error("error echoes the text")
	}
	if _, err := e.Embed(ctx, []string{strings.Repeat("a b ", MaxTextBytes/4)}); err != nil {
		t.Errorf("text at the limit: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Embed(cancelled, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if v, err := e.Embed(ctx, nil); err != nil || len(v) != 0 {
		t.Errorf("no texts: %v %v", v, err)
	}
}

func BenchmarkDeterministic(b *testing.B) {
	e := NewDeterministic(1536)
	text := strings.Repeat("Refunds take five business days to process after approval. ", 25) // ~1.5 KB, one chunk
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = text
	}
	b.SetBytes(int64(len(text) * len(texts)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
}
