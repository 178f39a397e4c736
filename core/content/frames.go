package content

import "strings"

// FrameInfo is what one frame found in text says about itself (see Frame
// for the layout).
type FrameInfo struct {
	// Marker is the frame's random token.
	Marker string
	// Kind is the source kind in the header (url, file, document, ...).
	Kind string
	// SHA256 is the header's digest of the original bytes.
	SHA256 string
	// Body is the framed content alone, without header or markers.
	Body string
}

// The fixed words of a frame's opening and closing lines; text carrying
// one is (part of) a frame being sent back.
const (
	FrameBeginPhrase = "UNTRUSTED-DATA-BEGIN"
	FrameEndPhrase   = "UNTRUSTED-DATA-END"
)

// Frames calls fn for every complete frame in text, in order. A frame is
// recognised by its exact opening line, header and closing line; anything
// else is left alone.
func Frames(text string, fn func(FrameInfo)) {
	for {
		i := strings.Index(text, frameBeginPrefix)
		if i < 0 {
			return
		}
		text = text[i+len(frameBeginPrefix):]
		marker, rest, ok := strings.Cut(text, frameMarkerSuffix+"\n")
		if !ok || !isMarker(marker) {
			continue
		}
		header, rest, ok := strings.Cut(rest, "\n\n")
		if !ok {
			continue
		}
		end := "\n" + frameEndPrefix + marker + frameMarkerSuffix
		body, after, ok := strings.Cut(rest, end)
		if !ok {
			continue
		}
		fn(FrameInfo{Marker: marker, Kind: headerValue(header, "kind="), SHA256: headerValue(header, "sha256="), Body: body})
		text = after
	}
}

// isMarker reports whether s has the shape newMarker gives a marker.
func isMarker(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// headerValue returns the plain word after key in a frame header (""
// when the value is quoted or missing). The kind comes first; the digest
// is found from the end, after the identifier, so a caller-influenced
// identifier cannot supply either.
func headerValue(header, key string) string {
	var v string
	if key == "kind=" {
		const lead = "source: kind="
		if !strings.HasPrefix(header, lead) {
			return ""
		}
		v = header[len(lead):]
	} else {
		i := strings.LastIndex(header, " "+key)
		if i < 0 {
			return ""
		}
		v = header[i+1+len(key):]
	}
	if j := strings.IndexAny(v, " \n"); j >= 0 {
		v = v[:j]
	}
	if strings.HasPrefix(v, "`") {
		return ""
	}
	return v
}
