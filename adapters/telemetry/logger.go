package telemetry

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/opentelemetry-go-extra/otelzap"
	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// LogOption configures NewAuditSink and NewLogger.
type LogOption func(*logOptions)

type logOptions struct {
	provider log.LoggerProvider
}

func applyLogOptions(opts []LogOption) logOptions {
	var o logOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithLoggerProvider also emits every line to an OpenTelemetry log provider
// through otelzap, with the context it was logged with, so the log SDK
// correlates the record with the span in that context. Without this option
// nothing is bridged and the JSON line is the only output. Setup's
// Telemetry.LoggerProvider is the provider that exports over OTLP.
func WithLoggerProvider(p log.LoggerProvider) LogOption {
	return func(o *logOptions) { o.provider = p }
}

// bridgeOptions configures otelzap for a log writing fixed-field lines:
// lines at min and above go to provider (none when provider is nil, even if
// a global provider is set), no caller or source path is attached, and an
// error-level line never sets the span's status, which belongs to the
// Tracer.
func bridgeOptions(provider log.LoggerProvider, min zapcore.Level) []otelzap.Option {
	opts := []otelzap.Option{
		otelzap.WithCaller(false),
		otelzap.WithErrorStatusLevel(zapcore.InvalidLevel),
	}
	if provider == nil {
		return append(opts, otelzap.WithLoggerProvider(lognoop.NewLoggerProvider()), otelzap.WithMinLevel(zapcore.InvalidLevel))
	}
	return append(opts, otelzap.WithLoggerProvider(provider), otelzap.WithMinLevel(min))
}

// Logger is the operator log: start-up, shutdown and transport events as
// JSON lines with time, level and msg, never argument values or secrets. A
// line logged with a context holding a span carries that span's trace_id
// and span_id; with WithLoggerProvider every line at or above the level is
// also emitted, with its context, as an OpenTelemetry log record. It is safe
// for concurrent use.
type Logger struct {
	log *otelzap.Logger
}

// NewLogger returns the operator logger writing to w at level ("debug",
// "info", "warn", "error"; "" means info). Like the audit sink it has no
// sampling; call Sync on shutdown.
func NewLogger(w io.Writer, level string, opts ...LogOption) (*Logger, error) {
	lvl := zapcore.InfoLevel
	if level != "" {
		l, err := zapcore.ParseLevel(level)
		if err != nil {
			return nil, errors.New("telemetry: log level must be debug, info, warn or error")
		}
		lvl = l
	}
	o := applyLogOptions(opts)
	core := zapcore.NewCore(zapcore.NewJSONEncoder(encoderConfig()), lockedSyncer(w), lvl)
	return &Logger{log: otelzap.New(zap.New(core), bridgeOptions(o.provider, lvl)...)}, nil
}

// LocalOnly returns a logger writing the same lines to the same writer but
// bridging nothing. The OpenTelemetry export error handler logs through it:
// a failed export must not queue another record for the same exporter.
func (l *Logger) LocalOnly() *Logger {
	return &Logger{log: l.log.Clone(otelzap.WithMinLevel(zapcore.InvalidLevel))}
}

// Debug, Info, Warn and Error log a line with no trace context.
func (l *Logger) Debug(msg string, fields ...zap.Field) {
	l.DebugContext(context.Background(), msg, fields...)
}

func (l *Logger) Info(msg string, fields ...zap.Field) {
	l.InfoContext(context.Background(), msg, fields...)
}

func (l *Logger) Warn(msg string, fields ...zap.Field) {
	l.WarnContext(context.Background(), msg, fields...)
}

func (l *Logger) Error(msg string, fields ...zap.Field) {
	l.ErrorContext(context.Background(), msg, fields...)
}

// DebugContext, InfoContext, WarnContext and ErrorContext log a line that
// names the span in ctx, if any.
func (l *Logger) DebugContext(ctx context.Context, msg string, fields ...zap.Field) {
	l.log.DebugContext(ctx, msg, withTrace(ctx, fields)...)
}

func (l *Logger) InfoContext(ctx context.Context, msg string, fields ...zap.Field) {
	l.log.InfoContext(ctx, msg, withTrace(ctx, fields)...)
}

func (l *Logger) WarnContext(ctx context.Context, msg string, fields ...zap.Field) {
	l.log.WarnContext(ctx, msg, withTrace(ctx, fields)...)
}

func (l *Logger) ErrorContext(ctx context.Context, msg string, fields ...zap.Field) {
	l.log.ErrorContext(ctx, msg, withTrace(ctx, fields)...)
}

// Sync flushes the writer (if it can be flushed). Call it on shutdown.
func (l *Logger) Sync() error { return l.log.Sync() }

// withTrace appends trace_id and span_id when ctx holds a valid span
// context, so the JSON line can be joined with the trace; the bridged
// record gets the same ids from ctx through the log SDK.
func withTrace(ctx context.Context, fields []zap.Field) []zap.Field {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return fields
	}
	return append(fields, zap.String(FieldTraceID, sc.TraceID().String()), zap.String(FieldSpanID, sc.SpanID().String()))
}

// encoderConfig is the JSON layout shared by audit and operator lines.
func encoderConfig() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		TimeKey:        FieldTime,
		LevelKey:       FieldLevel,
		MessageKey:     FieldMsg,
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeLevel:    zapcore.LowercaseLevelEncoder,
		EncodeTime:     rfc3339NanoUTC,
		EncodeDuration: zapcore.SecondsDurationEncoder,
	}
}

func rfc3339NanoUTC(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(t.UTC().Format(time.RFC3339Nano))
}

// lockedSyncer serializes writes to w and makes Sync tolerate files that
// cannot be synced (a terminal or pipe on stdout/stderr reports EINVAL or
// ENOTTY, which is not a lost line).
func lockedSyncer(w io.Writer) zapcore.WriteSyncer {
	return &syncer{w: w}
}

type syncer struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncer) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.w.(interface{ Sync() error })
	if !ok {
		return nil
	}
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTTY) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}
