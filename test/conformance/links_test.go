package conformance_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	htmlAnchor   = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	atxHeading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fencedBlock  = regexp.MustCompile("(?ms)^```.*?^```")
)

// TestMarkdownLinksResolve checks every relative link in README.md and
// docs/: the file it names exists, and a fragment names an anchor there (an
// <a id> or a heading, slugged as GitHub does), so the references the README
// points at, and their cross-links, cannot go stale.
func TestMarkdownLinksResolve(t *testing.T) {
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repoRoot, path)
			pages = append(pages, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		body, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			return nil
		}
		a := map[string]bool{}
		for _, m := range htmlAnchor.FindAllStringSubmatch(string(body), -1) {
			a[m[1]] = true
		}
		for _, m := range atxHeading.FindAllStringSubmatch(fencedBlock.ReplaceAllString(string(body), ""), -1) {
			a[githubSlug(m[1])] = true
		}
		anchors[page] = a
		return a
	}
	checked := 0
	for _, page := range pages {
		body, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(fencedBlock.ReplaceAllString(string(body), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Clean(filepath.Join(filepath.Dir(page), file))
				if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
				t.Errorf("%s links to %s, but %s has no anchor %q", page, target, dest, frag)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d links checked: the link pattern no longer matches the pages", checked)
	}
}

// githubSlug is the anchor GitHub gives a heading: its text without Markdown
// escapes and code marks, lower-cased, punctuation other than - and _
// dropped, spaces turned into hyphens.
func githubSlug(heading string) string {
	heading = strings.NewReplacer(`\`, "", "`", "").Replace(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
