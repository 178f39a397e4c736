package contexttools

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

type packInput struct {
	Query       string `json:"query" description:"What the context is for: a question in plain English, or identifiers. Code and documents are ranked for it (terms, the definitions it names, and the reference graph), not matched literally." maxLength:"$query"`
	WorkingSet  string `json:"working_set,omitempty" description:"A working set of yours whose pins go first." pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64"`
	TokenBudget int    `json:"token_budget,omitempty" description:"Token budget; capped at ARROWHEAD_PACK_MAX_TOKENS, which is also the default." minimum:"1"`
}

type packedItem struct {
	Kind        string   `json:"kind" description:"doc or repo_file." enum:"doc,repo_file"`
	Identifier  string   `json:"identifier" description:"Relative path of the source."`
	SHA256      string   `json:"sha256" description:"SHA-256 of the source bytes of the packed line range."`
	StartLine   int      `json:"start_line" description:"First packed line (1-based)." minimum:"1" maximum:"$count"`
	EndLine     int      `json:"end_line" description:"Last packed line (inclusive)." minimum:"1" maximum:"$count"`
	Tokens      int      `json:"tokens" description:"Tokens of the item's header line and frame." minimum:"0" maximum:"$count"`
	Reason      string   `json:"reason" description:"Why it is in the pack." enum:"pinned,retrieved"`
	Retrieval   string   `json:"retrieval,omitempty" description:"For a retrieved item, the retriever that weighed most in its rank: lexical (its terms), symbols (a definition the query names), graph (defined by what the matching code uses) or vector (a chunk of your vector index near the query)." enum:"lexical,symbols,graph,vector"`
	Retrievers  []string `json:"retrievers,omitempty" description:"For a retrieved item, every retriever that contributed to its rank."`
	Unit        string   `json:"unit,omitempty" description:"What the item is: a definition's kind and name (function Parse, method FlagSet.Parse, class App), section, block or text."`
	Cut         bool     `json:"cut,omitempty" description:"True when only the first lines of the unit fitted the remaining budget: end_line is where it was cut, full_end_line where it ends."`
	FullEndLine int      `json:"full_end_line,omitempty" description:"For a cut item, the unit's last line." minimum:"0" maximum:"$count"`
}

type droppedItem struct {
	Kind       string `json:"kind" description:"doc or repo_file." enum:"doc,repo_file"`
	Identifier string `json:"identifier" description:"Relative path of the source."`
	StartLine  int    `json:"start_line,omitempty" description:"First line of the dropped range, when it was read." minimum:"0" maximum:"$count"`
	EndLine    int    `json:"end_line,omitempty" description:"Last line of the dropped range, when it was read." minimum:"0" maximum:"$count"`
	SHA256     string `json:"sha256,omitempty" description:"SHA-256 of the source bytes of the dropped range, when it was read."`
	Reason     string `json:"reason" description:"denied: no longer authorized; not_found: gone; unreadable: too large, not regular or not text; over_budget: a pin that would exceed the token budget, left out whole rather than cut." enum:"denied,not_found,unreadable,over_budget"`
	Tokens     int    `json:"tokens,omitempty" description:"Tokens the item would have taken (over_budget only)." minimum:"0" maximum:"$count"`
	Pinned     bool   `json:"pinned" description:"True for a working set pin, false for a retrieved snippet."`
}

// retrievalRun says whether one retriever ran.
type retrievalRun struct {
	Method     string `json:"method" description:"lexical: BM25 over code-aware terms (identifiers split at camelCase and snake_case, stop words dropped); symbols: definitions a query word or phrase names, packed whole; graph: a PageRank over the reference graph personalized on the matching files (files defining what they use rank higher); vector: the chunks of your vector index (filled by doc_index) nearest the query." enum:"lexical,symbols,graph,vector"`
	Status     string `json:"status" description:"ran; not_configured: no embedder or vector index on this server; not_semantic: the embedder's similarity does not reflect meaning (the deterministic one), so vector retrieval stays out of the ranking; denied: you may not query the collection; budget_spent: the budget was used up before it; failed: the embedder or the vector store failed." enum:"ran,not_configured,not_semantic,denied,budget_spent,failed"`
	Collection string `json:"collection,omitempty" description:"The collection vector retrieval searches."`
	Semantic   bool   `json:"semantic" description:"Whether similarity reflects meaning: true only for vector retrieval with a semantic embedder."`
	Packed     int    `json:"packed" description:"Packed items this retriever contributed to." minimum:"0" maximum:"$count"`
}

// indexSummary is what bringing the retrieval index up to date did.
type indexSummary struct {
	Files      int `json:"files" description:"Files in the index this call ranked over (the ones you may search)." minimum:"0" maximum:"$count"`
	Chunks     int `json:"chunks" description:"Definitions, sections and blocks they were cut into." minimum:"0" maximum:"$count"`
	Reused     int `json:"reused" description:"File analyses reused from the cache (unchanged size and modification time)." minimum:"0" maximum:"$count"`
	Analyzed   int `json:"analyzed" description:"Files read and analyzed by this call." minimum:"0" maximum:"$count"`
	Unreadable int `json:"unreadable" description:"Listed files passed over: not text, over the size cap, or gone." minimum:"0" maximum:"$count"`
}

type packOutput struct {
	Items       []packedItem   `json:"items" description:"The packed items, in pack order: the reproducible manifest of the bundle."`
	Dropped     []droppedItem  `json:"dropped" description:"Pins left out, and why."`
	TokensUsed  int            `json:"tokens_used" description:"Sum of the packed items' tokens." minimum:"0" maximum:"$count"`
	TokenBudget int            `json:"token_budget" description:"The budget applied (after the server's cap)." minimum:"1" maximum:"$count"`
	Tokenizer   string         `json:"tokenizer" description:"The BPE vocabulary tokens were counted with."`
	Retrieval   []retrievalRun `json:"retrieval" description:"Each retriever and whether it ran."`
	Index       indexSummary   `json:"index" description:"The retrieval index over the corpus and the repository."`
	Candidates  int            `json:"candidates" description:"Ranked units considered for the pack." minimum:"0" maximum:"$count"`
	Unpacked    int            `json:"unpacked" description:"Ranked units left out because the budget ran out." minimum:"0" maximum:"$count"`
	Truncated   []string       `json:"truncated" description:"What cut the pack short: budget (a unit was cut or left out, or a pin did not fit), and kind:bound for the bounds that cut the index short (repo_file:files: the listing stopped at its cap; kind:deadline: the index's time limit passed, so some files were not analyzed yet)."`
	Untrusted   bool           `json:"untrusted" description:"Always true: every item is framed as untrusted data."`
}

// packContext defines pack_context; "$query" is the family's
// ARROWHEAD_SEARCH_QUERY_MAX_LENGTH bound.
var packContext = catalog.Define[packInput, packOutput](catalog.ToolDef{
	Name:        "pack_context",
	Scope:       "context:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_PACK_CONTEXT_PER_MINUTE", Default: 10},
	Description: "Assemble a token-budgeted context bundle for a question: a working set's pinned items first, then the code definitions and document sections that answer it, ranked (lexical terms, definitions the question names, the reference graph, and vector similarity when a semantic embedder is configured), each whole or cut to the remaining budget, with its line range, secret-scanned, provenance-stamped and framed as untrusted data. Example: pack_context(query=\"how are refunds issued?\", working_set=\"refunds\")",
	Annotations: catalog.Annotations{Title: "Pack context", ReadOnly: true, Idempotent: true},
})

// Ranking bounds.
const (
	// rankLimit is how many ranked units a pack considers; the budget
	// ends it long before at the default.
	rankLimit = 200
	// minCutLines is the fewest lines of a unit worth packing when it has
	// to be cut; a shorter remainder ends the pack instead.
	minCutLines = 3
	// weightVector is a vector hit's weight beside the other retrievers'
	// (see retrieval's weights), decreasing with its rank.
	weightVector = 0.8
)

// Why an item is in the pack.
const (
	reasonPinned    = "pinned"
	reasonRetrieved = "retrieved"
)

// truncatedBudget is the truncation flag of a pack the budget cut short.
const truncatedBudget = "budget"

// pack holds one call's progress.
type pack struct {
	out       packOutput
	text      strings.Builder
	left      int
	files     map[ports.WorkingSetItem][]byte   // read once per call; nil: not readable
	sanitized map[ports.WorkingSetItem]string   // a document's sanitized text, for vector hits
	redacted  map[ports.WorkingSetItem][][]byte // a source's lines after the secret scanner
	spans     map[ports.WorkingSetItem][][2]int // packed line ranges per source
	pinned    map[ports.WorkingSetItem]bool     // whole sources already in
	cutAt     string                            // the text note for a cut item
}

// candidate is one ranked unit to pack.
type candidate struct {
	key        ports.WorkingSetItem
	start, end int
	unit       string
	score      float64
	primary    string
	retrievers []string
	// vector hits carry the chunk they were found by, placed on lines when packed.
	vectorChunk string
}

// pack is pack_context.
func (p *server) pack(ctx context.Context, call catalog.Call, in packInput) (*catalog.Reply[packOutput], error) {
	budget := p.config.PackMaxTokens
	if in.TokenBudget > 0 && in.TokenBudget < budget {
		budget = in.TokenBudget
	}
	// The query's rules (one line, UTF-8, length) are the search tools'.
	if _, err := search.NewMatcher(in.Query, false, search.MatcherOptions{CaseInsensitive: true, MaxQueryChars: p.config.QueryMaxChars}); err != nil {
		return nil, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	k := &pack{
		out: packOutput{Items: []packedItem{}, Dropped: []droppedItem{}, TokenBudget: budget, Tokenizer: p.tokenizer.Name(),
			Truncated: []string{}, Untrusted: true},
		left:      budget,
		files:     map[ports.WorkingSetItem][]byte{},
		sanitized: map[ports.WorkingSetItem]string{},
		redacted:  map[ports.WorkingSetItem][][]byte{},
		spans:     map[ports.WorkingSetItem][][2]int{},
		pinned:    map[ports.WorkingSetItem]bool{},
	}
	if in.WorkingSet != "" {
		who, err := catalog.Owner(call.Principal)
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
	runs := []retrievalRun{{Method: retrievalLexical}, {Method: retrievalSymbols}, {Method: retrievalGraph}, p.vectors.describe()}
	var (
		cands []candidate
		notes []string
	)
	if k.left <= 0 {
		for i := range runs[:3] {
			runs[i].Status = statusBudgetSpent
		}
	} else {
		var err error
		if cands, notes, err = p.rank(ctx, call.Principal, k, in.Query); err != nil {
			return nil, err
		}
		for i := range runs[:3] {
			runs[i].Status = statusRan
		}
	}
	vector := &runs[3]
	switch {
	case vector.Status == statusNotConfigured:
	case !vector.Semantic:
		vector.Status = statusNotSemantic
	case k.left <= 0:
		vector.Status = statusBudgetSpent
	default:
		hits, status, err := p.vectors.nearest(ctx, call.Principal, in.Query)
		if err != nil {
			return nil, err
		}
		vector.Status = status
		cands = mergeVector(cands, hits)
	}
	k.out.Candidates = len(cands)
	if err := p.packCandidates(ctx, call.Principal, k, cands); err != nil {
		return nil, err
	}
	for _, it := range k.out.Items {
		for i := range runs {
			if slices.Contains(it.Retrievers, runs[i].Method) {
				runs[i].Packed++
			}
		}
	}
	k.out.Retrieval = runs
	budgetCut := k.out.Unpacked > 0 || k.cutAt != "" || slices.ContainsFunc(k.out.Dropped, func(d droppedItem) bool { return d.Reason == dropBudget })
	if budgetCut {
		k.out.Truncated = append([]string{truncatedBudget}, k.out.Truncated...)
	}
	p.summarize(k, runs, notes, budgetCut)
	return catalog.Answer(k.out, k.text.String()), nil
}

// rank brings the index up to date for the caller and ranks its units for
// the query. notes are the sentences saying where the index stopped short.
func (p *server) rank(ctx context.Context, who ports.Principal, k *pack, query string) ([]candidate, []string, error) {
	var (
		entries []*retrieval.Entry
		notes   []string
	)
	for _, kind := range []string{ports.PinDoc, ports.PinRepoFile} {
		run, err := p.indexKind(ctx, who, kind)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, run.entries...)
		k.out.Index.Reused += run.reused
		k.out.Index.Analyzed += run.built
		k.out.Index.Unreadable += run.unreadable
		what, capVar, capValue := "corpus", "ARROWHEAD_SEARCH_MAX_FILES", p.config.DocMaxFiles
		if kind == ports.PinRepoFile {
			what, capVar, capValue = "repository", "ARROWHEAD_REPO_SEARCH_MAX_FILES", p.config.RepoMaxFiles
		}
		if run.listCut {
			k.out.Truncated = append(k.out.Truncated, kind+":files")
			notes = append(notes, fmt.Sprintf("The %s listing stopped at %d files (%s); files past them in path order were not ranked.", what, capValue, capVar))
		}
		if run.unreadable > 0 {
			sizeVar := "ARROWHEAD_DOC_MAX_BYTES"
			if kind == ports.PinRepoFile {
				sizeVar = "ARROWHEAD_REPO_MAX_FILE_BYTES"
			}
			notes = append(notes, fmt.Sprintf("%d listed %s files were passed over: not text, gone, or larger than %s.", run.unreadable, what, sizeVar))
		}
		if run.deadline {
			k.out.Truncated = append(k.out.Truncated, kind+":deadline")
			notes = append(notes, fmt.Sprintf("The %s index ran out of time (%s) after analyzing %d new files; %d of %d listed files are indexed. Ask again to continue: what was analyzed is kept.",
				what, indexDeadline, run.built, len(run.entries), run.listed))
		}
	}
	corpus := p.index.Corpus(entries)
	k.out.Index.Files = corpus.Files()
	for _, e := range entries {
		k.out.Index.Chunks += len(e.Chunks)
	}
	hits := corpus.Rank(query, rankLimit)
	cands := make([]candidate, 0, len(hits))
	for _, h := range hits {
		c := candidate{key: ports.WorkingSetItem{Kind: h.Entry.Kind, Identifier: h.Entry.Path}, start: h.Chunk.Start, end: h.Chunk.End,
			unit: unitName(h.Chunk), score: h.Score}
		best := 0.0
		for _, part := range []struct {
			method string
			v      float64
		}{{retrievalLexical, h.Lexical * retrieval.WeightLexical}, {retrievalSymbols, h.Symbol * retrieval.WeightSymbol}, {retrievalGraph, h.Graph * retrieval.WeightGraph}} {
			if part.v <= 0 {
				continue
			}
			c.retrievers = append(c.retrievers, part.method)
			if part.v > best {
				best, c.primary = part.v, part.method
			}
		}
		cands = append(cands, c)
	}
	return cands, notes, nil
}

// unitName says what a chunk is: "method FlagSet.Parse", "section". It
// stands outside the untrusted frame, so it carries only the chunk's kind
// and a definition's name as identifier characters (a parser's names are
// identifiers already; a heading's text is not, so a section is unnamed).
func unitName(c retrieval.Chunk) string {
	if c.DefLine == 0 {
		return c.Kind
	}
	name := c.Name
	if c.Parent != "" {
		name = c.Parent + "." + name
	}
	name = identifierOnly(name)
	if name == "" {
		return identifierOnly(c.Kind)
	}
	return identifierOnly(c.Kind) + " " + name
}

// maxUnitNameBytes bounds a unit name in an item's header.
const maxUnitNameBytes = 120

// identifierOnly keeps the letters, digits, '_', '$' and '.' of s, at most
// maxUnitNameBytes of them.
func identifierOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxUnitNameBytes {
			break
		}
		if r == '_' || r == '$' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mergeVector adds vector hits to the ranked candidates, best first, each
// weighing weightVector down to nothing by its rank; a hit's lines are
// found when it is packed.
func mergeVector(cands []candidate, hits []ports.VectorHit) []candidate {
	for i, h := range hits {
		score := weightVector * float64(len(hits)-i) / float64(len(hits))
		cands = append(cands, candidate{key: ports.WorkingSetItem{Kind: ports.PinDoc, Identifier: h.Source}, score: score,
			primary: retrievalVector, retrievers: []string{retrievalVector}, vectorChunk: h.Content, unit: retrieval.KindText})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.score, a.score) })
	return cands
}

// packCandidates packs the ranked units best first: each re-read under the
// read grant (the index only proposed it), skipped when its source is
// pinned whole or its lines overlap what is packed (a vector hit over a
// unit already in marks that unit rather than packing it twice), and cut
// to the remaining budget when it does not fit whole. The pack ends when
// the budget cannot take even a cut unit.
func (p *server) packCandidates(ctx context.Context, who ports.Principal, k *pack, cands []candidate) error {
	for i, c := range cands {
		if k.left <= 0 {
			k.out.Unpacked = len(cands) - i
			return nil
		}
		if k.pinned[c.key] {
			continue
		}
		data, ok, err := p.source(ctx, who, k, c.key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		lines := splitLines(data)
		if c.vectorChunk != "" {
			text, seen := k.sanitized[c.key]
			if !seen {
				text, _ = sanitizedDocument(p.config.DocumentJSON, c.key.Identifier, data)
				k.sanitized[c.key] = text
			}
			start, end, found := chunkLines(text, c.vectorChunk, len(lines))
			if !found {
				continue // the document changed since doc_index ran
			}
			c.start, c.end = start, end
			if at := k.itemOverlapping(c.key, start, end); at >= 0 {
				it := &k.out.Items[at]
				if !slices.Contains(it.Retrievers, retrievalVector) {
					it.Retrievers = append(it.Retrievers, retrievalVector)
				}
				continue
			}
		}
		if c.end > len(lines) || overlaps(k.spans[c.key], c.start, c.end) {
			continue // changed since it was indexed, or already in
		}
		packed, stop := p.addCut(k, c, lines)
		if stop {
			k.out.Unpacked = len(cands) - i
			if packed {
				k.out.Unpacked--
			}
			return nil
		}
	}
	return nil
}

// itemOverlapping returns the index of a packed item of key overlapping
// lines [start, end], or -1.
func (k *pack) itemOverlapping(key ports.WorkingSetItem, start, end int) int {
	for i, it := range k.out.Items {
		if it.Kind == key.Kind && it.Identifier == content.SanitizeString(key.Identifier) && start <= it.EndLine && it.StartLine <= end {
			return i
		}
	}
	return -1
}

// addCut packs a candidate whole when it fits what is left of the budget,
// else its longest head that fits (at least minCutLines lines), and then
// says the pack is full (stop).
func (p *server) addCut(k *pack, c candidate, lines [][]byte) (packed, stop bool) {
	frame := func(end int) (framed string, tokens int, ok bool) {
		return p.frameItem(k, c, lines, end)
	}
	text, tokens, ok := frame(c.end)
	if !ok {
		return false, false
	}
	if tokens <= k.left {
		p.commit(k, c, lines, c.end, text, tokens, false)
		return true, false
	}
	// The longest head that fits ends in [lo, hi]. Each framing draws a
	// fresh marker, whose token count varies a little, so the framing
	// that was measured to fit is the one packed.
	lo, hi := c.start+minCutLines-1, c.end-1
	if lo > hi {
		return false, true
	}
	best, bestTokens := "", 0
	if text, t, _ := frame(lo); t <= k.left {
		best, bestTokens = text, t
	} else {
		return false, true
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if text, t, _ := frame(mid); t <= k.left {
			lo, best, bestTokens = mid, text, t
		} else {
			hi = mid - 1
		}
	}
	p.commit(k, c, lines, lo, best, bestTokens, true)
	k.cutAt = fmt.Sprintf("Item %d was cut at line %d of its lines %d-%d to fit the budget.", len(k.out.Items), lo, c.start, c.end)
	return true, true
}

// frameItem renders lines [c.start, end] as an item: its header line and
// its redacted, framed text, and counts its tokens.
func (p *server) frameItem(k *pack, c candidate, lines [][]byte, end int) (string, int, bool) {
	raw := bytes.Join(lines[c.start-1:end], nil)
	red := p.redactedLines(k, c.key, lines)
	// A document is sanitized for its format exactly as doc_read does, and
	// its frame says which: Markdown loses its HTML, images and unsafe
	// links here too. JSON is sanitized as JSON when the item is the whole
	// document; a slice of a JSON document is not JSON, and is text. A
	// repository file is text, as code_read serves it.
	format := content.FormatText
	if c.key.Kind != ports.PinRepoFile {
		format = content.DocumentFormat(c.key.Identifier)
		if format == content.FormatJSON && (c.start != 1 || end != len(lines)) {
			format = content.FormatText
		}
	}
	text, err := content.SanitizeAs(format, bytes.Join(red[c.start-1:end], nil), p.config.DocumentJSON)
	if err != nil {
		return "", 0, false
	}
	framed := content.Frame(text, content.NewSource(c.key.Kind, c.key.Identifier, format, raw))
	var h strings.Builder
	// The header stands outside the frame: it names the item by number
	// and lines (the frame's source line names the file) and the unit by
	// identifier characters only.
	fmt.Fprintf(&h, "[%d] lines %d-%d", len(k.out.Items)+1, c.start, end)
	if end < c.end {
		fmt.Fprintf(&h, " (cut; the unit runs to line %d)", c.end)
	}
	if c.unit != "" {
		h.WriteString(": " + c.unit)
	}
	if len(c.retrievers) > 0 {
		h.WriteString(" [found by " + strings.Join(c.retrievers, ", ") + "]")
	}
	h.WriteString("\n")
	h.WriteString(framed.Text)
	h.WriteString("\n")
	return h.String(), p.tokenizer.Count(h.String()), true
}

// commit records a framed item in the pack.
func (p *server) commit(k *pack, c candidate, lines [][]byte, end int, text string, tokens int, cut bool) {
	sum := sha256.Sum256(bytes.Join(lines[c.start-1:end], nil))
	it := packedItem{Kind: c.key.Kind, Identifier: content.SanitizeString(c.key.Identifier), SHA256: hex.EncodeToString(sum[:]),
		StartLine: c.start, EndLine: end, Tokens: tokens, Reason: reasonRetrieved, Retrieval: c.primary,
		Retrievers: slices.Clone(c.retrievers), Unit: c.unit}
	if cut {
		it.Cut, it.FullEndLine = true, c.end
	}
	k.out.Items = append(k.out.Items, it)
	k.spans[c.key] = append(k.spans[c.key], [2]int{c.start, end})
	k.left -= tokens
	k.out.TokensUsed += tokens
	k.text.WriteString(text)
}

// summarize ends the text answer: what was packed, which retrievers ran,
// and, whenever the pack or its index stopped early, where and how to
// narrow or raise it.
func (p *server) summarize(k *pack, runs []retrievalRun, notes []string, budgetCut bool) {
	if len(k.out.Items) == 0 {
		k.text.WriteString("Nothing was packed.\n")
	}
	fmt.Fprintf(&k.text, "Packed %s, %d of %d tokens (%s), ranked over %s (%s).\n",
		catalog.Count(len(k.out.Items), "items"), k.out.TokensUsed, k.out.TokenBudget, k.out.Tokenizer,
		catalog.Count(k.out.Index.Files, "indexed files"), catalog.Count(k.out.Index.Chunks, "units"))
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%s %s (%d packed)", r.Method, r.Status, r.Packed)
	}
	fmt.Fprintf(&k.text, "Retrieval: %s.\n", strings.Join(parts, ", "))
	if n := len(k.out.Dropped); n > 0 {
		fmt.Fprintf(&k.text, "%d pinned items were left out (see dropped in the structured result).\n", n)
	}
	if k.cutAt != "" {
		k.text.WriteString(k.cutAt + "\n")
	}
	if budgetCut && (k.out.Unpacked > 0 || k.cutAt != "") {
		fmt.Fprintf(&k.text, "Stopped early: the %d-token budget ran out with %d of %d ranked units not packed. Raise token_budget (at most ARROWHEAD_PACK_MAX_TOKENS, %d) or ask a narrower question.\n",
			k.out.TokenBudget, k.out.Unpacked, k.out.Candidates, p.config.PackMaxTokens)
	}
	for _, n := range notes {
		k.text.WriteString(n + "\n")
	}
}

// addPinned re-authorizes and packs one pin whole, or records why not. A
// pin larger than what is left of the budget is left out whole, never cut.
func (p *server) addPinned(ctx context.Context, who ports.Principal, k *pack, key ports.WorkingSetItem) error {
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
	if p.addPinnedRange(k, key, lines, 1, len(lines)) {
		k.pinned[key] = true
	}
	return nil
}

// source returns a retrieved source's bytes, read once per call. The
// search or the index only proposed it; what is packed is read, so the
// read grant decides, exactly as for a pin. ok is false when it cannot be
// read now (denied, gone, unreadable): a retrieved candidate is then
// passed over without a trace, since the caller never asked for it.
func (p *server) source(ctx context.Context, who ports.Principal, k *pack, key ports.WorkingSetItem) ([]byte, bool, error) {
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

// addPinnedRange frames lines [start, end] of a pin, redacted, and packs
// it when it fits what is left of the budget; otherwise the pin is left
// out whole and recorded as over_budget, with the digest and lines that
// identify what was left out.
func (p *server) addPinnedRange(k *pack, key ports.WorkingSetItem, lines [][]byte, start, end int) bool {
	c := candidate{key: key, start: start, end: end, unit: reasonPinned}
	text, tokens, ok := p.frameItem(k, c, lines, end)
	sum := sha256.Sum256(bytes.Join(lines[start-1:end], nil))
	dropped := droppedItem{Kind: key.Kind, Identifier: content.SanitizeString(key.Identifier),
		StartLine: start, EndLine: end, SHA256: hex.EncodeToString(sum[:]), Pinned: true}
	switch {
	case !ok:
		dropped.Reason = dropUnreadable
	case tokens > k.left:
		dropped.Reason, dropped.Tokens = dropBudget, tokens
	default:
		p.commit(k, c, lines, end, text, tokens, false)
		k.out.Items[len(k.out.Items)-1].Reason = reasonPinned
		return true
	}
	k.out.Dropped = append(k.out.Dropped, dropped)
	return false
}

// redactedLines are a source's lines (all of them, as read) after the
// secret scanner's line-keeping redaction of the whole source, computed
// once per call (unless ARROWHEAD_REDACT_READS=false): an item that starts
// inside a private key still shows none of it. The manifest's digests stay
// those of the source's own bytes.
func (p *server) redactedLines(k *pack, key ports.WorkingSetItem, lines [][]byte) [][]byte {
	if p.scanner == nil || !p.config.RedactReads {
		return lines
	}
	if red, ok := k.redacted[key]; ok && len(red) == len(lines) {
		return red
	}
	red := splitLines([]byte(p.scanner.RedactLines(string(bytes.Join(lines, nil)))))
	for len(red) < len(lines) {
		// A source without a final newline, or an empty one: keep the
		// count (RedactLines keeps every newline).
		red = append(red, nil)
	}
	k.redacted[key] = red
	return red
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
