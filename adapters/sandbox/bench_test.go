//go:build linux

package sandbox_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// printOne is the benchmarked command, run both directly and through a
// runner.
var printOne = []string{"python3", "-I", "-c", "print(1)"}

// BenchmarkRunnerOverhead alternates running printOne directly and through
// each runner, so a busy machine slows both sides alike, and reports the
// difference as overhead-ms/op.
func BenchmarkRunnerOverhead(b *testing.B) {
	for _, runner := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		b.Run(runner, func(b *testing.B) {
			r, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: sandboxtest.Workdir(b)})
			if err != nil {
				b.Skipf("%s: %v", runner, err)
			}
			var direct, sandboxed time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := exec.Command("/usr/bin/python3", printOne[1:]...).Output()
				direct += time.Since(start)
				if err != nil || string(out) != "1\n" {
					b.Fatalf("direct: %q %v", out, err)
				}
				start = time.Now()
				res, err := r.Run(context.Background(), ports.RunRequest{Argv: printOne, Limits: sandboxtest.Limits})
				sandboxed += time.Since(start)
				if err != nil || string(res.Stdout) != "1\n" {
					b.Fatalf("%s: %+v %v", runner, res, err)
				}
			}
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
			b.ReportMetric(ms(direct), "direct-ms/op")
			b.ReportMetric(ms(sandboxed), "runner-ms/op")
			b.ReportMetric(ms(sandboxed-direct), "overhead-ms/op")
		})
	}
}
