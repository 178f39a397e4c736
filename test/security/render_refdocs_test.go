package security_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/internal/refdocs"
)

// TestReferenceDocsRenderVerbatim renders the generated references with the
// real renderers and requires the visible text to carry every wire
// description, argument description and variable meaning exactly as the
// code states it: the generator's Markdown escaping loses, adds or
// reinterprets nothing.
func TestReferenceDocsRenderVerbatim(t *testing.T) {
	files, err := refdocs.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]string{}
	for _, f := range files {
		body[f.Path] = string(f.Body)
	}
	s := coretest.Settings(t, wire.EveryFamilyEnv())
	listing, err := wire.Catalog(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	var toolTexts []string
	for _, tool := range listing.Tools {
		toolTexts = append(toolTexts, tool.Description)
		props, _ := tool.InputSchema["properties"].(map[string]any)
		for _, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d != "" {
				toolTexts = append(toolTexts, d)
			}
		}
	}
	for _, r := range listing.Resources {
		toolTexts = append(toolTexts, r.Description)
	}
	for _, p := range listing.Prompts {
		toolTexts = append(toolTexts, p.Description)
	}
	var configTexts []string
	for _, d := range settings.Docs() {
		configTexts = append(configTexts, d.Meaning, d.Section.About)
	}
	reports := renderAll(t, []string{body[refdocs.ToolsPath], body[refdocs.ConfigurationPath]})
	for i, want := range [][]string{toolTexts, configTexts} {
		for renderer, r := range reports[i] {
			for _, s := range want {
				if !strings.Contains(r.Text, s) {
					t.Errorf("%s renders %s without the text %q", renderer, []string{refdocs.ToolsPath, refdocs.ConfigurationPath}[i], s)
				}
			}
		}
	}
}

// TestReferenceDocsEscapeHostileText renders a tool reference whose every
// description is an entry of the hostile render corpus: each must show as
// the literal text it is (whitespace aside), and nothing in it may become
// live HTML or an image. Links are allowed: a renderer may autolink a bare
// URL in any prose, and the reference cross-links itself.
func TestReferenceDocsEscapeHostileText(t *testing.T) {
	corpus := readEscapedCorpus(t, "render_corpus.txt")
	l := wire.Listing{}
	for i, s := range corpus {
		l.Tools = append(l.Tools, wire.ListedTool{
			Name: fmt.Sprintf("tool_%04d", i), Family: string(catalog.FamilyCore), Scope: "tools:read",
			PerMinute: 1, PerMinuteVar: settings.DefaultToolLimitVar, Hints: []string{}, Description: s,
			Annotations: map[string]any{"title": s},
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"arg": map[string]any{"type": "string", "description": s, "pattern": s},
			}},
		})
	}
	md, err := refdocs.RenderTools(l, []wire.FamilyGate{{Family: catalog.FamilyCore}})
	if err != nil {
		t.Fatal(err)
	}
	for renderer, r := range renderAll(t, []string{string(md)})[0] {
		visible := strings.Join(strings.Fields(r.Text), " ")
		for i, s := range corpus {
			// Renderers differ on NUL (CommonMark makes it U+FFFD, marked
			// keeps it); a description never carries one.
			if strings.ContainsRune(s, 0) {
				continue
			}
			if want := strings.Join(strings.Fields(s), " "); !strings.Contains(visible, want) {
				t.Errorf("%s: corpus entry %d does not render as its literal text %q", renderer, i, s)
			}
		}
		for _, v := range r.Violations {
			// A renderer may autolink a bare URL or address in prose, as in
			// any document; anything else is live content.
			if !strings.HasPrefix(v, "href=") || !strings.HasSuffix(strings.SplitN(v, ": ", 2)[0], " on <a>") {
				t.Errorf("%s: the reference renders live content: %s", renderer, v)
			}
		}
	}
}
