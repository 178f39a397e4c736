package repo_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// goSrc is the benchmark tree: the Go distribution's own src/.
func goSrc(b *testing.B) string {
	b.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return root
}

// wideOpen raises every cap so one call covers the whole tree.
var wideOpen = map[string]string{
	"ARROWHEAD_SEARCH_MAX_RESULTS": "10000000", "ARROWHEAD_SEARCH_MAX_TOTAL_BYTES": "100000000000",
	"ARROWHEAD_REPO_MAX_FILE_BYTES": "100000000", "ARROWHEAD_REPO_SEARCH_MAX_FILES": "1000000",
	"ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS": "60000",
}

// BenchmarkCodeSearchVsGrep times code_search (the whole tool call: list,
// per-file authorization, jailed reads with the binary sniff, the shared
// runner, sanitizing and framing) over $GOROOT/src against grep -rnF over
// the same files (the allowed extensions, the excluded directories,
// binary files skipped), interleaved per iteration, and reports the ratio
// of the medians (wall and CPU). Both must find the same number of lines.
//
//	go test -run '^$' -bench CodeSearchVsGrep -benchtime 5x ./core/tools/repo
func BenchmarkCodeSearchVsGrep(b *testing.B) {
	root := goSrc(b)
	e := newEnv(b, root, wideOpen, nil, nil)
	s, _ := settings.Load(func(string) (string, bool) { return "", false })
	for _, query := range []string{"sync.Mutex", "EXPERIMENT_zz_absent"} {
		b.Run(strings.ReplaceAll(query, ".", "_"), func(b *testing.B) {
			args := []string{"-rnF", "--binary-files=without-match"}
			for _, x := range s.RepoAllowedExtensions {
				args = append(args, "--include=*"+x)
			}
			for _, d := range s.RepoExcludedDirs {
				args = append(args, "--exclude-dir="+d)
			}
			args = append(args, "--", query, ".")
			var ours, grep, oursCPU, grepCPU []time.Duration
			for i := 0; i < b.N+1; i++ {
				before := cpuNow()
				t0 := time.Now()
				res := e.ok(b, "code_search", map[string]any{"query": query})
				wall, cpu := time.Since(t0), cpuNow()-before
				n := len(res.Structured()["matches"].([]any))
				if tr := res.Structured()["truncated"].([]any); len(tr) > 0 {
					b.Fatalf("cut short: %v", tr)
				}
				cmd := exec.Command("grep", args...)
				cmd.Dir, cmd.Env = root, []string{"LC_ALL=C"}
				var out bytes.Buffer
				cmd.Stdout = &out
				t0 = time.Now()
				if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
					b.Fatal(err)
				}
				gwall := time.Since(t0)
				if g := bytes.Count(out.Bytes(), []byte{'\n'}); g != n {
					b.Fatalf("code_search found %d lines, grep %d", n, g)
				}
				if i == 0 {
					continue // warm-up
				}
				ours, oursCPU = append(ours, wall), append(oursCPU, cpu)
				grep, grepCPU = append(grep, gwall), append(grepCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			b.ReportMetric(float64(median(ours))/float64(median(grep)), "x-grep-wall")
			b.ReportMetric(float64(median(oursCPU))/float64(median(grepCPU)), "x-grep-cpu")
			b.ReportMetric(float64(median(ours).Milliseconds()), "ms-code_search")
			b.ReportMetric(float64(median(grep).Milliseconds()), "ms-grep")
			b.ReportMetric(float64(median(oursCPU).Milliseconds()), "ms-cpu-code_search")
			b.ReportMetric(float64(median(grepCPU).Milliseconds()), "ms-cpu-grep")
		})
	}
}

// BenchmarkSymbolMap500 maps 500 files per iteration through the whole
// tool call: the first 500 Go files of $GOROOT/src (go/parser), and the
// first 500 modules of this machine's Python standard library (the
// tokenizer-aware parser), when python3 is installed, in each text form.
// The budget is under a second each; the compact text must stay at most
// half the size of the one-line-per-symbol text (text-bytes).
//
//	go test -run '^$' -bench SymbolMap500 ./core/tools/repo
func BenchmarkSymbolMap500(b *testing.B) {
	trees := map[string]struct{ root, ext string }{"go": {goSrc(b), ".go"}}
	if out, err := exec.Command("python3", "-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])").Output(); err == nil {
		trees["python"] = struct{ root, ext string }{strings.TrimSpace(string(out)), ".py"}
	}
	for name, tr := range trees {
		for _, format := range []string{"lines", "compact"} {
			b.Run(name+"/"+format, func(b *testing.B) {
				e := newEnv(b, tr.root, map[string]string{"ARROWHEAD_SYMBOL_MAP_MAX_FILES": "500", "ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS": "1000000",
					"ARROWHEAD_REPO_MAX_FILE_BYTES": "100000000", "ARROWHEAD_REPO_ALLOWED_EXTENSIONS": tr.ext}, nil, nil)
				b.ResetTimer()
				before := cpuNow()
				for range b.N {
					res := e.ok(b, "symbol_map", map[string]any{"format": format})
					if n := int(res.Structured()["files_scanned"].(float64)); n != 500 {
						b.Fatalf("scanned %d files", n)
					}
					b.ReportMetric(float64(len(res.Structured()["symbols"].([]any))), "symbols")
					b.ReportMetric(float64(len(res.Text)), "text-bytes")
				}
				b.ReportMetric(float64((cpuNow()-before).Milliseconds())/float64(b.N), "ms-cpu/op")
			})
		}
	}
}

func median(d []time.Duration) time.Duration {
	d = append([]time.Duration(nil), d...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// cpuNow is this process's CPU time so far (user + system, all threads).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rgArgs is ripgrep over what code_search admits under s: the allowed
// extensions and exact names, no ignore files, hidden files included, the
// excluded directories pruned, binary files skipped (rg's default).
func rgArgs(s *settings.Settings) []string {
	args := []string{"-nF", "--no-ignore", "--hidden", "--no-config", "--threads", strconv.Itoa(runtime.GOMAXPROCS(0))}
	for _, x := range s.RepoAllowedExtensions {
		args = append(args, "-g", "*"+x)
	}
	for _, n := range s.RepoAllowedNames {
		args = append(args, "-g", n)
	}
	for _, d := range s.RepoExcludedDirs {
		args = append(args, "-g", "!"+d+"/")
	}
	return args
}

// BenchmarkCodeSearchVsRipgrep times code_search (the whole tool call)
// over $GOROOT/src against ripgrep -nF, interleaved per iteration, and
// reports the ratio of the medians:
//
//   - full/<query>: a full scan of the whole tree (the file and result
//     caps raised to cover it) against rg over the same tree; both must
//     find the same number of lines.
//   - first50/<query>: code_search at default settings (it stops at the
//     50th match in path order) against rg | head -n 50.
//
// The selective query has a handful of hits, the common one about a
// thousand.
//
//	go test -run '^$' -bench CodeSearchVsRipgrep -benchtime 10x ./core/tools/repo
func BenchmarkCodeSearchVsRipgrep(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep is not installed (apt-get install ripgrep)")
	}
	root := goSrc(b)
	s, _ := settings.Load(func(string) (string, bool) { return "", false })
	full := newEnv(b, root, map[string]string{
		"ARROWHEAD_SEARCH_MAX_RESULTS": "10000000", "ARROWHEAD_REPO_SEARCH_MAX_FILES": "1000000", "ARROWHEAD_REPO_MAX_FILE_BYTES": "100000000",
	}, nil, nil)
	defaults := newEnv(b, root, nil, nil, nil)
	for _, query := range []string{"func NewRequest", "context.Context"} {
		name := strings.NewReplacer(" ", "_", ".", "_").Replace(query)
		b.Run("full/"+name, func(b *testing.B) {
			ratio(b, func() int {
				res := full.ok(b, "code_search", map[string]any{"query": query})
				if tr := res.Structured()["truncated"].([]any); len(tr) > 0 {
					b.Fatalf("cut short: %v", tr)
				}
				return len(res.Structured()["matches"].([]any))
			}, func() (int, time.Duration) {
				cmd := exec.Command(rg, append(rgArgs(s), "--", query, ".")...)
				cmd.Dir = root
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
					b.Fatal(err)
				}
				return bytes.Count(out.Bytes(), []byte{'\n'}), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}, true)
		})
		b.Run("first50/"+name, func(b *testing.B) {
			ratio(b, func() int {
				res := defaults.ok(b, "code_search", map[string]any{"query": query})
				return len(res.Structured()["matches"].([]any))
			}, func() (int, time.Duration) {
				cmd := exec.Command("sh", "-c", `"$0" "$@" | head -n 50`, rg)
				cmd.Args = append(cmd.Args, append(rgArgs(s), "--", query, ".")...)
				cmd.Dir = root
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				return bytes.Count(out.Bytes(), []byte{'\n'}), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}, false)
		})
	}
}

// ratio runs ours and theirs alternately b.N+1 times (the first a warm-up)
// and reports the ratio of the median wall times, and of CPU times. With
// same, both must count the same lines.
func ratio(b *testing.B, ours func() int, theirs func() (int, time.Duration), same bool) {
	var ow, tw, oc, tc []time.Duration
	for i := 0; i < b.N+1; i++ {
		before := cpuNow()
		t0 := time.Now()
		n := ours()
		wall, cpu := time.Since(t0), cpuNow()-before
		t0 = time.Now()
		m, tcpu := theirs()
		twall := time.Since(t0)
		if same && n != m {
			b.Fatalf("code_search found %d lines, rg %d", n, m)
		}
		if i == 0 {
			continue
		}
		ow, oc, tw, tc = append(ow, wall), append(oc, cpu), append(tw, twall), append(tc, tcpu)
	}
	b.ReportMetric(float64(median(ow))/float64(median(tw)), "x-rg-wall")
	b.ReportMetric(float64(median(oc))/float64(median(tc)), "x-rg-cpu")
	b.ReportMetric(float64(median(ow).Microseconds())/1000, "ms-code_search")
	b.ReportMetric(float64(median(tw).Microseconds())/1000, "ms-rg")
}
