package contexttools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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
	Retrieval  string `json:"retrieval,omitempty" description:"For a retrieved item, the method that found it: literal (a match of the query) or vector (a chunk of your vector index near the query)." enum:"literal,vector"`
}

type droppedItem struct {
	Kind       string `json:"kind" description:"doc or repo_file." enum:"doc,repo_file"`
	Identifier string `json:"identifier" description:"Relative path of the source."`
	StartLine  int    `json:"start_line,omitempty" description:"First line of the dropped range, when it was read." minimum:"0" maximum:"2147483648"`
	EndLine    int    `json:"end_line,omitempty" description:"Last line of the dropped range, when it was read." minimum:"0" maximum:"2147483648"`
	SHA256     string `json:"sha256,omitempty" description:"SHA-256 of the source bytes of the dropped range, when it was read."`
	Reason     string `json:"reason" description:"denied: no longer authorized; not_found: gone; unreadable: too large, not regular or not text; over_budget: would exceed the token budget, so it was left out whole rather than cut." enum:"denied,not_found,unreadable,over_budget"`
	Tokens     int    `json:"tokens,omitempty" description:"Tokens the item would have taken (over_budget only)." minimum:"0" maximum:"2147483648"`
	Pinned     bool   `json:"pinned" description:"True for a working set pin, false for a retrieved snippet."`
	Retrieval  string `json:"retrieval,omitempty" description:"For a retrieved snippet, the method that found it." enum:"literal,vector"`
}

// retrievalRun says whether one retrieval method ran.
type retrievalRun struct {
	Method     string `json:"method" description:"literal: case-insensitive matches of the query in the corpus and the repository; vector: the chunks of your vector index (filled by doc_index) nearest the query." enum:"literal,vector"`
	Status     string `json:"status" description:"ran; not_configured: no embedder or vector index on this server; denied: you may not query the collection; budget_spent: the budget was used up before it; failed: the embedder or the vector store failed." enum:"ran,not_configured,denied,budget_spent,failed"`
	Collection string `json:"collection,omitempty" description:"The collection vector retrieval searches."`
	Semantic   bool   `json:"semantic" description:"Whether similarity reflects meaning: false for literal retrieval and for the deterministic, non-semantic embedder."`
	Packed     int    `json:"packed" description:"Items this method added to the pack." minimum:"0" maximum:"2147483648"`
}

type packOutput struct {
	Items       []packedItem   `json:"items" description:"The packed items, in pack order: the reproducible manifest of the bundle."`
	Dropped     []droppedItem  `json:"dropped" description:"Items left out, and why."`
	TokensUsed  int            `json:"tokens_used" description:"Sum of the packed items' tokens." minimum:"0" maximum:"2147483648"`
	TokenBudget int            `json:"token_budget" description:"The budget applied (after the server's cap)." minimum:"1" maximum:"2147483648"`
	Tokenizer   string         `json:"tokenizer" description:"The BPE vocabulary tokens were counted with."`
	Retrieval   []retrievalRun `json:"retrieval" description:"Each retrieval method, in the order it ran after the pins, and whether it ran."`
	Truncated   []string       `json:"truncated" description:"What cut the pack short: budget (an item was left out because it would exceed the token budget; see dropped), and kind:bound for the search bounds that cut literal retrieval short (doc:results, repo_file:files, ...)."`
	Untrusted   bool           `json:"untrusted" description:"Always true: every item is framed as untrusted data."`
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

// Why an item is in the pack.
const (
	reasonPinned    = "pinned"
	reasonRetrieved = "retrieved"
)

// truncatedBudget is the truncation flag of an item left out because it
// would exceed the token budget.
const truncatedBudget = "budget"

// packer is pack_context.
type packer struct {
	settings  *settings.Settings
	sets      ports.WorkingSets
	resolver  *resolver
	scanner   *security.Scanner
	tokenizer ports.Tokenizer
	vectors   vectorRetriever
}

// pack holds one call's progress.
type pack struct {
	out       packOutput
	text      strings.Builder
	left      int
	files     map[ports.WorkingSetItem][]byte   // read once per call; nil: not readable
	sanitized map[ports.WorkingSetItem]string   // a document's sanitized text, for vector hits
	spans     map[ports.WorkingSetItem][][2]int // packed line ranges per source
	pinned    map[ports.WorkingSetItem]bool     // whole sources already in
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
		out:       packOutput{Items: []packedItem{}, Dropped: []droppedItem{}, TokenBudget: budget, Tokenizer: p.tokenizer.Name(), Truncated: []string{}, Untrusted: true},
		left:      budget,
		files:     map[ports.WorkingSetItem][]byte{},
		sanitized: map[ports.WorkingSetItem]string{},
		spans:     map[ports.WorkingSetItem][][2]int{},
		pinned:    map[ports.WorkingSetItem]bool{},
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
	literal := retrievalRun{Method: retrievalLiteral, Status: statusBudgetSpent}
	for _, kind := range []string{ports.PinDoc, ports.PinRepoFile} {
		if k.left <= 0 {
			break
		}
		literal.Status = statusRan
		if err := p.retrieve(ctx, call.Principal, k, kind, m); err != nil {
			return nil, err
		}
	}
	vector := p.vectors.describe()
	switch {
	case vector.Status == statusNotConfigured:
	case k.left <= 0:
		vector.Status = statusBudgetSpent
	default:
		hits, status, err := p.vectors.nearest(ctx, call.Principal, in.Query)
		if err != nil {
			return nil, err
		}
		vector.Status = status
		if err := p.packVectorHits(ctx, call.Principal, k, hits); err != nil {
			return nil, err
		}
	}
	for _, it := range k.out.Items {
		switch it.Retrieval {
		case retrievalLiteral:
			literal.Packed++
		case retrievalVector:
			vector.Packed++
		}
	}
	k.out.Retrieval = []retrievalRun{literal, vector}
	if slices.ContainsFunc(k.out.Dropped, func(d droppedItem) bool { return d.Reason == dropBudget }) {
		k.out.Truncated = append([]string{truncatedBudget}, k.out.Truncated...)
	}
	if len(k.out.Items) == 0 {
		k.text.WriteString("Nothing was packed.\n")
	}
	if n := len(k.out.Dropped); n > 0 {
		fmt.Fprintf(&k.text, "%d items were left out (see dropped in the structured result).\n", n)
	}
	fmt.Fprintf(&k.text, "Retrieval: literal %s (%d packed), vector %s (%d packed).\n", literal.Status, literal.Packed, vector.Status, vector.Packed)
	return catalog.Answer(k.out, k.text.String()), nil
}

// addPinned re-authorizes and packs one pin whole, or records why not. A
// pin larger than what is left of the budget is left out whole, never cut.
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
	if data == nil {
		data = []byte{}
	}
	k.files[key] = data
	lines := splitLines(data)
	if len(lines) == 0 {
		lines = [][]byte{nil}
	}
	if p.add(k, key, lines, 1, len(lines), reasonPinned, "") {
		k.pinned[key] = true
	}
	return nil
}

// source returns a retrieved source's bytes, read once per call. The
// search or the index only proposed it; what is packed is read, so the
// read grant decides, exactly as for a pin. ok is false when it cannot be
// read now (denied, gone, unreadable): a retrieved candidate is then
// passed over without a trace, since the caller never asked for it.
func (p packer) source(ctx context.Context, who ports.Principal, k *pack, key ports.WorkingSetItem) ([]byte, bool, error) {
	if data, seen := k.files[key]; seen {
		return data, data != nil, nil
	}
	data, err := p.resolver.read(ctx, who, key)
	var pe errPin
	if errors.As(err, &pe) {
		k.files[key] = nil
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if data == nil {
		data = []byte{}
	}
	k.files[key] = data
	return data, true, nil
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
		data, ok, err := p.source(ctx, who, k, key)
		if err != nil {
			return err
		}
		lines := splitLines(data)
		if !ok || hit.Line > len(lines) {
			continue // unreadable now, or changed since the search read it
		}
		start, end := max(1, hit.Line-snippetContextLines), min(len(lines), hit.Line+snippetContextLines)
		if overlaps(k.spans[key], start, end) {
			continue
		}
		p.add(k, key, lines, start, end, reasonRetrieved, retrievalLiteral)
	}
	return nil
}

// packVectorHits packs the document lines holding each vector hit, best
// first, under the same rules as a literal hit: re-read under the read
// grant, skipped when its source is packed whole or its lines overlap what
// is packed, redacted and framed. A hit whose chunk the document no
// longer holds (it changed since doc_index ran) is passed over.
func (p packer) packVectorHits(ctx context.Context, who ports.Principal, k *pack, hits []ports.VectorHit) error {
	for _, hit := range hits {
		if k.left <= 0 {
			return nil
		}
		key := ports.WorkingSetItem{Kind: ports.PinDoc, Identifier: hit.Source}
		if k.pinned[key] {
			continue
		}
		data, ok, err := p.source(ctx, who, k, key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		text, seen := k.sanitized[key]
		if !seen {
			text, _ = sanitizedDocument(p.settings, key.Identifier, data)
			k.sanitized[key] = text
		}
		lines := splitLines(data)
		start, end, found := chunkLines(text, hit.Content, len(lines))
		if !found || overlaps(k.spans[key], start, end) {
			continue
		}
		p.add(k, key, lines, start, end, reasonRetrieved, retrievalVector)
	}
	return nil
}

// add frames lines [start, end] of a source, redacted, and packs it when
// its tokens fit what is left of the budget; otherwise the item is left
// out whole and recorded as over_budget, with the digest and lines that
// identify what was left out.
func (p packer) add(k *pack, key ports.WorkingSetItem, lines [][]byte, start, end int, reason, method string) bool {
	raw := bytes.Join(lines[start-1:end], nil)
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:])
	dropped := droppedItem{Kind: key.Kind, Identifier: content.SanitizeString(key.Identifier),
		StartLine: start, EndLine: end, SHA256: digest, Pinned: reason == reasonPinned, Retrieval: method}
	text, err := content.SanitizeText(raw)
	if err != nil {
		dropped.Reason = dropUnreadable
		k.out.Dropped = append(k.out.Dropped, dropped)
		return false
	}
	redacted, _ := p.scanner.Redact(text)
	framed := content.Frame(redacted, content.NewSource(key.Kind, key.Identifier, "text", raw))
	tokens := p.tokenizer.Count(framed.Text)
	if tokens > k.left {
		dropped.Reason, dropped.Tokens = dropBudget, tokens
		k.out.Dropped = append(k.out.Dropped, dropped)
		return false
	}
	k.out.Items = append(k.out.Items, packedItem{Kind: key.Kind, Identifier: framed.Source.Identifier, SHA256: digest,
		StartLine: start, EndLine: end, Tokens: tokens, Reason: reason, Retrieval: method})
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
