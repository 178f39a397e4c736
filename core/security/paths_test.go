package security

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanRelPath(t *testing.T) {
	ok := map[string]string{
		"welcome.txt":        "welcome.txt",
		"notes/readme.txt":   "notes/readme.txt",
		"./notes//a.txt":     "notes/a.txt",
		"notes/./a.txt":      "notes/a.txt",
		"dir.with.dots/a.md": "dir.with.dots/a.md",
		"...":                "...",
	}
	for in, want := range ok {
		got, err := CleanRelPath(in)
		if err != nil || got != want {
			t.Errorf("%q -> %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]error{
		"":                        ErrPathEmpty,
		".":                       ErrPathEmpty,
		"/etc/passwd":             ErrPathAbsolute,
		"../etc/passwd":           ErrPathParent,
		"notes/../../etc":         ErrPathParent,
		"a/..":                    ErrPathParent,
		"..":                      ErrPathParent,
		"C:/windows":              ErrPathAbsolute,
		"C:windows":               ErrPathAbsolute,
		`..\..\etc`:               ErrPathChars,
		`\\server\share`:          ErrPathChars,
		"a\x00.txt":               ErrPathChars,
		"a\nb":                    ErrPathChars,
		"a\u202ecod.txt":          ErrPathChars,
		"a\u200bb":                ErrPathChars,
		"\xff\xfe":                ErrPathChars,
		strings.Repeat("a", 2000): ErrPathTooLong,
	}
	for in, want := range bad {
		_, err := CleanRelPath(in)
		if !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", in, err, want)
		}
		if err != nil && len(in) > 3 && strings.Contains(err.Error(), in) {
			t.Errorf("%q: error echoes the path", in)
		}
	}
}

func TestCleanRelPrefix(t *testing.T) {
	for in, want := range map[string]string{"": "", ".": "", "notes/": "notes/", "notes": "notes", "./a/b/": "a/b/"} {
		got, err := CleanRelPrefix(in)
		if err != nil || got != want {
			t.Errorf("%q -> %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CleanRelPrefix("../x/"); err == nil {
		t.Error("parent prefix accepted")
	}
}
