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
	copy(cw.prev[:], GenesisHash)
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
// zap's core writes it) and appends the chain fields. Numbering, hashing
// and writing happen under one mutex so that the chain's order is the
// order of the bytes in the output.
type chainWriter struct {
	out    *syncer
	id     string
	signer ports.Signer
	every  int

	mu     sync.Mutex
	seq    uint64
	prev   [sha256.Size * 2]byte // hex of the last line's hash
	buf    []byte
	since  int  // lines since the last checkpoint
	closed bool // the final checkpoint was written

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

var errNotJSONLine = errors.New("audit chain: not a JSON object line")

// Write chains one line: p is a JSON object followed by "\n".
func (c *chainWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n < 3 || p[n-1] != '\n' || p[n-2] != '}' || p[0] != '{' {
		return 0, errNotJSONLine
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.writeLocked(p[:n-2]); err != nil {
		return 0, err
	}
	c.since++
	// After the final checkpoint (a line from a call still finishing
	// while the sink closes) every line is closed by a final checkpoint
	// of its own, so the chain still ends signed.
	if c.since >= c.every || c.closed {
		if err := c.checkpointLocked(c.closed); err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeLocked appends the chain fields to body (a JSON object without its
// closing brace), writes the line and advances the chain. A failed write
// does not advance it: the next line takes the same seq.
func (c *chainWriter) writeLocked(body []byte) error {
	seq := c.seq + 1
	b := append(c.buf[:0], body...)
	b = append(b, `,"`+FieldSeq+`":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"`+FieldChainID+`":"`...)
	b = append(b, c.id...)
	b = append(b, `","`+FieldPrevHash+`":"`...)
	b = append(b, c.prev[:]...)
	b = append(b, `"}`...)
	sum := sha256.Sum256(b)
	b = append(b, '\n')
	c.buf = b
	if _, err := c.out.Write(b); err != nil {
		return err
	}
	c.seq = seq
	hex.Encode(c.prev[:], sum[:])
	return nil
}

// checkpointLocked writes a signed checkpoint line. Signing happens under
// the lock, once per CheckpointLines lines: a line arriving meanwhile
// waits for it, which keeps the checkpoint's seq the one it signs.
func (c *chainWriter) checkpointLocked(final bool) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	payload, err := json.Marshal(CheckpointPayload{
		ChainID: c.id, Seq: c.seq + 1, PrevHash: string(c.prev[:]), Time: now, Final: final,
	})
	if err != nil {
		return err
	}
	token, err := c.signer.Sign(payload)
	if err != nil {
		return fmt.Errorf("audit chain: signing a checkpoint: %w", err)
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
	if err := c.writeLocked(body); err != nil {
		return err
	}
	c.since = 0
	return nil
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
			c.mu.Lock()
			if c.since > 0 && !c.closed {
				// A failure is retried at the next tick or line.
				_ = c.checkpointLocked(false)
			}
			c.mu.Unlock()
		}
	}
}

// close stops the ticker and writes the final checkpoint; a chain with no
// line gets none (there is nothing to vouch for). Later calls do nothing.
func (c *chainWriter) close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.seq == 0 {
		return nil
	}
	return c.checkpointLocked(true)
}

func (c *chainWriter) Sync() error { return c.out.Sync() }
