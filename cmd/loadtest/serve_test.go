package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestServeSideAnswersAndCountsItsCPU runs one side the way -compare's
// child does: it announces its URL, answers calls there, tells the CPU
// it used while the clients ran, and stops when its stdin ends.
func TestServeSideAnswersAndCountsItsCPU(t *testing.T) {
	for _, side := range []string{"guarded", "bare"} {
		t.Run(side, func(t *testing.T) {
			stdinR, stdinW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- serveSide(t.Context(), side, stdinR, outW) }()
			line, err := bufio.NewReader(outR).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			url, ok := strings.CutPrefix(strings.TrimSpace(line), servingPrefix)
			if !ok {
				t.Fatalf("announced %q", line)
			}
			srv := &sideServer{side: side, url: url, cpuURL: cpuURLOf(url)}
			o := options{clients: 2, duration: 200 * time.Millisecond, tool: "calculate", expr: "2 * (3 + 4)"}
			r, err := drive(context.Background(), srv.url, o, srv.cpu)
			if err != nil {
				t.Fatal(err)
			}
			if r.calls == 0 || r.errors != 0 {
				t.Fatalf("%d calls, %d errors", r.calls, r.errors)
			}
			if r.serverCPU <= 0 || r.serverCPUPerCall() <= 0 {
				t.Fatalf("server CPU %v over %d calls", r.serverCPU, r.calls)
			}
			if err := stdinW.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not stop when its stdin ended")
			}
		})
	}
}

func TestServeSideRefusesAnUnknownSide(t *testing.T) {
	err := serveSide(t.Context(), "proxy", strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "guarded or bare") {
		t.Fatalf("got %v", err)
	}
}
