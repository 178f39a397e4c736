package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startupMessages is a client's opening: initialize, initialized, and the
// first tools/list (id 2), written at once as a client pipes them.
const startupMessages = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"

// startupIdle is how long a server is left idle before its resident memory
// is read: past the one-second settle after which arrowhead releases the
// pages only start-up touched.
const startupIdle = 1500 * time.Millisecond

var (
	bareOnce   sync.Once
	bareBinary string
	bareErr    error
)

// buildBare builds the bare mcp-go stdio server (./barestdio), once.
func buildBare(b *testing.B) string {
	b.Helper()
	bareOnce.Do(func() {
		bareBinary = filepath.Join(filepath.Dir(binary), "barestdio")
		cmd := exec.Command("go", "build", "-o", bareBinary, "./barestdio")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		bareErr = cmd.Run()
	})
	if bareErr != nil {
		b.Fatalf("building barestdio: %v", bareErr)
	}
	return bareBinary
}

// BenchmarkStdioStartup measures process start to the first tools/list
// answer over stdio for arrowhead and for a bare mcp-go stdio server,
// alternating the two so both see the same machine load. It reports the
// median of each, their ratio (budget: 2.0, issue 22), and each one's
// idle resident memory after start-up (arrowhead's budget: 30 MB).
//
//	go test ./test/e2e -run '^$' -bench StdioStartup -benchtime 40x
func BenchmarkStdioStartup(b *testing.B) {
	bare := buildBare(b)
	dir := b.TempDir()
	env := append(os.Environ(), "ARROWHEAD_DOCS_ROOT="+dir+"/documents", "ARROWHEAD_JAIL_ROOT="+dir, "ARROWHEAD_DATA_DIR="+dir+"/data")
	// One unmeasured start each warms the page cache.
	startToToolsList(b, bare, dir, env, 0)
	startToToolsList(b, binary, dir, env, 0)

	var bareMS, oursMS []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first, second := &bareMS, &oursMS
		firstBin, secondBin := bare, binary
		if i%2 == 1 {
			first, second, firstBin, secondBin = second, first, secondBin, firstBin
		}
		d, _ := startToToolsList(b, firstBin, dir, env, 0)
		*first = append(*first, ms(d))
		d, _ = startToToolsList(b, secondBin, dir, env, 0)
		*second = append(*second, ms(d))
	}
	b.StopTimer()
	_, bareRSS := startToToolsList(b, bare, dir, env, startupIdle)
	_, oursRSS := startToToolsList(b, binary, dir, env, startupIdle)

	bareMed, oursMed := median(bareMS), median(oursMS)
	b.ReportMetric(bareMed, "bare-ms")
	b.ReportMetric(oursMed, "arrowhead-ms")
	b.ReportMetric(oursMed/bareMed, "ratio")
	b.ReportMetric(bareRSS, "bare-idle-rss-MB")
	b.ReportMetric(oursRSS, "arrowhead-idle-rss-MB")
}

// startToToolsList starts bin, writes the opening messages and returns the
// time until the tools/list answer arrived. With idle > 0 it then waits that
// long and also returns the process's resident memory in MB.
func startToToolsList(b *testing.B, bin, dir string, env []string, idle time.Duration) (time.Duration, float64) {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(bin)
	cmd.Env, cmd.Dir = env, dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	if _, err := io.WriteString(stdin, startupMessages); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	answered := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			answered = true
			break
		}
	}
	elapsed := time.Since(start)
	if !answered {
		b.Fatalf("%s exited without answering tools/list", filepath.Base(bin))
	}
	if idle <= 0 {
		return elapsed, 0
	}
	time.Sleep(idle)
	return elapsed, rssMB(cmd.Process.Pid)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rssMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
