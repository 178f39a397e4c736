package telemetry

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// AuditInput is one file (or stream capture) handed to VerifyAuditLog.
type AuditInput struct {
	// Name is how findings name the input (a file name).
	Name string
	R    io.Reader
}

// CheckpointVerifier checks a checkpoint's compact JWS and returns its
// payload; an error means the signature does not verify with the
// auditor's key.
type CheckpointVerifier func(token []byte) ([]byte, error)

// FindingKind names what a finding is.
type FindingKind string

// Finding kinds. The first group is tampering (or damage); the second
// says what no signature vouches for.
const (
	FindingAltered       FindingKind = "altered"        // a line's bytes are not the ones its successor hashed
	FindingDeleted       FindingKind = "deleted"        // seqs missing from a chain
	FindingReordered     FindingKind = "reordered"      // a line stands out of seq order
	FindingInserted      FindingKind = "inserted"       // a line that is not part of its chain
	FindingBadCheckpoint FindingKind = "bad_checkpoint" // a checkpoint whose signature or payload does not hold
	FindingMalformed     FindingKind = "malformed"      // an audit line whose chain fields cannot be read

	FindingUnsigned FindingKind = "unsigned" // lines after the last good checkpoint
	FindingOpen     FindingKind = "open"     // the chain does not end with a shutdown checkpoint
)

// Tampering reports whether the finding shows the log was changed (as
// opposed to lines no checkpoint vouches for yet).
func (k FindingKind) Tampering() bool { return k != FindingUnsigned && k != FindingOpen }

// Finding is one place where a chain does not verify.
type Finding struct {
	Kind    FindingKind
	File    string
	Line    int // 1-based line number in File
	ChainID string
	Seq     uint64
	Message string
}

func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	id := ""
	if f.ChainID != "" {
		id = " chain " + f.ChainID
		if f.Seq > 0 {
			id += fmt.Sprintf(" seq %d", f.Seq)
		}
	}
	return fmt.Sprintf("%s:%s %s: %s", loc, id, f.Kind, f.Message)
}

// ChainReport summarises one chain.
type ChainReport struct {
	ID    string
	Lines int    // lines of the chain found
	First uint64 // lowest and highest seq found
	Last  uint64
	// Checkpoints counts the checkpoints that verify; VouchedSeq is the
	// seq of the last of them (0: none).
	Checkpoints int
	VouchedSeq  uint64
	// Closed: the chain ends with a good shutdown checkpoint.
	Closed bool
}

// AuditReport is what VerifyAuditLog found.
type AuditReport struct {
	Chains   []ChainReport
	Findings []Finding
	// AuditLines counts the chained lines read; Skipped the lines that are
	// not audit lines (operator log, other output).
	AuditLines int
	Skipped    int
}

// Tampered reports whether any finding shows tampering.
func (r *AuditReport) Tampered() bool {
	for _, f := range r.Findings {
		if f.Kind.Tampering() {
			return true
		}
	}
	return false
}

// maxAuditLine bounds one line the verifier reads.
const maxAuditLine = 1 << 20

// entry is one chained line as the verifier keeps it.
type entry struct {
	file     int
	line     int
	seq      uint64
	prev     [sha256.Size]byte
	hash     [sha256.Size]byte
	ckpt     bool // a checkpoint line
	ckptGood bool // its signature and payload hold
	final    bool
	dropped  bool // set aside as inserted or a duplicate
}

// auditFields are the fields the verifier reads from a line.
type auditFields struct {
	Time     string  `json:"time"`
	Msg      string  `json:"msg"`
	Seq      *uint64 `json:"seq"`
	ChainID  *string `json:"chain_id"`
	PrevHash string  `json:"prev_hash"`
	KeyID    string  `json:"kid"`
	JWS      string  `json:"jws"`
	Final    bool    `json:"final"`
}

// VerifyAuditLog reads chained audit lines from inputs (in order; lines of
// one chain split across files must be given oldest first), groups them
// by chain id and reports every place a chain breaks. Lines that are not
// audit lines are counted and skipped. verify checks checkpoint
// signatures. An error is a failure to read an input.
func VerifyAuditLog(inputs []AuditInput, verify CheckpointVerifier) (*AuditReport, error) {
	if verify == nil {
		return nil, errors.New("audit verify: a checkpoint verifier is required")
	}
	v := &verifier{verify: verify, chains: map[string]*chainEntries{}, report: &AuditReport{}}
	for i, in := range inputs {
		v.names = append(v.names, in.Name)
		if err := v.read(i, in.R); err != nil {
			return nil, fmt.Errorf("reading %s: %w", in.Name, err)
		}
	}
	ids := make([]string, 0, len(v.chains))
	for id := range v.chains {
		ids = append(ids, id)
	}
	// Chains in order of first appearance, so a report reads like the log.
	sort.Slice(ids, func(a, b int) bool { return v.chains[ids[a]].firstPos < v.chains[ids[b]].firstPos })
	for _, id := range ids {
		v.checkChain(id, v.chains[id])
	}
	sort.SliceStable(v.report.Findings, func(a, b int) bool {
		fa, fb := v.report.Findings[a], v.report.Findings[b]
		if fa.File != fb.File {
			return v.fileIndex(fa.File) < v.fileIndex(fb.File)
		}
		return fa.Line < fb.Line
	})
	return v.report, nil
}

type chainEntries struct {
	firstPos int
	entries  []*entry
}

type verifier struct {
	verify CheckpointVerifier
	names  []string
	chains map[string]*chainEntries
	pos    int
	report *AuditReport
}

func (v *verifier) fileIndex(name string) int { return slices.Index(v.names, name) }

func (v *verifier) finding(k FindingKind, e *entry, chain, msg string) {
	f := Finding{Kind: k, ChainID: chain, Message: msg}
	if e != nil {
		f.File, f.Line, f.Seq = v.names[e.file], e.line, e.seq
	}
	v.report.Findings = append(v.report.Findings, f)
}

func (v *verifier) at(e *entry) string { return fmt.Sprintf("%s:%d", v.names[e.file], e.line) }

func (v *verifier) read(file int, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it, up to a bound
			// past which the rest is read and the line skipped (an
			// audit line is far shorter).
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if len(long) <= maxAuditLine {
					long = append(long, line...)
				}
			}
			if len(long) > maxAuditLine {
				v.report.Skipped++
				if errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				continue
			}
			line = long
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
		cut := !bytes.HasSuffix(line, []byte{'\n'})
		v.line(file, n, bytes.TrimSuffix(line, []byte{'\n'}), cut)
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// line files one input line: an audit line under its chain, anything else
// counted as skipped. cut is set for a last line without its "\n".
func (v *verifier) line(file, n int, b []byte, cut bool) {
	looksAudit := bytes.Contains(b, []byte(`"`+FieldChainID+`":`)) ||
		bytes.Contains(b, []byte(`"`+FieldMsg+`":"`+AuditMessage+`"`)) ||
		bytes.Contains(b, []byte(`"`+FieldMsg+`":"`+CheckpointMessage+`"`))
	if !looksAudit || len(b) == 0 || b[0] != '{' {
		v.report.Skipped++
		return
	}
	loc := &entry{file: file, line: n}
	var f auditFields
	if err := json.Unmarshal(b, &f); err != nil {
		if cut {
			v.finding(FindingUnsigned, loc, "", "the file ends in the middle of an audit line (cut short)")
			return
		}
		v.finding(FindingMalformed, loc, "", "an audit line that is not valid JSON")
		return
	}
	if f.Msg != AuditMessage && f.Msg != CheckpointMessage && f.ChainID == nil {
		v.report.Skipped++
		return
	}
	if f.ChainID == nil || f.Seq == nil {
		v.finding(FindingInserted, loc, "", "an audit line without chain fields (seq, chain_id, prev_hash)")
		return
	}
	id := *f.ChainID
	e := &entry{file: file, line: n, seq: *f.Seq, hash: sha256.Sum256(b)}
	if id == "" || e.seq == 0 {
		v.finding(FindingMalformed, e, id, "an audit line with an empty chain_id or seq 0")
		return
	}
	if len(f.PrevHash) != hex.EncodedLen(sha256.Size) || strings.ToLower(f.PrevHash) != f.PrevHash {
		v.finding(FindingMalformed, e, id, "prev_hash is not a lower-case hex SHA-256")
		return
	}
	if _, err := hex.Decode(e.prev[:], []byte(f.PrevHash)); err != nil {
		v.finding(FindingMalformed, e, id, "prev_hash is not a lower-case hex SHA-256")
		return
	}
	if f.Msg == CheckpointMessage {
		e.ckpt, e.final = true, f.Final
		e.ckptGood = v.checkpoint(e, id, f)
	}
	v.report.AuditLines++
	c := v.chains[id]
	if c == nil {
		c = &chainEntries{firstPos: v.pos}
		v.chains[id] = c
	}
	v.pos++
	c.entries = append(c.entries, e)
}

// checkpoint verifies a checkpoint line's signature and that what it signs
// is the line's own place in the chain.
func (v *verifier) checkpoint(e *entry, id string, f auditFields) bool {
	payload, err := v.verify([]byte(f.JWS))
	if err != nil {
		v.finding(FindingBadCheckpoint, e, id, fmt.Sprintf("the checkpoint's signature does not verify with the given key (kid %q)", f.KeyID))
		return false
	}
	var p CheckpointPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		v.finding(FindingBadCheckpoint, e, id, "the checkpoint's signed payload cannot be read")
		return false
	}
	if p.ChainID != id || p.Seq != e.seq || p.PrevHash != f.PrevHash || p.Time != f.Time || p.Final != f.Final {
		v.finding(FindingBadCheckpoint, e, id, "the checkpoint line differs from what its signature covers (chain_id, seq, prev_hash, time or final)")
		return false
	}
	return true
}

// checkChain finds every break in one chain.
func (v *verifier) checkChain(id string, c *chainEntries) {
	v.dropDuplicates(id, c.entries)
	live := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		if !e.dropped {
			live = append(live, e)
		}
	}
	v.checkOrder(id, live)

	bySeq := slices.Clone(live)
	slices.SortStableFunc(bySeq, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	v.checkLinks(id, bySeq)

	rep := ChainReport{ID: id, Lines: len(c.entries)}
	if len(bySeq) > 0 {
		rep.First, rep.Last = bySeq[0].seq, bySeq[len(bySeq)-1].seq
	}
	var lastGood *entry
	for _, e := range bySeq {
		if e.ckpt && e.ckptGood {
			rep.Checkpoints++
			lastGood = e
		}
	}
	if len(bySeq) == 0 {
		v.report.Chains = append(v.report.Chains, rep)
		return
	}
	last := bySeq[len(bySeq)-1]
	switch {
	case lastGood == nil:
		v.finding(FindingUnsigned, last, id, fmt.Sprintf("no checkpoint verifies: none of the chain's %d lines is vouched for", len(bySeq)))
	case lastGood == last && last.final:
		rep.Closed = true
	case lastGood == last:
		v.finding(FindingOpen, last, id, fmt.Sprintf("verified up to checkpoint at seq %d; the chain has no shutdown checkpoint (the process is still running or stopped abruptly, or the log was cut after it)", last.seq))
	default:
		after := 0
		for _, e := range bySeq {
			if e.seq > lastGood.seq {
				after++
			}
		}
		v.finding(FindingUnsigned, last, id, fmt.Sprintf("verified up to checkpoint at seq %d (%s); %d lines after it unsigned, and no shutdown checkpoint (the process is still running or stopped abruptly, or the log was cut)", lastGood.seq, v.at(lastGood), after))
	}
	if lastGood != nil {
		rep.VouchedSeq = lastGood.seq
	}
	v.report.Chains = append(v.report.Chains, rep)
}

// dropDuplicates sets aside every line that claims a seq another line of
// the chain holds, keeping the one the chain goes on from: the one whose
// hash the next seq records, else the one that follows from the previous
// seq, else the first.
func (v *verifier) dropDuplicates(id string, entries []*entry) {
	bySeq := make(map[uint64][]*entry, len(entries))
	for _, e := range entries {
		bySeq[e.seq] = append(bySeq[e.seq], e)
	}
	for seq, group := range bySeq {
		if len(group) < 2 {
			continue
		}
		keep := group[0]
		found := false
		for _, g := range group {
			for _, n := range bySeq[seq+1] {
				if n.prev == g.hash {
					keep, found = g, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			for _, g := range group {
				for _, p := range bySeq[seq-1] {
					if g.prev == p.hash {
						keep, found = g, true
					}
				}
				if found {
					break
				}
			}
		}
		for _, g := range group {
			if g == keep {
				continue
			}
			g.dropped = true
			if g.hash == keep.hash {
				v.finding(FindingInserted, g, id, fmt.Sprintf("a second copy of the line at %s", v.at(keep)))
				continue
			}
			v.finding(FindingInserted, g, id, fmt.Sprintf("claims seq %d, which the line at %s holds; the chain does not go on from it", seq, v.at(keep)))
		}
	}
}

// checkOrder names the lines that stand out of seq order in the input:
// the fewest lines whose removal leaves the rest ascending (those outside
// a longest increasing run of seqs).
func (v *verifier) checkOrder(id string, live []*entry) {
	if len(live) < 2 {
		return
	}
	// Patience sorting: tails[k] is the index of the smallest tail of an
	// increasing subsequence of length k+1; back links rebuild it.
	tails := make([]int, 0, 16)
	back := make([]int, len(live))
	for i, e := range live {
		k := sort.Search(len(tails), func(j int) bool { return live[tails[j]].seq >= e.seq })
		if k > 0 {
			back[i] = tails[k-1]
		} else {
			back[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	if len(tails) == len(live) {
		return
	}
	inRun := make([]bool, len(live))
	for i := tails[len(tails)-1]; i >= 0; i = back[i] {
		inRun[i] = true
	}
	// The lines in the run, ascending by seq as they are in the input.
	run := make([]*entry, 0, len(tails))
	for i, e := range live {
		if inRun[i] {
			run = append(run, e)
		}
	}
	for i, e := range live {
		if inRun[i] {
			continue
		}
		where := ""
		if k := sort.Search(len(run), func(j int) bool { return run[j].seq >= e.seq }); k > 0 {
			where = fmt.Sprintf("; it belongs after seq %d at %s", run[k-1].seq, v.at(run[k-1]))
		} else {
			where = fmt.Sprintf("; it belongs before seq %d at %s", run[0].seq, v.at(run[0]))
		}
		v.finding(FindingReordered, e, id, "the line stands out of seq order (lines were reordered)"+where)
	}
}

// checkLinks walks the chain in seq order: seqs must run from 1 without
// gaps and each line must record the hash of the one before.
func (v *verifier) checkLinks(id string, bySeq []*entry) {
	if len(bySeq) == 0 {
		return
	}
	var genesis [sha256.Size]byte
	first := bySeq[0]
	switch {
	case first.seq > 1:
		missing := "seq 1"
		if first.seq > 2 {
			missing = fmt.Sprintf("seq 1 to %d", first.seq-1)
		}
		v.finding(FindingDeleted, first, id, missing+" missing before this line (deleted, or the chain's earlier files were not given)")
	case first.prev != genesis:
		v.finding(FindingAltered, first, id, "the line was altered: seq 1 does not carry the genesis prev_hash")
	}
	// broken[i]: line i does not record the hash of line i-1.
	broken := make([]bool, len(bySeq))
	// A first line whose prev_hash was altered also breaks the link after
	// it: that break is the same finding.
	skipNext := first.seq == 1 && first.prev != genesis
	for i := 1; i < len(bySeq); i++ {
		a, b := bySeq[i-1], bySeq[i]
		if b.seq > a.seq+1 {
			missing := fmt.Sprintf("seq %d", a.seq+1)
			if b.seq-a.seq > 2 {
				missing = fmt.Sprintf("seq %d to %d", a.seq+1, b.seq-1)
			}
			v.finding(FindingDeleted, b, id, fmt.Sprintf("%s missing between seq %d at %s and this line (deleted)", missing, a.seq, v.at(a)))
			continue
		}
		broken[i] = b.prev != a.hash
		if i == 1 && skipNext {
			broken[i] = false
		}
	}
	// One altered line breaks the link after it; a line whose prev_hash was
	// altered also breaks its own. So two breaks in a row name the line
	// between them, and a lone break names the line before it.
	for i := 1; i < len(bySeq); i++ {
		if !broken[i] {
			continue
		}
		a, b := bySeq[i-1], bySeq[i]
		switch {
		case i+1 < len(bySeq) && broken[i+1]:
			v.finding(FindingAltered, b, id, fmt.Sprintf("the line was altered: it does not record the hash of seq %d at %s, and seq %d does not record its hash", a.seq, v.at(a), bySeq[i+1].seq))
			broken[i+1] = false
		case i+1 < len(bySeq) || (b.ckpt && b.ckptGood):
			v.finding(FindingAltered, a, id, fmt.Sprintf("the line was altered: seq %d at %s records a different hash for it", b.seq, v.at(b)))
		default:
			v.finding(FindingAltered, b, id, fmt.Sprintf("the chain's last line does not follow from seq %d at %s: it was inserted or altered, or that line was", a.seq, v.at(a)))
		}
	}
}
