package exectools_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkRunSnippetOverhead calls run_snippet with print(1) through the
// whole App (guard chain, authorization, staging, runner, redaction,
// framing) and, alternately, runs python3 -c 'print(1)' directly, so a
// busy machine slows both alike; overhead-ms/op is the difference.
func BenchmarkRunSnippetOverhead(b *testing.B) {
	for _, name := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, map[string]string{"ARROWHEAD_EXEC_RUNNER": name}, nil)
			args := map[string]any{"code": "print(1)"}
			var direct, tool time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := exec.Command("/usr/bin/python3", "-c", "print(1)").Output()
				direct += time.Since(start)
				if err != nil || string(out) != "1\n" {
					b.Fatalf("direct: %q %v", out, err)
				}
				start = time.Now()
				res, err := e.app.Call(b.Context(), runner, "run_snippet", args)
				tool += time.Since(start)
				if err != nil || res.Structured()["stdout"] != "1\n" {
					b.Fatalf("run_snippet: %v %v", res.Structured(), err)
				}
			}
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
			b.ReportMetric(ms(direct), "direct-ms/op")
			b.ReportMetric(ms(tool), "tool-ms/op")
			b.ReportMetric(ms(tool-direct), "overhead-ms/op")
		})
	}
}
