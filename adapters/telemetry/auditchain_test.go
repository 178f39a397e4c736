package telemetry

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/ports"
)

func newKey(t testing.TB) *signing.Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := signing.New(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// verifierFor checks checkpoints against k's public half, as an auditor
// holding the published JWK does.
func verifierFor(t testing.TB, k *signing.Key) CheckpointVerifier {
	t.Helper()
	pub, err := signing.PublicKeyOf(k.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	return func(token []byte) ([]byte, error) { return signing.Verify(token, pub) }
}

func chainRecord(i int) ports.AuditRecord {
	return ports.AuditRecord{
		Time: time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond), Subject: "alice",
		Kind: ports.ComponentTool, Name: fmt.Sprintf("tool%d", i%50),
		ArgShapes: map[string]string{"expression": "string(12)"},
		Status:    ports.StatusOK, Latency: time.Millisecond,
	}
}

// logFile is one input as lines (without their "\n").
type logFile struct {
	name  string
	lines []string
}

func (f logFile) text() string {
	if len(f.lines) == 0 {
		return ""
	}
	return strings.Join(f.lines, "\n") + "\n"
}

func verifyFiles(t *testing.T, verify CheckpointVerifier, files ...logFile) *AuditReport {
	t.Helper()
	in := make([]AuditInput, len(files))
	for i, f := range files {
		in[i] = AuditInput{Name: f.name, R: strings.NewReader(f.text())}
	}
	rep, err := VerifyAuditLog(in, verify)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// replicaLog is the audit log of three replicas: two write into one
// stream (as two processes sharing a log drain would, with operator log
// lines between), the third into its own file. total records are written
// by four goroutines per replica.
func replicaLog(t *testing.T, k *signing.Key, total int) (shared, own logFile, ids [3]string) {
	t.Helper()
	var sharedBuf, ownBuf syncBuffer
	writers := []io.Writer{&sharedBuf, &sharedBuf, &ownBuf}
	sinks := make([]*AuditSink, 3)
	for i := range sinks {
		s, err := NewChainedAuditSink(writers[i], Chain{Signer: k, CheckpointLines: 1000, CheckpointInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		sinks[i], ids[i] = s, s.ChainID()
	}
	const workers = 4
	per := total / (3 * workers)
	var wg sync.WaitGroup
	n := 0
	for r := range 3 {
		for w := range workers {
			count := per
			if r == 2 && w == workers-1 {
				count = total - n // the remainder, so exactly total lines
			}
			n += count
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for i := range count {
					sinks[r].Record(ctx, chainRecord(i))
					if r == 0 && i%997 == 0 {
						// An operator log line in the same stream.
						fmt.Fprintf(&sharedBuf, `{"time":"2026-12-02T06:00:00Z","level":"info","msg":"session opened","n":%d}`+"\n", i)
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range sinks {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return logFile{"shared.log", splitLines(sharedBuf.Bytes())}, logFile{"replica3.log", splitLines(ownBuf.Bytes())}, ids
}

// lineInfo reads a chained line's fields.
func lineInfo(t *testing.T, l string) (msg, chain string, seq uint64) {
	t.Helper()
	var f auditFields
	if err := json.Unmarshal([]byte(l), &f); err != nil || f.ChainID == nil || f.Seq == nil {
		return "", "", 0
	}
	return f.Msg, *f.ChainID, *f.Seq
}

// find returns the index of the n-th (from 0) plain audit line of chain
// in lines.
func find(t *testing.T, lines []string, chain string, n int) int {
	t.Helper()
	want := n
	for i, l := range lines {
		msg, c, _ := lineInfo(t, l)
		if c == chain && msg == AuditMessage {
			if n == 0 {
				return i
			}
			n--
		}
	}
	t.Fatalf("chain %s has no audit line %d", chain, want)
	return -1
}

func next(t *testing.T, lines []string, chain string, from int) int {
	t.Helper()
	for i := from + 1; i < len(lines); i++ {
		if _, c, _ := lineInfo(t, lines[i]); c == chain {
			return i
		}
	}
	t.Fatalf("chain %s has no line after %d", chain, from)
	return -1
}

// only asserts the report holds exactly the one finding described.
func only(t *testing.T, rep *AuditReport, kind FindingKind, file string, line int, chain string, seq uint64, msgPart string) {
	t.Helper()
	if len(rep.Findings) != 1 {
		t.Fatalf("want one %s finding at %s:%d, got %d:\n%s", kind, file, line, len(rep.Findings), findings(rep))
	}
	f := rep.Findings[0]
	if f.Kind != kind || f.File != file || f.Line != line || f.ChainID != chain || f.Seq != seq || !strings.Contains(f.Message, msgPart) {
		t.Fatalf("want %s at %s:%d chain %s seq %d (%q), got %s", kind, file, line, chain, seq, msgPart, f)
	}
}

func findings(rep *AuditReport) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

func TestAuditChainThreeReplicasAndEachTampering(t *testing.T) {
	k := newKey(t)
	verify := verifierFor(t, k)
	total := 100_000
	if raceEnabled {
		// The race detector slows hashing and parsing tenfold; the
		// concurrency is the same.
		total = 10_000
	}
	shared, own, ids := replicaLog(t, k, total)

	rep := verifyFiles(t, verify, shared, own)
	if len(rep.Findings) != 0 {
		t.Fatalf("an untouched log has findings:\n%s", findings(rep))
	}
	if len(rep.Chains) != 3 {
		t.Fatalf("want 3 chains, got %d", len(rep.Chains))
	}
	records, checkpoints := 0, 0
	for _, c := range rep.Chains {
		if !c.Closed || c.First != 1 || c.Last != uint64(c.Lines) || c.VouchedSeq != c.Last {
			t.Fatalf("chain %+v is not whole and closed", c)
		}
		records += c.Lines - c.Checkpoints
		checkpoints += c.Checkpoints
	}
	if records != total || rep.AuditLines != total+checkpoints {
		t.Fatalf("want %d records, got %d (%d lines, %d checkpoints)", total, records, rep.AuditLines, checkpoints)
	}
	// One checkpoint per 1000 lines of a chain, plus the final one.
	if checkpoints < total/1000 || checkpoints > total/1000+6 {
		t.Fatalf("%d checkpoints for %d lines", checkpoints, total)
	}
	if rep.Skipped == 0 {
		t.Fatal("the operator lines in the shared stream were not counted as skipped")
	}

	a, c := ids[0], ids[2]
	// at places a tampering at a fraction of a chain's lines.
	at := func(frac float64) int { return int(float64(total/3) * frac) }
	edit := func(lines []string, i int, f func(string) string) []string {
		out := append([]string(nil), lines...)
		out[i] = f(out[i])
		return out
	}

	t.Run("edited line", func(t *testing.T) {
		i := find(t, shared.lines, a, at(0.15))
		_, _, seq := lineInfo(t, shared.lines[i])
		lines := edit(shared.lines, i, func(l string) string {
			return strings.Replace(l, `"status":"ok"`, `"status":"refused"`, 1)
		})
		rep := verifyFiles(t, verify, logFile{shared.name, lines})
		only(t, rep, FindingAltered, shared.name, i+1, a, seq, "altered")
	})

	t.Run("edited prev_hash", func(t *testing.T) {
		i := find(t, own.lines, c, at(0.02))
		_, _, seq := lineInfo(t, own.lines[i])
		lines := edit(own.lines, i, func(l string) string {
			j := strings.Index(l, `"prev_hash":"`) + len(`"prev_hash":"`)
			return l[:j] + strings.Repeat("a", 64) + l[j+64:]
		})
		rep := verifyFiles(t, verify, logFile{own.name, lines})
		only(t, rep, FindingAltered, own.name, i+1, c, seq, "altered")
	})

	t.Run("deleted line", func(t *testing.T) {
		i := find(t, shared.lines, a, at(0.1))
		_, _, seq := lineInfo(t, shared.lines[i])
		j := next(t, shared.lines, a, i)
		lines := append(append([]string(nil), shared.lines[:i]...), shared.lines[i+1:]...)
		rep := verifyFiles(t, verify, logFile{shared.name, lines})
		// Found at the line after the gap, which moved up by one.
		only(t, rep, FindingDeleted, shared.name, j, a, seq+1, fmt.Sprintf("seq %d missing", seq))
	})

	t.Run("reordered lines", func(t *testing.T) {
		i := find(t, own.lines, c, at(0.13))
		j := next(t, own.lines, c, i)
		_, _, si := lineInfo(t, own.lines[i])
		lines := append([]string(nil), own.lines...)
		lines[i], lines[j] = lines[j], lines[i]
		rep := verifyFiles(t, verify, logFile{own.name, lines})
		if len(rep.Findings) != 1 {
			t.Fatalf("want one finding, got:\n%s", findings(rep))
		}
		f := rep.Findings[0]
		// Either of the swapped lines is the one out of place.
		ok := (f.Line == i+1 && f.Seq == si+1) || (f.Line == j+1 && f.Seq == si)
		if f.Kind != FindingReordered || f.File != own.name || f.ChainID != c || !ok {
			t.Fatalf("want a reordering at %s:%d or :%d, got %s", own.name, i+1, j+1, f)
		}
	})

	t.Run("inserted forged line", func(t *testing.T) {
		// A forger copies a line's chain fields onto a line of their own
		// and puts it next to the original.
		i := find(t, shared.lines, a, at(0.18))
		_, _, seq := lineInfo(t, shared.lines[i])
		forged := strings.Replace(shared.lines[i], `"subject":"alice"`, `"subject":"mallory"`, 1)
		lines := append(append(append([]string(nil), shared.lines[:i+1]...), forged), shared.lines[i+1:]...)
		rep := verifyFiles(t, verify, logFile{shared.name, lines})
		only(t, rep, FindingInserted, shared.name, i+2, a, seq, "does not go on from it")
	})

	t.Run("inserted line that links", func(t *testing.T) {
		// The forger computes the hash of the line before, so the forged
		// line links to it; it still cannot take the next line's place.
		i := find(t, own.lines, c, 100)
		_, _, seq := lineInfo(t, own.lines[i])
		sum := sha256.Sum256([]byte(own.lines[i]))
		next := own.lines[i+1]
		j := strings.Index(next, `"prev_hash":"`) + len(`"prev_hash":"`)
		forged := strings.Replace(next[:j]+hex.EncodeToString(sum[:])+next[j+64:], `"subject":"alice"`, `"subject":"mallory"`, 1)
		lines := append(append(append([]string(nil), own.lines[:i+1]...), forged), own.lines[i+1:]...)
		rep := verifyFiles(t, verify, logFile{own.name, lines})
		only(t, rep, FindingInserted, own.name, i+2, c, seq+1, "does not go on from it")
	})

	t.Run("inserted unchained line", func(t *testing.T) {
		i := find(t, shared.lines, a, 10)
		forged := `{"time":"2026-12-02T06:00:00Z","level":"info","msg":"audit","subject":"mallory","component":"tool","name":"x","args":{},"status":"ok"}`
		lines := append(append(append([]string(nil), shared.lines[:i]...), forged), shared.lines[i:]...)
		rep := verifyFiles(t, verify, logFile{shared.name, lines})
		only(t, rep, FindingInserted, shared.name, i+1, "", 0, "without chain fields")
	})

	t.Run("truncated tail", func(t *testing.T) {
		i := find(t, own.lines, c, at(0.75))
		lines := own.lines[:i+1]
		// The last checkpoint left and the lines after it.
		var ckptSeq uint64
		ckptLine, after := 0, 0
		for n, l := range lines {
			msg, _, seq := lineInfo(t, l)
			if msg == CheckpointMessage {
				ckptSeq, ckptLine, after = seq, n+1, 0
			} else {
				after++
			}
		}
		_, _, lastSeq := lineInfo(t, lines[len(lines)-1])
		rep := verifyFiles(t, verify, logFile{own.name, lines})
		only(t, rep, FindingUnsigned, own.name, len(lines), c, lastSeq,
			fmt.Sprintf("verified up to checkpoint at seq %d (%s:%d); %d lines after it unsigned", ckptSeq, own.name, ckptLine, after))
		if rep.Tampered() {
			t.Fatal("a cut tail is reported, not as tampering")
		}
	})

	t.Run("truncated at a checkpoint", func(t *testing.T) {
		var cut int
		for n, l := range own.lines {
			if msg, _, seq := lineInfo(t, l); msg == CheckpointMessage && seq > uint64(at(0.06)) {
				cut = n
				break
			}
		}
		_, _, seq := lineInfo(t, own.lines[cut])
		rep := verifyFiles(t, verify, logFile{own.name, own.lines[:cut+1]})
		only(t, rep, FindingOpen, own.name, cut+1, c, seq, "no shutdown checkpoint")
	})

	t.Run("cut mid-line", func(t *testing.T) {
		text := own.text()
		text = text[:len(text)-40]
		rep, err := VerifyAuditLog([]AuditInput{{Name: own.name, R: strings.NewReader(text)}}, verify)
		if err != nil {
			t.Fatal(err)
		}
		// The final checkpoint is cut: the lines after the one before it
		// are unsigned, and the cut line is named.
		f := rep.Findings
		if rep.Tampered() || len(f) != 2 || f[0].Kind != FindingUnsigned || f[1].Kind != FindingUnsigned ||
			f[1].Line != len(own.lines) || !strings.Contains(f[1].Message, "cut short") {
			t.Fatalf("want the unsigned tail and the cut line, got:\n%s", findings(rep))
		}
	})

	t.Run("checkpoints signed by another key", func(t *testing.T) {
		rep := verifyFiles(t, verifierFor(t, newKey(t)), logFile{own.name, own.lines})
		bad := 0
		for _, f := range rep.Findings {
			if f.Kind == FindingBadCheckpoint {
				bad++
			}
		}
		if bad != rep.Chains[0].Lines-countRecords(t, own.lines) || !rep.Tampered() || rep.Chains[0].Checkpoints != 0 {
			t.Fatalf("%d bad checkpoints:\n%s", bad, findings(rep))
		}
	})

	t.Run("forged checkpoint", func(t *testing.T) {
		// Another key signs a payload that matches the line: the
		// signature is what fails.
		other := newKey(t)
		i := find(t, own.lines, c, at(0.045))
		for msg, _, _ := lineInfo(t, own.lines[i]); msg != CheckpointMessage; msg, _, _ = lineInfo(t, own.lines[i]) {
			i++
		}
		var f auditFields
		if err := json.Unmarshal([]byte(own.lines[i]), &f); err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(CheckpointPayload{ChainID: c, Seq: *f.Seq, PrevHash: f.PrevHash, Time: f.Time, Final: f.Final})
		token, err := other.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		lines := edit(own.lines, i, func(l string) string { return strings.Replace(l, f.JWS, token, 1) })
		rep := verifyFiles(t, verify, logFile{own.name, lines})
		kinds := map[FindingKind]int{}
		for _, g := range rep.Findings {
			if g.Line != i+1 {
				t.Fatalf("a finding away from the forged checkpoint: %s", g)
			}
			kinds[g.Kind]++
		}
		if kinds[FindingBadCheckpoint] != 1 || kinds[FindingAltered] != 1 || len(rep.Findings) != 2 {
			t.Fatalf("want the bad signature and the broken link at %s:%d, got:\n%s", own.name, i+1, findings(rep))
		}
	})
}

func countRecords(t *testing.T, lines []string) int {
	n := 0
	for _, l := range lines {
		if msg, _, _ := lineInfo(t, l); msg == AuditMessage {
			n++
		}
	}
	return n
}

// TestChainedLineIsTheUnchainedLinePlusChainFields: the chain only adds
// fields, at the end, and each prev_hash is the SHA-256 of the line before
// as written (checked here with the standard library alone).
func TestChainedLineIsTheUnchainedLinePlusChainFields(t *testing.T) {
	k := newKey(t)
	var plain, chained bytes.Buffer
	ps := NewAuditSink(&plain)
	cs, err := NewChainedAuditSink(&chained, Chain{Signer: k, CheckpointLines: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ps.Record(context.Background(), chainRecord(i))
		cs.Record(context.Background(), chainRecord(i))
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	want := splitLines(plain.Bytes())
	got := splitLines(chained.Bytes())
	// 3 records, a checkpoint after the second, the final one.
	if len(got) != 5 {
		t.Fatalf("want 5 lines, got %d:\n%s", len(got), chained.String())
	}
	prev := GenesisHash
	rec := 0
	for n, l := range got {
		suffix := fmt.Sprintf(`,"seq":%d,"chain_id":"%s","prev_hash":"%s"}`, n+1, cs.ChainID(), prev)
		if !strings.HasSuffix(l, suffix) {
			t.Fatalf("line %d does not end with the chain fields %s:\n%s", n+1, suffix, l)
		}
		msg, _, _ := lineInfo(t, l)
		switch msg {
		case AuditMessage:
			if l[:len(l)-len(suffix)]+"}" != want[rec] {
				t.Fatalf("chained line %d differs from the unchained line beyond the chain fields:\n%s\n%s", n+1, l, want[rec])
			}
			rec++
		case CheckpointMessage:
			var f auditFields
			if err := json.Unmarshal([]byte(l), &f); err != nil {
				t.Fatal(err)
			}
			if f.KeyID != k.KeyID() || f.Final != (n == 4) {
				t.Fatalf("checkpoint line %d: kid %q final %v", n+1, f.KeyID, f.Final)
			}
		default:
			t.Fatalf("line %d: msg %q", n+1, msg)
		}
		sum := sha256.Sum256([]byte(l))
		prev = hex.EncodeToString(sum[:])
	}
	if rec != 3 || !strings.Contains(got[2], `"msg":"audit_checkpoint"`) {
		t.Fatalf("checkpoint not after the second line:\n%s", chained.String())
	}
}

func TestCheckpointEveryInterval(t *testing.T) {
	k := newKey(t)
	var buf syncBuffer
	s, err := NewChainedAuditSink(&buf, Chain{Signer: k, CheckpointLines: 1000, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Record(context.Background(), chainRecord(0))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), CheckpointMessage) {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint after the interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A quiet chain gets no more checkpoints: nothing new to vouch for.
	time.Sleep(100 * time.Millisecond)
	if n := len(splitLines(buf.Bytes())); n != 2 {
		t.Fatalf("want the line and one checkpoint, got %d lines:\n%s", n, buf.String())
	}
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", splitLines(buf.Bytes())})
	only(t, rep, FindingOpen, "a.log", 2, s.ChainID(), 2, "no shutdown checkpoint")
}

func TestCloseWritesFinalCheckpointAndKeepsChainingAfter(t *testing.T) {
	k := newKey(t)
	var buf syncBuffer
	s, err := NewChainedAuditSink(&buf, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(buf.Bytes()) != 0 {
		t.Fatalf("an empty chain wrote at close: %s", buf.String())
	}
	// A call finishing after the close is still chained and closed.
	s.Record(context.Background(), chainRecord(1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := splitLines(buf.Bytes())
	if len(lines) != 2 {
		t.Fatalf("want the line and its final checkpoint, got:\n%s", buf.String())
	}
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", lines})
	if len(rep.Findings) != 0 || !rep.Chains[0].Closed {
		t.Fatalf("findings:\n%s", findings(rep))
	}
}

// TestChainConcurrentWithTicker records from many goroutines while the
// ticker checkpoints and the sink closes (run under -race): the lines go
// out in groups, and every record is in the chain exactly once.
func TestChainConcurrentWithTicker(t *testing.T) {
	k := newKey(t)
	var buf syncBuffer
	s, err := NewChainedAuditSink(&buf, Chain{Signer: k, CheckpointLines: 7, CheckpointInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 32, 150
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.Record(context.Background(), chainRecord(g*1000+i))
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := splitLines(buf.Bytes())
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", lines})
	if len(rep.Findings) != 0 || len(rep.Chains) != 1 || !rep.Chains[0].Closed || rep.Chains[0].Lines-rep.Chains[0].Checkpoints != writers*each {
		t.Fatalf("chains %+v findings:\n%s", rep.Chains, findings(rep))
	}
	seen := map[string]int{}
	for _, l := range lines {
		var f struct{ Msg, Time string }
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		if f.Msg == AuditMessage {
			seen[f.Time]++
		}
	}
	for g := range writers {
		for i := range each {
			at := chainRecord(g*1000 + i).Time.Format(time.RFC3339Nano)
			if seen[at] != 1 {
				t.Fatalf("record %d of writer %d is in the log %d times", i, g, seen[at])
			}
		}
	}
}

func TestChainedSinkFailsClosed(t *testing.T) {
	if _, err := NewChainedAuditSink(io.Discard, Chain{}); err == nil {
		t.Fatal("a chained sink without a signer was built")
	}
	if _, err := NewChainedAuditSink(io.Discard, Chain{Signer: newKey(t), CheckpointLines: -1}); err == nil {
		t.Fatal("a negative checkpoint spacing was accepted")
	}
}

// A failed write does not advance the chain: the next line takes its seq.
func TestChainFailedWriteDoesNotAdvance(t *testing.T) {
	k := newKey(t)
	w := &failingWriter{}
	s, err := NewChainedAuditSink(w, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	s.Record(context.Background(), chainRecord(0))
	w.fail = true
	s.Record(context.Background(), chainRecord(1))
	w.fail = false
	s.Record(context.Background(), chainRecord(2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", splitLines(w.buf.Bytes())})
	if len(rep.Findings) != 0 || rep.Chains[0].Lines != 3 {
		t.Fatalf("chains %+v findings:\n%s", rep.Chains, findings(rep))
	}
}

type failingWriter struct {
	buf  bytes.Buffer
	fail bool
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.fail {
		return 0, io.ErrShortWrite
	}
	return w.buf.Write(p)
}

func smallLog(t *testing.T, k *signing.Key, n int) (logFile, string) {
	t.Helper()
	var buf bytes.Buffer
	s, err := NewChainedAuditSink(&buf, Chain{Signer: k, CheckpointLines: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		s.Record(context.Background(), chainRecord(i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return logFile{"a.log", splitLines(buf.Bytes())}, s.ChainID()
}

func TestVerifyLocatesFirstLineAndReplayedLine(t *testing.T) {
	k := newKey(t)
	verify := verifierFor(t, k)
	log, id := smallLog(t, k, 25)

	t.Run("first line's prev_hash", func(t *testing.T) {
		lines := append([]string(nil), log.lines...)
		lines[0] = strings.Replace(lines[0], GenesisHash, strings.Repeat("1", 64), 1)
		only(t, verifyFiles(t, verify, logFile{log.name, lines}), FindingAltered, log.name, 1, id, 1, "genesis")
	})
	t.Run("first line deleted", func(t *testing.T) {
		only(t, verifyFiles(t, verify, logFile{log.name, log.lines[1:]}), FindingDeleted, log.name, 1, id, 2, "seq 1 missing before")
	})
	t.Run("a line written twice", func(t *testing.T) {
		lines := append(append(append([]string(nil), log.lines[:8]...), log.lines[4]), log.lines[8:]...)
		only(t, verifyFiles(t, verify, logFile{log.name, lines}), FindingInserted, log.name, 9, id, 5, "a second copy of the line at a.log:5")
	})
	t.Run("a line moved to the front", func(t *testing.T) {
		lines := append([]string{log.lines[6]}, append(append([]string(nil), log.lines[:6]...), log.lines[7:]...)...)
		only(t, verifyFiles(t, verify, logFile{log.name, lines}), FindingReordered, log.name, 1, id, 7, "belongs after seq 6 at a.log:7")
	})
	t.Run("long foreign lines keep line numbers", func(t *testing.T) {
		// Lines longer than the read buffer and than the verifier's bound
		// are skipped whole; later findings keep their line numbers.
		lines := append([]string{strings.Repeat("x", 200<<10), strings.Repeat("y", 2<<20)}, log.lines...)
		lines[13] = strings.Replace(lines[13], `"status":"ok"`, `"status":"error"`, 1)
		rep := verifyFiles(t, verify, logFile{log.name, lines})
		only(t, rep, FindingAltered, log.name, 14, id, 12, "altered")
		if rep.Skipped != 2 {
			t.Fatalf("skipped %d", rep.Skipped)
		}
	})
	t.Run("the last plain line edited", func(t *testing.T) {
		// The line before the shutdown checkpoint: the checkpoint's
		// signature vouches for the hash it records.
		i := len(log.lines) - 2
		lines := append([]string(nil), log.lines...)
		lines[i] = strings.Replace(lines[i], `"status":"ok"`, `"status":"error"`, 1)
		only(t, verifyFiles(t, verify, logFile{log.name, lines}), FindingAltered, log.name, i+1, id, uint64(i+1), "altered")
	})
}

// gateWriter holds its first Write until open is closed, so the test can
// queue lines behind it, and keeps each Write's bytes apart. A Write
// numbered failAt (from 1) writes only its first short bytes and fails.
type gateWriter struct {
	open   chan struct{}
	failAt int
	short  int

	mu     sync.Mutex
	writes [][]byte
}

func newGateWriter() *gateWriter { return &gateWriter{open: make(chan struct{})} }

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n := len(w.writes) + 1
	w.mu.Unlock()
	if n == 1 {
		<-w.open
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n == w.failAt {
		w.writes = append(w.writes, bytes.Clone(p[:w.short]))
		return w.short, io.ErrShortWrite
	}
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

func (w *gateWriter) all() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Join(w.writes, nil)
}

// waitQueued waits until n ops are in c's queue (the one writing and the
// ones waiting behind it).
func waitQueued(t *testing.T, c *chainWriter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ops queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedSink is a chained sink writing to a new gateWriter.
func gatedSink(t *testing.T) (*signing.Key, *gateWriter, *AuditSink) {
	t.Helper()
	k := newKey(t)
	w := newGateWriter()
	s, err := NewChainedAuditSink(w, Chain{Signer: k})
	if err != nil {
		t.Fatal(err)
	}
	return k, w, s
}

// verifyClosed verifies lines as one chain of n lines that ends with its
// final checkpoint.
func verifyClosed(t *testing.T, k *signing.Key, lines []string, n int) {
	t.Helper()
	rep := verifyFiles(t, verifierFor(t, k), logFile{"a.log", lines})
	if len(rep.Findings) != 0 || len(rep.Chains) != 1 || !rep.Chains[0].Closed || rep.Chains[0].Lines != n {
		t.Fatalf("chains %+v findings:\n%s", rep.Chains, findings(rep))
	}
}

// encodedLine is record i as the sink's encoder hands it to the chain.
func encodedLine(i int) []byte {
	var b bytes.Buffer
	NewAuditSink(&b).Record(context.Background(), chainRecord(i))
	return b.Bytes()
}

// The lines queued while a write is under way go out together, in one
// Write, chained in the order they queued; each Write returns once its
// line is written.
func TestChainQueuedLinesShareOneWrite(t *testing.T) {
	k, w, s := gatedSink(t)
	var wg sync.WaitGroup
	record := func(i int) {
		wg.Add(1)
		go func() { defer wg.Done(); s.Record(context.Background(), chainRecord(i)) }()
	}
	record(0)
	waitQueued(t, s.chain, 1)
	for i := 1; i <= 10; i++ {
		record(i)
	}
	waitQueued(t, s.chain, 11)
	close(w.open)
	wg.Wait()
	if n := len(w.writes); n != 2 || len(splitLines(w.writes[1])) != 10 {
		t.Fatalf("%d writes, want the first line alone and the 10 queued behind it in one", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	verifyClosed(t, k, splitLines(w.all()), 12)
}

// Close queues behind the lines already waiting: they are written, then
// the final checkpoint, and the ticker goroutine has ended when it
// returns.
func TestChainCloseDrainsQueuedLines(t *testing.T) {
	k, w, s := gatedSink(t)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Record(context.Background(), chainRecord(i)) }()
		waitQueued(t, s.chain, i+1)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	waitQueued(t, s.chain, 7)
	close(w.open)
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.chain.done:
	default:
		t.Fatal("the ticker goroutine outlived Close")
	}
	lines := splitLines(w.all())
	if msg, _, seq := lineInfo(t, lines[len(lines)-1]); msg != CheckpointMessage || seq != 7 {
		t.Fatalf("last line is %q seq %d, want the final checkpoint after the 6 lines", msg, seq)
	}
	verifyClosed(t, k, lines, 7)
}

// A group whose write fails part-way: each Write whose line was written
// whole returns success, the others the writer's error, and the chain
// advances past the whole lines only, so the next line takes the seq of
// the first one lost and chains onto the last one written.
func TestChainFailedGroupWriteAdvancesByWholeLines(t *testing.T) {
	_, w, s := gatedSink(t)
	c := s.chain
	line := encodedLine(0)
	// The chained lines of the group have equal lengths: the same record
	// with seq 2 to 11 and a prev_hash.
	chained := len(line) + len(`,"seq":2,"chain_id":"","prev_hash":""`) + len(c.id) + 64
	w.failAt, w.short = 2, 3*chained+chained/2

	results := make(chan error, 11)
	write := func() {
		go func() {
			_, err := c.Write(line)
			results <- err
		}()
	}
	write()
	waitQueued(t, c, 1)
	for range 10 {
		write()
	}
	waitQueued(t, c, 11)
	close(w.open)
	var ok, failed int
	for range 11 {
		switch err := <-results; {
		case err == nil:
			ok++
		case errors.Is(err, io.ErrShortWrite):
			failed++
		default:
			t.Fatal(err)
		}
	}
	if ok != 4 || failed != 7 {
		t.Fatalf("%d writes succeeded and %d failed, want the first, 3 whole lines of the group, and 7 lost", ok, failed)
	}
	if _, err := c.Write(line); err != nil {
		t.Fatal(err)
	}
	group := splitLines(w.writes[1])
	sum := sha256.Sum256([]byte(group[2]))
	last := strings.TrimSuffix(string(w.writes[2]), "\n")
	if _, _, seq := lineInfo(t, last); seq != 5 || !strings.Contains(last, `"prev_hash":"`+hex.EncodeToString(sum[:])+`"`) {
		t.Fatalf("the line after the failed write does not follow the last whole line (seq 4):\n%s", last)
	}
}
