package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/uptrace/opentelemetry-go-extra/otelzap"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Field names of an audit line. They are part of the operator contract
// (log drains and alerts key on them): change them only on purpose.
const (
	FieldTime      = "time"
	FieldLevel     = "level"
	FieldMsg       = "msg"
	FieldSubject   = "subject"
	FieldComponent = "component"
	FieldName      = "name"
	FieldArgs      = "args"
	FieldStatus    = "status"
	FieldRefusal   = "refusal"
	FieldLatencyMS = "latency_ms"
	FieldTraceID   = "trace_id"
	FieldSpanID    = "span_id"
	FieldCause     = "cause"
	// FieldEgress is the exfiltration guard's note (what it found, or that
	// the user confirmed the call); absent when it had nothing to say.
	FieldEgress = "egress"
	// FieldDetail carries an operator action's fixed-key detail (a
	// kill-switch rule, a canary trip).
	FieldDetail = "detail"
)

// AuditMessage is the msg of every audit line.
const AuditMessage = "audit"

// Bounds on what an args entry may look like. Shapes are computed by the
// core (string(12), array(3), number, a URI scheme, a count); these bounds
// are a second line behind that contract, so a record that wrongly carried
// a value would show ShapeRedacted instead of the value.
const (
	maxArgKeyLen   = 64
	maxArgShapeLen = 32
	// ShapeRedacted replaces a shape that does not look like one.
	ShapeRedacted = "redacted"
	// ArgsDroppedKey counts args entries whose key did not look like a
	// declared argument name; the entries are not written.
	ArgsDroppedKey = "_dropped"
)

// AuditSink writes one JSON line per record. It implements ports.AuditSink
// and is safe for concurrent use; each line goes whole into one Write to
// the underlying writer (a chained sink's concurrent lines share one), and
// Record returns once it is written.
type AuditSink struct {
	log *otelzap.Logger
	// chain numbers and hashes the lines; nil for an unchained sink.
	chain *chainWriter
}

var _ ports.AuditSink = (*AuditSink)(nil)

// NewAuditSink returns a sink writing JSON lines to w. The caller chooses w:
// stdout over HTTP, stderr over stdio (where stdout is the protocol).
func NewAuditSink(w io.Writer, opts ...LogOption) *AuditSink {
	return newAuditSink(lockedSyncer(w), opts)
}

func newAuditSink(out zapcore.WriteSyncer, opts []LogOption) *AuditSink {
	o := applyLogOptions(opts)
	enc := encoderConfig()
	// Record writes time, level and msg itself, in that order: the time is
	// the record's (the call's start by the chain's clock), not the moment
	// zap encodes the entry.
	enc.TimeKey, enc.LevelKey, enc.MessageKey = "", "", ""
	enc.NewReflectedEncoder = newShapesEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), out, zapcore.DebugLevel)

	otelOpts := bridgeOptions(o.provider, zapcore.InfoLevel)
	// No sampling or stack trace: every call gets exactly one line of fixed
	// fields.
	return &AuditSink{log: otelzap.New(zap.New(core), otelOpts...)}
}

// Record writes rec as one line. A call that ended in error is logged at
// error level, the rest at info.
//
// trace_id is always present: the record's trace id, else the trace id of
// the span in ctx, else "". span_id is present when ctx holds a span this
// process started (not a caller's remote span context). otelzap itself
// adds neither to the line; it only passes ctx to the OpenTelemetry log
// bridge when one is configured.
func (s *AuditSink) Record(ctx context.Context, rec ports.AuditRecord) {
	if ctx == nil {
		ctx = context.Background()
	}
	t := rec.Time
	if t.IsZero() {
		t = time.Now()
	}
	sc := trace.SpanContextFromContext(ctx)
	tid, err := trace.TraceIDFromHex(rec.TraceID)
	if err != nil && sc.IsValid() {
		tid, err = sc.TraceID(), nil
	}
	traceID := ""
	if err == nil {
		traceID = tid.String()
	}

	level, lvl := zapcore.InfoLevel, "info"
	if rec.Status == ports.StatusError {
		level, lvl = zapcore.ErrorLevel, "error"
	}
	fp := recordFields.Get().(*[]zap.Field)
	defer func() {
		clear(*fp)
		recordFields.Put(fp)
	}()
	fields := append((*fp)[:0],
		zap.String(FieldTime, t.UTC().Format(time.RFC3339Nano)),
		zap.String(FieldLevel, lvl),
		zap.String(FieldMsg, AuditMessage),
		zap.String(FieldSubject, rec.Subject),
		zap.String(FieldComponent, string(rec.Kind)),
		zap.String(FieldName, rec.Name),
		zap.Reflect(FieldArgs, sanitizeShapes(rec.ArgShapes)),
		zap.String(FieldStatus, rec.Status),
	)
	if rec.Refusal != "" {
		fields = append(fields, zap.String(FieldRefusal, rec.Refusal))
	}
	fields = append(fields,
		zap.Float64(FieldLatencyMS, float64(rec.Latency)/float64(time.Millisecond)),
		zap.String(FieldTraceID, traceID),
	)
	if err == nil && sc.IsValid() && !sc.IsRemote() && sc.TraceID() == tid {
		fields = append(fields, zap.String(FieldSpanID, sc.SpanID().String()))
	}
	if rec.Cause != "" {
		fields = append(fields, zap.String(FieldCause, rec.Cause))
	}
	if rec.Egress != "" {
		fields = append(fields, zap.String(FieldEgress, rec.Egress))
	}
	if len(rec.Detail) > 0 {
		fields = append(fields, zap.Reflect(FieldDetail, sanitizeDetail(rec.Detail)))
	}

	*fp = fields
	if level == zapcore.ErrorLevel {
		s.log.ErrorContext(ctx, AuditMessage, fields...)
		return
	}
	s.log.InfoContext(ctx, AuditMessage, fields...)
}

// recordFields recycles Record's field slices: a line's 14 fields escape
// to the heap through the logger's variadic call (most of the bytes a
// guarded call allocated), and neither zap nor otelzap keeps them once
// the line is written.
var recordFields = sync.Pool{New: func() any { s := make([]zap.Field, 0, 16); return &s }}

// Sync flushes the writer (if it can be flushed).
func (s *AuditSink) Sync() error { return s.log.Sync() }

// Close writes a chained sink's final checkpoint, then flushes the writer.
// Call it once on shutdown, after the last call was served; a line
// recorded after it is still chained and closed by a final checkpoint of
// its own.
func (s *AuditSink) Close() error {
	var err error
	if s.chain != nil {
		err = s.chain.close()
	}
	return errors.Join(err, s.log.Sync())
}

// shapeMap is the args field: a JSON object in the line, and its JSON text
// when bridged to an OpenTelemetry log record (otelzap renders reflected
// fields with fmt.Sprint, which uses String).
type shapeMap map[string]string

func (m shapeMap) String() string {
	b, err := json.Marshal(map[string]string(m))
	if err != nil {
		return "{}"
	}
	return string(b)
}

// maxDetailLen bounds one detail value.
const maxDetailLen = 256

// sanitizeDetail keeps detail entries whose key is an argument-like key and
// whose value is printable and bounded; an odd value is redacted. The
// values are the server's or the operator's; the bound keeps a log line a
// line.
func sanitizeDetail(detail map[string]string) shapeMap {
	out := make(shapeMap, len(detail))
	for k, v := range detail {
		if !isArgKey(k) {
			continue
		}
		ok := len(v) <= maxDetailLen
		for _, c := range []byte(v) {
			if c < 0x20 || c == 0x7f {
				ok = false
				break
			}
		}
		if !ok {
			v = ShapeRedacted
		}
		out[k] = v
	}
	return out
}

// sanitizeShapes returns shapes unchanged when every entry looks like a
// shape, else a copy with odd values redacted and odd keys dropped and
// counted.
// shapesEncoder writes the args field of the audit line without
// encoding/json's reflection, which was most of the line's cost: a
// shapeMap's keys and values are sanitized to characters JSON needs no
// escape for, so it is written directly, keys sorted as json.Marshal
// sorts them. Anything else goes to encoding/json, as zap's default does.
type shapesEncoder struct {
	w   io.Writer
	buf []byte
}

func newShapesEncoder(w io.Writer) zapcore.ReflectedEncoder { return &shapesEncoder{w: w} }

func (e *shapesEncoder) Encode(v any) error {
	if m, ok := v.(shapeMap); ok && m.plain() {
		e.buf = m.appendJSON(e.buf[:0])
		_, err := e.w.Write(e.buf)
		return err
	}
	enc := json.NewEncoder(e.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// plain reports whether every key and value is printable ASCII without a
// quote or backslash: JSON text as it is.
func (m shapeMap) plain() bool {
	ok := func(s string) bool {
		for _, c := range []byte(s) {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for k, v := range m {
		if !ok(k) || !ok(v) {
			return false
		}
	}
	return true
}

// appendJSON appends m as a JSON object with sorted keys; m must be plain.
func (m shapeMap) appendJSON(b []byte) []byte {
	var small [8]string
	keys := small[:0]
	n := 2
	for k, v := range m {
		keys = append(keys, k)
		n += len(k) + len(v) + len(`"":"",`)
	}
	slices.Sort(keys)
	// One allocation of the object's size: zap gives every line a new
	// encoder, so b starts empty and would otherwise grow several times.
	b = slices.Grow(b, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":"`...)
		b = append(b, m[k]...)
		b = append(b, '"')
	}
	return append(b, '}')
}

func sanitizeShapes(shapes map[string]string) shapeMap {
	clean := true
	for k, v := range shapes {
		if !isArgKey(k) || !isShape(v) {
			clean = false
			break
		}
	}
	if clean {
		if shapes == nil {
			return shapeMap{}
		}
		return shapeMap(shapes)
	}
	out := make(shapeMap, len(shapes))
	dropped := 0
	for k, v := range shapes {
		switch {
		case !isArgKey(k):
			dropped++
		case !isShape(v):
			out[k] = ShapeRedacted
		default:
			out[k] = v
		}
	}
	if dropped > 0 {
		out[ArgsDroppedKey] = strconv.Itoa(dropped)
	}
	return out
}

// isArgKey accepts schema-style argument names and the core's own
// underscore-prefixed keys.
func isArgKey(k string) bool {
	if k == "" || len(k) > maxArgKeyLen {
		return false
	}
	for _, c := range []byte(k) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// isShape accepts the shape alphabet: short, lower-case, no separators a
// value would need (spaces, slashes, colons, '=', '@', upper case).
func isShape(v string) bool {
	if v == "" || len(v) > maxArgShapeLen {
		return false
	}
	for _, c := range []byte(v) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '(', c == ')', c == '?', c == '+', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}
