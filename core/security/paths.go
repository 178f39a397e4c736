package security

import (
	"errors"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPathBytes bounds a caller-supplied relative path.
const MaxPathBytes = 1024

// Path errors. Their text never quotes the path.
var (
	ErrPathEmpty    = errors.New("the path is empty")
	ErrPathTooLong  = errors.New("the path is too long")
	ErrPathAbsolute = errors.New("the path must be relative")
	ErrPathParent   = errors.New("the path must not contain '..' components")
	ErrPathChars    = errors.New("the path contains characters that are not allowed")
)

// CleanRelPath validates a caller-supplied path meant to stay inside a jail
// and returns its clean slash-separated form. It refuses absolute paths
// (including Windows drive and UNC forms), '..' components, NUL and other
// control characters, backslashes and invalid UTF-8. Symlinks are the
// jail's concern: this check is lexical.
func CleanRelPath(p string) (string, error) {
	if p == "" {
		return "", ErrPathEmpty
	}
	if len(p) > MaxPathBytes {
		return "", ErrPathTooLong
	}
	if !utf8.ValidString(p) {
		return "", ErrPathChars
	}
	for _, r := range p {
		if r == 0 || r == '\\' || unicode.IsControl(r) || invisiblePathRune(r) {
			return "", ErrPathChars
		}
	}
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", ErrPathAbsolute
	}
	for rest := p; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if part == ".." {
			return "", ErrPathParent
		}
	}
	clean := path.Clean(p)
	if clean == "." || clean == "" {
		return "", ErrPathEmpty
	}
	if strings.HasPrefix(clean, "../") || clean == ".." || strings.HasPrefix(clean, "/") {
		return "", ErrPathParent
	}
	return clean, nil
}

// CleanRelPrefix validates an optional path prefix for listings and
// searches: "" means the whole root; a trailing slash is kept, since
// prefixes match on path-component boundaries.
func CleanRelPrefix(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return "", nil
	}
	trailing := strings.HasSuffix(p, "/")
	clean, err := CleanRelPath(p)
	if err != nil {
		return "", err
	}
	if trailing {
		clean += "/"
	}
	return clean, nil
}

// invisiblePathRune reports zero-width and bidirectional control characters, which
// make a path display differently from what it names.
func invisiblePathRune(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0xfeff, r == 0x2060, r == 0x061c, r == 0x00ad:
		return true
	}
	return false
}
