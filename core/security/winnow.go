package security

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text fingerprints for the exfiltration guard, by winnowing (Schleimer,
// Wilkerson and Aiken, "Winnowing: local algorithms for document
// fingerprinting", SIGMOD 2003).
//
// Text is normalized first: NFKC (so fullwidth and other compatibility
// forms fold to their plain letters), then only letters and digits are kept,
// lower-cased. Spacing, punctuation, markup and zero-width or format
// characters therefore never hide a match, and a page's text still matches
// after it has been re-wrapped, re-punctuated or percent-decoded.
//
// Every run of FingerprintK normalized characters (a k-gram) is hashed, and
// of every FingerprintWindow consecutive k-gram hashes the smallest is
// kept. Two texts that share a run of at least
// FingerprintK+FingerprintWindow-1 (MinFingerprintMatch, 64) normalized
// characters always share a kept hash; a shared run shorter than
// FingerprintK (32) never does; runs in between may.
const (
	// FingerprintK is the k-gram length, in normalized characters.
	FingerprintK = 32
	// FingerprintWindow is the winnowing window, in k-grams.
	FingerprintWindow = 33
	// MinFingerprintMatch is the shared run, in normalized characters,
	// that is always detected (for recorded texts short enough to keep the
	// base window, see RecordFingerprints).
	MinFingerprintMatch = FingerprintK + FingerprintWindow - 1
	// MaxRecordFingerprints bounds the hashes kept for one recorded text.
	MaxRecordFingerprints = 1024
	// MaxQueryNormalized bounds the normalized characters of one checked
	// text (about 15,000 hashes at the base window).
	MaxQueryNormalized = 1 << 18
)

// RecordFingerprints returns the winnowed hashes of a text the server
// returned, at most MaxRecordFingerprints of them. A text of more than about
// 16 KiB of normalized characters is winnowed with a window widened in
// proportion (2 x k-grams / MaxRecordFingerprints), so the count stays
// bounded; the run always detected in it grows to FingerprintK + window - 1
// characters (about 190 for 100 KB of text). Hashes beyond the bound, if the
// window still yields too many, are dropped largest first, so the same text
// always keeps the same ones.
//
// URLs (http:// and https:// up to the next space, quote, bracket or angle
// bracket) are left out of a recorded text: following a link found in a
// fetched page is browsing, not sending the page back out.
func RecordFingerprints(text string) []uint64 {
	return fingerprints(stripURLs(text), MaxRecordFingerprints)
}

// stripURLs replaces every http(s) URL in text with a space.
func stripURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	var b strings.Builder
	for {
		i := indexURL(text)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		b.WriteByte(' ')
		text = text[i:]
		end := strings.IndexAny(text, " \t\r\n\"'<>()[]{}`")
		if end < 0 {
			return b.String()
		}
		text = text[end:]
	}
}

// indexURL is the index of the first "http://" or "https://" in text, in
// any case, or -1.
func indexURL(text string) int {
	for i := 0; i+7 <= len(text); i++ {
		if text[i] != 'h' && text[i] != 'H' {
			continue
		}
		rest := strings.ToLower(text[i:min(i+8, len(text))])
		if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
			return i
		}
	}
	return -1
}

// QueryFingerprints returns the hashes to look up for a text about to leave
// the server, winnowed with the base window: a window no wider than any
// recorded text's guarantees that a run a recorded text would detect
// selects the same hash here. ok is false for a text of more than
// MaxQueryNormalized normalized characters, which is not fingerprinted
// (the caller decides; the guard treats it as unchecked).
func QueryFingerprints(text string) (_ []uint64, ok bool) {
	rs := normalizeForFingerprint(text)
	if len(rs) > MaxQueryNormalized {
		return nil, false
	}
	if len(rs) < FingerprintK {
		return nil, true
	}
	return winnow(kgramHashes(rs), FingerprintWindow), true
}

// TokenMark is the mark of a token the server issued (a frame marker, an
// item hash): a hash of its lower-case form in a domain of its own.
func TokenMark(token string) uint64 {
	h := uint64(0xcbf29ce484222325) ^ 0x746f6b656e // FNV-1a offset, salted "token"
	for i := 0; i < len(token); i++ {
		c := token[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return mix64(h)
}

func fingerprints(text string, limit int) []uint64 {
	rs := normalizeForFingerprint(text)
	kgrams := len(rs) - FingerprintK + 1
	if kgrams <= 0 {
		return nil
	}
	hashes := kgramHashes(rs)
	w := max(FingerprintWindow, (2*kgrams+limit-1)/limit)
	out := winnow(hashes, w)
	if len(out) > limit {
		slices.Sort(out)
		out = out[:limit]
	}
	return out
}

// normalizeForFingerprint folds text as the package comment describes.
func normalizeForFingerprint(text string) []rune {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		text = norm.NFKC.String(text)
	}
	out := make([]rune, 0, len(text))
	for _, r := range text {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		case r < utf8.RuneSelf:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			out = append(out, unicode.ToLower(r))
		}
	}
	return out
}

// kgramHashes returns a rolling polynomial hash of every k-gram, each mixed
// so that the smallest of a window is a uniform pick.
func kgramHashes(rs []rune) []uint64 {
	const base = 0x100000001b3
	var top uint64 = 1 // base^(k-1)
	for i := 1; i < FingerprintK; i++ {
		top *= base
	}
	out := make([]uint64, 0, len(rs)-FingerprintK+1)
	var h uint64
	for i, r := range rs {
		if i >= FingerprintK {
			h -= uint64(rs[i-FingerprintK]) * top
		}
		h = h*base + uint64(r)
		if i >= FingerprintK-1 {
			out = append(out, mix64(h))
		}
	}
	return out
}

// winnow keeps the smallest hash of every window of w consecutive hashes
// (the rightmost one on ties), each distinct value once. Fewer than w
// hashes form one window.
func winnow(hashes []uint64, w int) []uint64 {
	if len(hashes) <= w {
		return []uint64{slices.Min(hashes)}
	}
	var out []uint64
	seen := make(map[uint64]struct{})
	// dq holds indexes of a monotonically increasing run of hashes: its
	// front is the window's minimum.
	dq := make([]int, 0, w)
	lastPicked := -1
	for i, h := range hashes {
		for len(dq) > 0 && hashes[dq[len(dq)-1]] >= h {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, i)
		if dq[0] <= i-w {
			dq = dq[1:]
		}
		if i >= w-1 && dq[0] != lastPicked {
			lastPicked = dq[0]
			v := hashes[lastPicked]
			if _, dup := seen[v]; !dup {
				seen[v] = struct{}{}
				out = append(out, v)
			}
		}
	}
	return out
}

// mix64 is the SplitMix64 finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
