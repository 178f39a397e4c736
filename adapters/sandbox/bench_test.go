//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// printOne is the benchmarked command, run both directly and through a
// runner.
var printOne = []string{"python3", "-I", "-c", "print(1)"}

// countFiles walks its working directory, as a test command walks the
// copied project.
var countFiles = []string{"python3", "-I", "-c", "import os; print(sum(len(f) for _, _, f in os.walk('.')))"}

// stagedFiles is the size of the staged project: 200 files of 2 KiB in 20
// directories, like a small module's copy for run_tests.
const stagedFiles = 200

func stagedPath(i int) string { return fmt.Sprintf("pkg%02d/file%03d.go", i%20, i) }

var stagedBody = []byte(strings.Repeat("x", 2048))

// BenchmarkRunnerOverhead alternates running a command directly and
// through each runner, so a busy machine slows both sides alike, and
// reports the difference as overhead-ms/op. "print" runs print(1) in an
// empty scratch; "staged" stages a 200-file project, starts in one of its
// directories and walks it, against walking a host copy directly.
func BenchmarkRunnerOverhead(b *testing.B) {
	for _, runner := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		if os.Getenv("ARROWHEAD_BENCH_NO_CGROUP") == "1" {
			defer sandbox.SetCgroupRoot("/nonexistent")()
		}
		r, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: sandboxtest.Workdir(b)})
		if err != nil {
			b.Logf("%s: %v", runner, err)
			continue
		}
		b.Run(runner+"/print", func(b *testing.B) {
			overhead(b, r, exec.Command("/usr/bin/python3", printOne[1:]...), ports.RunRequest{Argv: printOne, Limits: sandboxtest.Limits}, "1\n")
		})
		b.Run(runner+"/staged", func(b *testing.B) {
			host := b.TempDir()
			for i := range stagedFiles {
				p := filepath.Join(host, filepath.FromSlash(stagedPath(i)))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, stagedBody, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			direct := exec.Command("/usr/bin/python3", countFiles[1:]...)
			direct.Dir = host
			stage := func(_ context.Context, sc ports.Scratch) error {
				for i := range stagedFiles {
					if err := sc.WriteFile(stagedPath(i), stagedBody); err != nil {
						return err
					}
				}
				return nil
			}
			overhead(b, r, direct, ports.RunRequest{Argv: countFiles, Stage: stage, Limits: sandboxtest.Limits}, fmt.Sprintf("%d\n", stagedFiles))
		})
	}
}

func overhead(b *testing.B, r ports.Runner, direct *exec.Cmd, req ports.RunRequest, want string) {
	var d, sandboxed time.Duration
	for b.Loop() {
		cmd := exec.Command(direct.Path, direct.Args[1:]...)
		cmd.Dir = direct.Dir
		start := time.Now()
		out, err := cmd.Output()
		d += time.Since(start)
		if err != nil || string(out) != want {
			b.Fatalf("direct: %q %v", out, err)
		}
		start = time.Now()
		res, err := r.Run(context.Background(), req)
		sandboxed += time.Since(start)
		if err != nil || string(res.Stdout) != want {
			b.Fatalf("%s: %+v %v", r.Name(), res, err)
		}
	}
	n := float64(b.N)
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(d), "direct-ms/op")
	b.ReportMetric(ms(sandboxed), "runner-ms/op")
	b.ReportMetric(ms(sandboxed-d), "overhead-ms/op")
}
