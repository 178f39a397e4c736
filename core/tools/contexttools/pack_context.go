package contexttools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

type packInput struct {
	Query       string `json:"query" description:"What the context is for; searched literally (case-insensitively) in the corpus and the repository." maxLength:"$query"`
	WorkingSet  string `json:"working_set,omitempty" description:"A working set of yours whose pins go first." pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64"`
	TokenBudget int    `json:"token_budget,omitempty" description:"Token budget; capped at ARROWHEAD_PACK_MAX_TOKENS, which is also the default." minimum:"1"`
}

type packedItem struct {
	Kind       string `json:"kind" description:"doc or repo_file." enum:"doc,repo_file"`
	Identifier string `json:"identifier" description:"Relative path of the source."`
	SHA256     string `json:"sha256" description:"SHA-256 of the source bytes of the packed line range."`
	StartLine  int    `json:"start_line" description:"First packed line (1-based)." minimum:"1" maximum:"2147483648"`
	EndLine    int    `json:"end_line" description:"Last packed line (inclusive)." minimum:"1" maximum:"2147483648"`
	Tokens     int    `json:"tokens" description:"Tokens of the item's frame." minimum:"0" maximum:"2147483648"`
	Reason     string `json:"reason" description:"Why it is in the pack." enum:"pinned,retrieved"`
}

type droppedItem struct {
	Kind       string `json:"kind" description:"doc or repo_file." enum:"doc,repo_file"`
	Identifier string `json:"identifier" description:"Relative path of the source."`
	StartLine  int    `json:"start_line,omitempty" description:"First line of the dropped range, when it was read." minimum:"0" maximum:"2147483648"`
	EndLine    int    `json:"end_line,omitempty" description:"Last line of the dropped range, when it was read." minimum:"0" maximum:"2147483648"`
	Reason     string `json:"reason" description:"denied: no longer authorized; not_found: gone; unreadable: too large, not regular or not text; over_budget: would exceed the token budget." enum:"denied,not_found,unreadable,over_budget"`
	Tokens     int    `json:"tokens,omitempty" description:"Tokens the item would have taken (over_budget only)." minimum:"0" maximum:"2147483648"`
	Pinned     bool   `json:"pinned" description:"True for a working set pin, false for a retrieved snippet."`
}

type packOutput struct {
	Items       []packedItem  `json:"items" description:"The packed items, in pack order: the reproducible manifest of the bundle."`
	Dropped     []droppedItem `json:"dropped" description:"Items left out, and why."`
	TokensUsed  int           `json:"tokens_used" description:"Sum of the packed items' tokens." minimum:"0" maximum:"2147483648"`
	TokenBudget int           `json:"token_budget" description:"The budget applied (after the server's cap)." minimum:"1" maximum:"2147483648"`
	Tokenizer   string        `json:"tokenizer" description:"The BPE vocabulary tokens were counted with."`
	Truncated   []string      `json:"truncated" description:"Search bounds that cut retrieval short."`
	Untrusted   bool          `json:"untrusted" description:"Always true: every item is framed as untrusted data."`
}

// packContext defines pack_context.
func packContext(s *settings.Settings) catalog.Tool[packInput, packOutput] {
	return catalog.Define[packInput, packOutput](catalog.ToolDef{
		Name:        "pack_context",
		Family:      catalog.FamilyContext,
		Scope:       "context:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_PACK_CONTEXT_PER_MINUTE", Default: 10},
		Description: "Assemble a token-budgeted context bundle for a query: a working set's pinned items first, then retrieved snippets, each secret-scanned, provenance-stamped, and framed as untrusted data. Example: pack_context(query=\"how are refunds issued?\", working_set=\"refunds\")",
		Annotations: catalog.Annotations{Title: "Pack context", ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"query": s.SearchQueryMaxLength},
	})
}

// snippetContextLines is how many lines a retrieved snippet keeps on each
// side of its hit.
const snippetContextLines = 3

// packer is pack_context.
type packer struct {
	settings  *settings.Settings
	sets      ports.WorkingSets
	resolver  *resolver
	scanner   *security.Scanner
	tokenizer ports.Tokenizer
}

// pack holds one call's progress.
type pack struct {
	out    packOutput
	text   strings.Builder
	left   int
	files  map[ports.WorkingSetItem][]byte   // read once per call
	spans  map[ports.WorkingSetItem][][2]int // packed line ranges per source
	pinned map[ports.WorkingSetItem]bool     // whole sources already in
}

func (p packer) pack(ctx context.Context, call catalog.Call, in packInput) (*catalog.Reply[packOutput], error) {
	budget := p.settings.PackMaxTokens
	if in.TokenBudget > 0 && in.TokenBudget < budget {
		budget = in.TokenBudget
	}
	m, err := search.NewMatcher(in.Query, false, search.MatcherOptions{CaseInsensitive: true, MaxQueryChars: p.settings.SearchQueryMaxLength})
	if err != nil {
		return nil, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	k := &pack{
		out:    packOutput{Items: []packedItem{}, Dropped: []droppedItem{}, TokenBudget: budget, Tokenizer: p.tokenizer.Name(), Truncated: []string{}, Untrusted: true},
		left:   budget,
		files:  map[ports.WorkingSetItem][]byte{},
		spans:  map[ports.WorkingSetItem][][2]int{},
		pinned: map[ports.WorkingSetItem]bool{},
	}
	if in.WorkingSet != "" {
		who, err := owner(call.Principal)
		if err != nil {
			return nil, err
		}
		set, err := p.sets.Get(ctx, who, in.WorkingSet)
		if err != nil {
			return nil, setRefusal(err)
		}
		for _, it := range set.Items {
			if err := p.addPinned(ctx, call.Principal, k, it.Key()); err != nil {
				return nil, err
			}
		}
	}
	for _, kind := range []string{ports.PinDoc, ports.PinRepoFile} {
		if k.left <= 0 {
			break
		}
		if err := p.retrieve(ctx, call.Principal, k, kind, m); err != nil {
			return nil, err
		}
	}
	if len(k.out.Items) == 0 {
		k.text.WriteString("Nothing was packed.\n")
	}
	return catalog.Answer(k.out, k.text.String()), nil
}

// addPinned re-authorizes and packs one pin whole, or records why not.
func (p packer) addPinned(ctx context.Context, who ports.Principal, k *pack, key ports.WorkingSetItem) error {
	data, err := p.resolver.read(ctx, who, key)
	var pe errPin
	if errors.As(err, &pe) {
		k.out.Dropped = append(k.out.Dropped, droppedItem{Kind: key.Kind, Identifier: content.SanitizeString(key.Identifier), Reason: pe.reason, Pinned: true})
		return nil
	}
	if err != nil {
		return err
	}
	k.files[key] = data
	lines := splitLines(data)
	if len(lines) == 0 {
		lines = [][]byte{nil}
	}
	if p.add(k, key, lines, 1, len(lines), "pinned") {
		k.pinned[key] = true
	}
	return nil
}

// retrieve runs the shared search runner over one store and packs a window
// around each hit, skipping sources already packed whole and windows that
// overlap one already packed.
func (p packer) retrieve(ctx context.Context, who ports.Principal, k *pack, kind string, m *search.Matcher) error {
	s := p.settings
	var (
		reader   search.Reader
		list     func(context.Context, string, int) ([]ports.FileInfo, bool, error)
		maxFiles = s.SearchMaxFiles
		maxBytes = int64(s.DocMaxBytes)
	)
	if kind == ports.PinDoc {
		reader, list = p.resolver.corpus, p.resolver.corpus.List
	} else {
		if p.resolver.repo == nil {
			return nil
		}
		reader, list, maxFiles, maxBytes = p.resolver.repo, p.resolver.repo.List, s.RepoSearchMaxFiles, int64(s.RepoMaxFileBytes)
	}
	listed, listTruncated, err := list(ctx, "", maxFiles)
	if err != nil {
		return err
	}
	paths := make([]string, len(listed))
	for i, f := range listed {
		paths[i] = f.Path
	}
	allow := func(ctx context.Context, rel string) (bool, error) {
		return p.resolver.allowed(ctx, who, ports.ActionSearch, kind, rel), nil
	}
	src := search.NewStoreSource(reader, paths, allow, search.StoreSourceOptions{MaxBytes: maxBytes})
	defer src.Close()
	res, err := search.Run(ctx, src, m, search.LimitsFromSettings(s, maxFiles))
	if err != nil {
		return err
	}
	noteTruncation(k, kind, res, listTruncated)
	for _, hit := range res.Matches {
		if k.left <= 0 {
			return nil
		}
		key := ports.WorkingSetItem{Kind: kind, Identifier: hit.Path}
		if k.pinned[key] {
			continue
		}
		data, ok := k.files[key]
		if !ok {
			// The search authorized searching; what is packed is read,
			// so the read grant decides too.
			data, err = p.resolver.read(ctx, who, key)
			var pe errPin
			if errors.As(err, &pe) {
				k.files[key] = nil
				continue
			}
			if err != nil {
				return err
			}
			k.files[key] = data
		}
		lines := splitLines(data)
		if hit.Line > len(lines) {
			continue // the file changed since the search read it
		}
		start, end := max(1, hit.Line-snippetContextLines), min(len(lines), hit.Line+snippetContextLines)
		if overlaps(k.spans[key], start, end) {
			continue
		}
		p.add(k, key, lines, start, end, "retrieved")
	}
	return nil
}

// add frames lines [start, end] of a source, redacted, and packs it when
// its tokens fit what is left of the budget.
func (p packer) add(k *pack, key ports.WorkingSetItem, lines [][]byte, start, end int, reason string) bool {
	raw := bytes.Join(lines[start-1:end], nil)
	text, err := content.SanitizeText(raw)
	if err != nil {
		k.out.Dropped = append(k.out.Dropped, droppedItem{Kind: key.Kind, Identifier: content.SanitizeString(key.Identifier),
			StartLine: start, EndLine: end, Reason: dropUnreadable, Pinned: reason == "pinned"})
		return false
	}
	redacted, _ := p.scanner.Redact(text)
	framed := content.Frame(redacted, content.NewSource(key.Kind, key.Identifier, "text", raw))
	tokens := p.tokenizer.Count(framed.Text)
	if tokens > k.left {
		k.out.Dropped = append(k.out.Dropped, droppedItem{Kind: key.Kind, Identifier: content.SanitizeString(key.Identifier),
			StartLine: start, EndLine: end, Reason: dropBudget, Tokens: tokens, Pinned: reason == "pinned"})
		return false
	}
	sum := sha256.Sum256(raw)
	k.out.Items = append(k.out.Items, packedItem{Kind: key.Kind, Identifier: framed.Source.Identifier, SHA256: hex.EncodeToString(sum[:]),
		StartLine: start, EndLine: end, Tokens: tokens, Reason: reason})
	k.spans[key] = append(k.spans[key], [2]int{start, end})
	k.left -= tokens
	k.out.TokensUsed += tokens
	k.text.WriteString(framed.Text)
	k.text.WriteString("\n")
	return true
}

// noteTruncation records which search bounds cut retrieval short.
func noteTruncation(k *pack, kind string, res search.Result, listTruncated bool) {
	flag := func(cond bool, what string) {
		if cond {
			k.out.Truncated = append(k.out.Truncated, kind+":"+what)
		}
	}
	flag(res.ResultsTruncated, "results")
	flag(res.FilesTruncated || listTruncated, "files")
	flag(res.BytesTruncated, "bytes")
	flag(res.DeadlineExceeded, "deadline")
}

// splitLines splits data after each newline, keeping the newlines, so
// joining a range gives back its exact bytes.
func splitLines(data []byte) [][]byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 1 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func overlaps(spans [][2]int, start, end int) bool {
	for _, s := range spans {
		if start <= s[1] && s[0] <= end {
			return true
		}
	}
	return false
}
