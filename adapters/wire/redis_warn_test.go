package wire_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
)

// TestUnreachableRedisAtStartIsAWarning: a Redis that does not answer at
// start is a warning line in the operator log, and the server still builds
// (the limiter runs per process).
func TestUnreachableRedisAtStartIsAWarning(t *testing.T) {
	// A port that was just free: nothing answers there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	var log coretest.SyncBuffer
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_JAIL_ROOT": t.TempDir(),
		"ARROWHEAD_DOCS_ROOT": t.TempDir(), "ARROWHEAD_DATA_DIR": t.TempDir(), "ARROWHEAD_REDIS_URL": "redis://" + addr + "/0"})
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard, LogWriter: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if !strings.Contains(log.String(), "ARROWHEAD_REDIS_URL: Redis does not answer at start") || strings.Contains(log.String(), addr) {
		t.Fatalf("log %q", log.String())
	}
}
