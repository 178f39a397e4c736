package telemetry

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

func benchRecord() ports.AuditRecord {
	return ports.AuditRecord{
		Time: time.Now(), Subject: "alice", Kind: ports.ComponentTool, Name: "calculate",
		ArgShapes: map[string]string{"expression": "string(12)", "precision": "number"},
		Status:    ports.StatusOK, Latency: 1500 * time.Microsecond, TraceID: callerTraceID,
	}
}

// BenchmarkAuditRecordChained is BenchmarkAuditRecord with the chain: the
// seq, chain id and prev_hash fields, the SHA-256 of the line and, once
// per DefaultCheckpointLines lines, a signed checkpoint (amortised here).
func BenchmarkAuditRecordChained(b *testing.B) {
	sink, err := NewChainedAuditSink(io.Discard, Chain{Signer: newKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	ctx := context.Background()
	rec := benchRecord()
	b.ReportAllocs()
	for b.Loop() {
		sink.Record(ctx, rec)
	}
}

// The parallel pair measures the chain's lock under concurrent calls: the
// unchained sink already serialises its writes.
func BenchmarkAuditRecordParallel(b *testing.B) {
	benchParallel(b, NewAuditSink(io.Discard))
}

func BenchmarkAuditRecordChainedParallel(b *testing.B) {
	sink, err := NewChainedAuditSink(io.Discard, Chain{Signer: newKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	benchParallel(b, sink)
}

func benchParallel(b *testing.B, sink *AuditSink) {
	ctx := context.Background()
	rec := benchRecord()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sink.Record(ctx, rec)
		}
	})
}

// BenchmarkCheckpoint is one signed checkpoint line (its cost is spread
// over DefaultCheckpointLines lines).
func BenchmarkCheckpoint(b *testing.B) {
	sink, err := NewChainedAuditSink(io.Discard, Chain{Signer: newKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	c := sink.chain
	st := c.state
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.appendCheckpoint(buf[:0], &st, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyAuditLine is the verifier's cost per line.
func BenchmarkVerifyAuditLine(b *testing.B) {
	k := newKey(b)
	var buf syncBuffer
	sink, err := NewChainedAuditSink(&buf, Chain{Signer: k})
	if err != nil {
		b.Fatal(err)
	}
	for range 10_000 {
		sink.Record(context.Background(), benchRecord())
	}
	_ = sink.Close()
	text := buf.Bytes()
	verify := verifierFor(b, k)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		rep, err := VerifyAuditLog([]AuditInput{{Name: "a", R: bytes.NewReader(text)}}, verify)
		if err != nil || len(rep.Findings) != 0 {
			b.Fatal(err, rep.Findings)
		}
	}
}

// The pair below isolates what the chain adds to a line: the writer that
// receives the encoded line, unchained (a locked write) and chained
// (fields appended, SHA-256, locked write, amortised checkpoints).
func BenchmarkLineWritePlain(b *testing.B) {
	benchLineWrite(b, lockedSyncer(io.Discard))
}

func BenchmarkLineWriteChained(b *testing.B) {
	sink, err := NewChainedAuditSink(io.Discard, Chain{Signer: newKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	benchLineWrite(b, sink.chain)
}

func benchLineWrite(b *testing.B, w io.Writer) {
	var buf bytes.Buffer
	NewAuditSink(&buf).Record(context.Background(), benchRecord())
	line := buf.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuditRecordChainedFile is the chained sink under 32 concurrent
// callers (on 2 CPUs) writing to a file, as the server's audit log does:
// each Write is a system call, which concurrent lines share.
func BenchmarkAuditRecordChainedFile(b *testing.B) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	sink, err := NewChainedAuditSink(f, Chain{Signer: newKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	b.SetParallelism(16)
	benchParallel(b, sink)
}
