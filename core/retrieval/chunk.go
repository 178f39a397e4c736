package retrieval

import (
	"bytes"
	"path"
	"slices"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Chunk kinds that are not a symbol's own kind.
const (
	KindSection = "section" // a document section, from its heading to the next
	KindBlock   = "block"   // code between definitions (imports, constants, ...)
	KindText    = "text"    // a run of lines of a file with neither
)

// Chunking bounds, in lines.
const (
	// splitClassLines: a class (or other definition holding definitions)
	// longer than this is cut into its header and its members.
	splitClassLines = 80
	// maxBlockLines caps a block, section or text chunk; a longer one is
	// cut at blank lines.
	maxBlockLines = 60
	// heuristicSpanLines is the most a definition whose end the extractor
	// could not tell is taken to run.
	heuristicSpanLines = 60
)

// Chunk is one retrievable unit of a file: a whole definition (with its
// doc comment), a document section, or a run of lines between them.
type Chunk struct {
	// Start and End are the chunk's lines, 1-based and inclusive.
	Start, End int
	// DefLine is the line of the definition's keyword (0 when the chunk
	// is not a definition).
	DefLine int
	Kind    string
	// Name is the symbol's name or the section's heading.
	Name   string
	Parent string
}

// splitLines cuts content into lines without their newlines.
func splitLines(content []byte) [][]byte {
	lines := bytes.Split(content, []byte("\n"))
	if n := len(lines); n > 1 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	return lines
}

// isDocument reports a file whose chunks are its sections.
func isDocument(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".rst", ".txt", ".adoc":
		return true
	}
	return false
}

// chunkFile cuts a file into chunks covering every non-blank line once.
func chunkFile(p string, lines [][]byte, symbols []ports.Symbol) []Chunk {
	if len(lines) == 0 {
		return nil
	}
	var defs []Chunk
	if isDocument(p) {
		return sections(lines)
	}
	defs = definitions(lines, symbols)
	var out []Chunk
	next := 1
	for _, d := range defs {
		if d.Start > next {
			out = append(out, blocks(lines, next, d.Start-1, KindBlock)...)
		}
		out = append(out, d)
		next = d.End + 1
	}
	if next <= len(lines) {
		kind := KindBlock
		if len(defs) == 0 {
			kind = KindText
		}
		out = append(out, blocks(lines, next, len(lines), kind)...)
	}
	return out
}

// definitions turns symbols into non-overlapping definition chunks in
// line order: each outermost definition whole, with its doc comment and
// decorators, except that a long one holding others (a class and its
// methods) becomes its header plus one chunk per member.
func definitions(lines [][]byte, symbols []ports.Symbol) []Chunk {
	syms := slices.Clone(symbols)
	slices.SortStableFunc(syms, func(a, b ports.Symbol) int { return a.StartLine - b.StartLine })
	n := len(lines)
	// Give a definition whose end is unknown the lines up to the next one.
	for i := range syms {
		s := &syms[i]
		s.StartLine = min(max(s.StartLine, 1), n)
		if s.EndLine <= s.StartLine {
			end := min(s.StartLine+heuristicSpanLines-1, n)
			if i+1 < len(syms) && syms[i+1].StartLine > s.StartLine {
				end = min(end, syms[i+1].StartLine-1)
			}
			s.EndLine = end
		}
		s.EndLine = min(s.EndLine, n)
	}
	var out []Chunk
	covered := 0 // last line already in a chunk
	for i := 0; i < len(syms); i++ {
		s := syms[i]
		if s.StartLine <= covered {
			continue // nested in a definition already taken whole
		}
		var members []ports.Symbol
		for j := i + 1; j < len(syms) && syms[j].StartLine <= s.EndLine; j++ {
			if syms[j].EndLine <= s.EndLine && (len(members) == 0 || syms[j].StartLine > members[len(members)-1].EndLine) {
				members = append(members, syms[j])
			}
		}
		if s.EndLine-s.StartLine+1 <= splitClassLines || len(members) == 0 {
			out = append(out, defChunk(lines, s, covered))
			covered = s.EndLine
			continue
		}
		head := defChunk(lines, s, covered)
		head.End = docStart(lines, members[0].StartLine, s.StartLine) - 1
		out = append(out, head)
		covered = head.End
		for k, m := range members {
			c := defChunk(lines, m, covered)
			if k == len(members)-1 {
				c.End = s.EndLine // the class's tail goes with its last member
			}
			out = append(out, c)
			covered = c.End
		}
	}
	return out
}

// defChunk is one definition's chunk, starting at its doc comment (but not
// before line after).
func defChunk(lines [][]byte, s ports.Symbol, after int) Chunk {
	return Chunk{Start: docStart(lines, s.StartLine, after+1), End: s.EndLine, DefLine: s.StartLine, Kind: s.Kind, Name: s.Name, Parent: s.Parent}
}

// docStart walks up from a definition's line over the comment and
// decorator lines directly above it, not above floor.
func docStart(lines [][]byte, def, floor int) int {
	start := def
	for start-1 >= max(floor, 1) {
		t := bytes.TrimSpace(lines[start-2])
		if len(t) == 0 || !(bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("#")) || bytes.HasPrefix(t, []byte("/*")) ||
			bytes.HasPrefix(t, []byte("*")) || bytes.HasPrefix(t, []byte("@")) || bytes.HasPrefix(t, []byte("///"))) {
			break
		}
		start--
	}
	return start
}

// sections cuts a document at its Markdown (or RST-underlined) headings.
func sections(lines [][]byte) []Chunk {
	var out []Chunk
	start, heading := 1, ""
	flush := func(end int) {
		for _, c := range blocks(lines, start, end, KindSection) {
			c.Name = heading
			out = append(out, c)
		}
	}
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("#")) && i+1 > start {
			flush(i)
			start = i + 1
		}
		if bytes.HasPrefix(t, []byte("#")) {
			heading = strings.TrimSpace(strings.TrimLeft(string(t), "#"))
		}
	}
	flush(len(lines))
	return out
}

// blocks cuts lines [start, end] into chunks of at most maxBlockLines,
// each ending at a blank line where there is one, with blank lines at
// either end left out and all-blank runs dropped.
func blocks(lines [][]byte, start, end int, kind string) []Chunk {
	blank := func(i int) bool { return len(bytes.TrimSpace(lines[i-1])) == 0 }
	var out []Chunk
	for start <= end {
		for start <= end && blank(start) {
			start++
		}
		if start > end {
			break
		}
		stop := min(end, start+maxBlockLines-1)
		if stop < end {
			for cut := stop; cut > start+maxBlockLines/2; cut-- {
				if blank(cut) {
					stop = cut - 1
					break
				}
			}
		}
		last := stop
		for last > start && blank(last) {
			last--
		}
		out = append(out, Chunk{Start: start, End: last, Kind: kind})
		start = stop + 1
	}
	return out
}
