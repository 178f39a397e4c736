// Package telemetrytest is an in-process OTLP/HTTP receiver for tests: it
// decodes the trace, metric and log export requests (protobuf or JSON,
// optionally gzipped) and keeps each one, so a test can check what an
// exporter really sent.
package telemetrytest

import (
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Request is one export request as received. Exactly one of Traces,
// Metrics and Logs is set when the request was a well-formed export to a
// known signal path.
type Request struct {
	Path    string
	Header  http.Header
	Body    []byte // decompressed
	Traces  *coltracepb.ExportTraceServiceRequest
	Metrics *colmetricpb.ExportMetricsServiceRequest
	Logs    *collogpb.ExportLogsServiceRequest
}

// Collector is an http.Handler receiving OTLP/HTTP exports on any path
// ending in /v1/traces, /v1/metrics or /v1/logs. It is safe for concurrent
// use.
type Collector struct {
	mu       sync.Mutex
	requests []Request
}

func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	rec := Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: raw}
	var req, resp proto.Message
	switch {
	case r.Method != http.MethodPost:
	case strings.HasSuffix(r.URL.Path, "/v1/traces"):
		rec.Traces = &coltracepb.ExportTraceServiceRequest{}
		req, resp = rec.Traces, &coltracepb.ExportTraceServiceResponse{}
	case strings.HasSuffix(r.URL.Path, "/v1/metrics"):
		rec.Metrics = &colmetricpb.ExportMetricsServiceRequest{}
		req, resp = rec.Metrics, &colmetricpb.ExportMetricsServiceResponse{}
	case strings.HasSuffix(r.URL.Path, "/v1/logs"):
		rec.Logs = &collogpb.ExportLogsServiceRequest{}
		req, resp = rec.Logs, &collogpb.ExportLogsServiceResponse{}
	}
	json := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if req != nil {
		if json {
			err = protojson.Unmarshal(raw, req)
		} else {
			err = proto.Unmarshal(raw, req)
		}
	}
	c.mu.Lock()
	c.requests = append(c.requests, rec)
	c.mu.Unlock()
	if req == nil || err != nil {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	var out []byte
	if json {
		out, _ = protojson.Marshal(resp)
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, _ = proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	_, _ = w.Write(out)
}

// Requests returns every request received so far, in order.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// Spans returns every span received so far.
func (c *Collector) Spans() []*tracepb.Span {
	var out []*tracepb.Span
	for _, r := range c.Requests() {
		for _, rs := range r.Traces.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				out = append(out, ss.GetSpans()...)
			}
		}
	}
	return out
}

// LogRecords returns every log record received so far.
func (c *Collector) LogRecords() []*logpb.LogRecord {
	var out []*logpb.LogRecord
	for _, r := range c.Requests() {
		for _, rl := range r.Logs.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				out = append(out, sl.GetLogRecords()...)
			}
		}
	}
	return out
}

// AttrMap flattens attributes to their string values (others read as "").
func AttrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return m
}
