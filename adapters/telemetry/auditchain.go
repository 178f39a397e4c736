package telemetry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// The audit log is a hash chain. Every line a chained sink writes ends
// with three fields appended to the line the sink would otherwise write:
//
//	"seq":N            the line's place in its chain: 1, 2, 3, ... without gaps
//	"chain_id":"C"     32 hex digits drawn at random when the sink starts:
//	                   one chain per process (replica, CLI run)
//	"prev_hash":"H"    SHA-256, in lower-case hex, of the previous line of
//	                   the chain exactly as written, without its "\n";
//	                   GenesisHash on the chain's first line
//
// Every N lines, every T seconds when lines were written since, and when
// the sink closes, the chain gets a checkpoint line (msg
// "audit_checkpoint") carrying a compact JWS by the attestation key over
// CheckpointPayload: the checkpoint's own chain_id, seq, prev_hash and
// time, so it vouches for every line before it. A chain closed cleanly
// ends with a checkpoint whose "final" is true. The hash is over the
// bytes as written, so a verifier needs nothing but the files.
const (
	FieldSeq      = "seq"
	FieldChainID  = "chain_id"
	FieldPrevHash = "prev_hash"
	// FieldKeyID, FieldJWS and FieldFinal appear on checkpoint lines only.
	FieldKeyID = "kid"
	FieldJWS   = "jws"
	FieldFinal = "final"
)

// CheckpointMessage is the msg of a checkpoint line.
const CheckpointMessage = "audit_checkpoint"

// GenesisHash is the prev_hash of a chain's first line.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Defaults for Chain's checkpoint spacing (ARROWHEAD_AUDIT_CHECKPOINT_LINES
// and _SECONDS).
const (
	DefaultCheckpointLines    = 1000
	DefaultCheckpointInterval = 60 * time.Second
)

// CheckpointPayload is what a checkpoint's JWS signs. Its fields equal
// the checkpoint line's own.
type CheckpointPayload struct {
	ChainID  string `json:"chain_id"`
	Seq      uint64 `json:"seq"`
	PrevHash string `json:"prev_hash"`
	Time     string `json:"time"`
	Final    bool   `json:"final"`
}

// Chain configures a chained audit sink.
type Chain struct {
	// Signer signs checkpoints: the server's attestation key. Required.
	Signer ports.Signer
	// CheckpointLines is how many lines a checkpoint follows at most;
	// 0 means DefaultCheckpointLines.
	CheckpointLines int
	// CheckpointInterval is the longest a written line waits for a
	// checkpoint; 0 means DefaultCheckpointInterval.
	CheckpointInterval time.Duration
}

// NewChainedAuditSink returns an audit sink whose lines form a hash chain
// with signed checkpoints (see FieldSeq). Close it on shutdown: that
// writes the final checkpoint.
func NewChainedAuditSink(w io.Writer, c Chain, opts ...LogOption) (*AuditSink, error) {
	if c.Signer == nil {
		return nil, errors.New("audit chain: a signer is required")
	}
	if c.CheckpointLines < 0 || c.CheckpointInterval < 0 {
		return nil, errors.New("audit chain: checkpoint spacing must be positive")
	}
	if c.CheckpointLines == 0 {
		c.CheckpointLines = DefaultCheckpointLines
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = DefaultCheckpointInterval
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("audit chain: drawing a chain id: %w", err)
	}
	cw := &chainWriter{
		out:    &syncer{w: w},
		id:     hex.EncodeToString(id[:]),
		signer: c.Signer,
		every:  c.CheckpointLines,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	copy(cw.state.prev[:], GenesisHash)
	go cw.tick(c.CheckpointInterval)
	sink := newAuditSink(cw, opts)
	sink.chain = cw
	return sink, nil
}

// ChainID is the sink's chain id; empty for an unchained sink.
func (s *AuditSink) ChainID() string {
	if s.chain == nil {
		return ""
	}
	return s.chain.id
}

// chainWriter receives each encoded audit line (one Write per line, as
// zap's core writes it) and appends the chain fields.
//
// Lines are written by group commit. A Write joins a queue and waits; the
// op at the head of the queue leads: it takes every op queued at that
// moment, chains their lines in queue order into one buffer (checkpoints
// where they fall due), writes that buffer with one Write, hands each
// waiting op its result and wakes the next head to lead. So the chain's
// order is the order of the bytes in the output, a Write still returns
// only once its line is written (or failed), and concurrent calls share
// one write instead of taking turns at a lock for one each. There is no
// writer goroutine: a Write that finds the queue empty leads itself and
// pays no hand-over, which is the single-client case. The ticker and
// close go through the same queue, so only the leader ever touches the
// chain's state. (internal/groupcommit, the stores' group commit, waits
// up to a millisecond for the callers it expects: worth it against an
// fsync, not against a write to a pipe or file.)
type chainWriter struct {
	out    *syncer
	id     string
	signer ports.Signer
	every  int

	mu    sync.Mutex
	queue []*chainOp // queue[0] leads, the rest wait for it

	// Owned by the leader.
	state  chainState // as written
	closed bool       // the final checkpoint was written (or attempted)
	buf    []byte
	group  []*chainOp
	marks  []chainMark

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// chainState is where the chain stands after a line.
type chainState struct {
	seq   uint64
	prev  [sha256.Size * 2]byte // hex of the line's hash
	since int                   // lines since the last checkpoint
}

type opKind uint8

const (
	opLine  opKind = iota // chain and write line
	opTick                // checkpoint if lines were written since the last
	opClose               // the final checkpoint
)

// chainOp is one request in the queue and, once done, its result.
type chainOp struct {
	kind opKind
	line []byte // opLine: a JSON object without its closing brace
	// written is whether the line is in the output; err is the write's
	// error, or a checkpoint's the line made due.
	written bool
	err     error
	done    bool
	wake    chan struct{} // capacity 1: done, or at the head to lead
}

var chainOps = sync.Pool{New: func() any { return &chainOp{wake: make(chan struct{}, 1)} }}

// chainMark records one entry of a group's buffer: where it ends, the
// chain's state after it and the op it belongs to, so that a short write
// advances the chain by exactly the entries it wrote.
type chainMark struct {
	end   int
	state chainState
	op    int
	line  bool // the op's line, not a checkpoint it made due
}

var errNotJSONLine = errors.New("audit chain: not a JSON object line")

// Write chains one line: p is a JSON object followed by "\n".
func (c *chainWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n < 3 || p[n-1] != '\n' || p[n-2] != '}' || p[0] != '{' {
		return 0, errNotJSONLine
	}
	op := chainOps.Get().(*chainOp)
	op.kind, op.line = opLine, p[:n-2]
	c.run(op)
	written, err := op.written, op.err
	op.release()
	if !written {
		return 0, err
	}
	return n, err
}

// run queues op and returns once it is done: by a leader, or by op itself
// when it reaches the head of the queue.
func (c *chainWriter) run(op *chainOp) {
	c.mu.Lock()
	c.queue = append(c.queue, op)
	lead := len(c.queue) == 1
	c.mu.Unlock()
	if !lead {
		<-op.wake
		if op.done {
			return
		}
	}
	c.mu.Lock()
	c.group = append(c.group[:0], c.queue...)
	c.mu.Unlock()
	c.commit(c.group)
	// The others are woken while this op still heads the queue: the
	// next leader, and a Write arriving after the queue empties, use the
	// leader's buffers only once it is dequeued below.
	for _, o := range c.group[1:] {
		o.done = true
		o.wake <- struct{}{}
	}
	taken := len(c.group)
	clear(c.group)
	c.mu.Lock()
	rest := copy(c.queue, c.queue[taken:])
	clear(c.queue[rest:])
	c.queue = c.queue[:rest]
	var next *chainOp
	if rest > 0 {
		next = c.queue[0]
	}
	c.mu.Unlock()
	if next != nil {
		next.wake <- struct{}{}
	}
}

func (op *chainOp) release() {
	op.line, op.written, op.err, op.done = nil, false, nil, false
	chainOps.Put(op)
}

// commit chains the group's lines and checkpoints into one buffer in
// order, writes it, and advances the chain by what was written. A failed
// write does not advance it past the last entry written whole: the next
// line takes the seq of the first one lost.
func (c *chainWriter) commit(group []*chainOp) {
	st := c.state
	b, marks := c.buf[:0], c.marks[:0]
	checkpoint := func(i int, final bool) error {
		var err error
		if b, err = c.appendCheckpoint(b, &st, final); err != nil {
			return err
		}
		marks = append(marks, chainMark{end: len(b), state: st, op: i})
		return nil
	}
	for i, op := range group {
		switch op.kind {
		case opLine:
			b = c.appendEntry(b, op.line, &st)
			st.since++
			marks = append(marks, chainMark{end: len(b), state: st, op: i, line: true})
			// After the final checkpoint (a line from a call still
			// finishing while the sink closes) every line is closed by
			// a final checkpoint of its own, so the chain still ends
			// signed.
			if st.since >= c.every || c.closed {
				op.err = checkpoint(i, c.closed)
			}
		case opTick:
			if st.since > 0 && !c.closed {
				// A failure is retried at the next tick or line.
				_ = checkpoint(i, false)
			}
		case opClose:
			// A chain with no line gets no final checkpoint: there is
			// nothing to vouch for.
			if !c.closed {
				c.closed = true
				if st.seq > 0 {
					op.err = checkpoint(i, true)
				}
			}
		}
	}
	c.buf, c.marks = b, marks
	if len(b) == 0 {
		return
	}
	n, err := c.out.Write(b)
	if err == nil {
		n = len(b)
	}
	for _, m := range marks {
		op := group[m.op]
		if m.end > n {
			op.err = err
			continue
		}
		c.state = m.state
		if m.line {
			op.written = true
		}
	}
}

// appendEntry appends body (a JSON object without its closing brace)
// with the chain fields that follow st, and advances st past it.
func (c *chainWriter) appendEntry(b, body []byte, st *chainState) []byte {
	start := len(b)
	b = append(b, body...)
	b = append(b, `,"`+FieldSeq+`":`...)
	b = strconv.AppendUint(b, st.seq+1, 10)
	b = append(b, `,"`+FieldChainID+`":"`...)
	b = append(b, c.id...)
	b = append(b, `","`+FieldPrevHash+`":"`...)
	b = append(b, st.prev[:]...)
	b = append(b, `"}`...)
	sum := sha256.Sum256(b[start:])
	st.seq++
	hex.Encode(st.prev[:], sum[:])
	return append(b, '\n')
}

// appendCheckpoint appends a signed checkpoint line after st. Signing
// happens in the leader, once per CheckpointLines lines: the lines queued
// meanwhile wait for it, which keeps the checkpoint's seq the one it
// signs.
func (c *chainWriter) appendCheckpoint(b []byte, st *chainState, final bool) ([]byte, error) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	payload, err := json.Marshal(CheckpointPayload{
		ChainID: c.id, Seq: st.seq + 1, PrevHash: string(st.prev[:]), Time: now, Final: final,
	})
	if err != nil {
		return b, err
	}
	token, err := c.signer.Sign(payload)
	if err != nil {
		return b, fmt.Errorf("audit chain: signing a checkpoint: %w", err)
	}
	body := make([]byte, 0, 160+len(token))
	body = append(body, `{"`+FieldTime+`":"`...)
	body = append(body, now...)
	body = append(body, `","`+FieldLevel+`":"info","`+FieldMsg+`":"`+CheckpointMessage+`","`+FieldKeyID+`":`...)
	body = strconv.AppendQuote(body, c.signer.KeyID())
	body = append(body, `,"`+FieldFinal+`":`...)
	body = strconv.AppendBool(body, final)
	body = append(body, `,"`+FieldJWS+`":"`...)
	body = append(body, token...)
	body = append(body, '"')
	b = c.appendEntry(b, body, st)
	st.since = 0
	return b, nil
}

// tick writes a checkpoint every interval when lines were written since
// the last one, so a quiet server's lines do not wait for the next
// thousand.
func (c *chainWriter) tick(interval time.Duration) {
	defer close(c.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.do(opTick)
		}
	}
}

// do runs an op that carries no line and returns its error.
func (c *chainWriter) do(kind opKind) error {
	op := chainOps.Get().(*chainOp)
	op.kind = kind
	c.run(op)
	err := op.err
	op.release()
	return err
}

// close stops the ticker and writes the final checkpoint; a chain with no
// line gets none. Later calls do nothing.
func (c *chainWriter) close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	return c.do(opClose)
}

func (c *chainWriter) Sync() error { return c.out.Sync() }
