package wire_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// BenchmarkRunTestsOverhead calls run_tests on a real Go module and a real
// Python package through the whole App and, alternately, runs the same
// command directly on a copy of the same tree with the same toolchain
// environment, both with warm caches; overhead-ms/op is the difference
// (the copy, the sandbox, parsing, redaction and framing).
func BenchmarkRunTestsOverhead(b *testing.B) {
	cases := []struct {
		name  string
		setup func(b *testing.B, repo string) (prefix string, env []string)
	}{
		{"go", func(b *testing.B, repo string) (string, []string) {
			copyTree(b, requireGoModule(b), filepath.Join(repo, "uuid"))
			// Kept from run to run, as the tool's own cache is (execWorkdir).
			cache := filepath.Join(os.TempDir(), "arrowhead-wire-exec-bench-gocache")
			return "uuid/", []string{"GOCACHE=" + cache, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
				"GOENV=off", "GOWORK=off", "GOTELEMETRY=off", "HOME=" + b.TempDir()}
		}},
		{"python", func(b *testing.B, repo string) (string, []string) {
			copyTree(b, realPyPackage, filepath.Join(repo, "src", "lazr", "uri"))
			coretest.WriteFiles(b, repo, map[string]string{"pyproject.toml": "[project]\nname = \"lazr.uri\"\n"})
			return "", []string{"PYTHONPATH=src", "PYTHONDONTWRITEBYTECODE=1", "HOME=" + b.TempDir()}
		}},
	}
	for _, runner := range []string{"subprocess", "bubblewrap"} {
		for _, c := range cases {
			benchRunTests(b, runner, c.name, c.setup)
		}
	}
}

func benchRunTests(b *testing.B, runner, name string, setup func(b *testing.B, repo string) (string, []string)) {
	{
		b.Run(runner+"/"+name, func(b *testing.B) {
			repo := b.TempDir()
			prefix, env := setup(b, repo)
			direct := b.TempDir()
			copyTree(b, repo, direct)
			rt := execRuntime(b, repo, map[string]string{"ARROWHEAD_EXEC_TEST_WALL_SECONDS": "900", "ARROWHEAD_EXEC_RUNNER": runner})
			args := map[string]any{"path_prefix": prefix}
			call := func() map[string]any {
				res, err := rt.App.Call(b.Context(), ports.Operator(), "run_tests", args)
				if err != nil || res.Structured()["exit_code"] != float64(0) {
					b.Fatalf("run_tests: %v %v", err, res.Structured())
				}
				return res.Structured()
			}
			first := call() // warms the caller's build cache
			argv := strings.Fields(first["command"].(string))
			dir := filepath.Join(direct, filepath.FromSlash(first["work_dir"].(string)))
			runDirect := func() {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = dir, append([]string{"PATH=" + filepath.Dir(argv[0]) + ":/usr/bin:/bin", "LANG=C.UTF-8"}, env...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("direct: %v\n%s", err, out)
				}
			}
			runDirect() // warms the direct run's cache
			var directD, toolD time.Duration
			for b.Loop() {
				start := time.Now()
				runDirect()
				directD += time.Since(start)
				start = time.Now()
				call()
				toolD += time.Since(start)
			}
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
			b.ReportMetric(ms(directD), "direct-ms/op")
			b.ReportMetric(ms(toolD), "tool-ms/op")
			b.ReportMetric(ms(toolD-directD), "overhead-ms/op")
		})
	}
}
