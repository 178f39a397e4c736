package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStdioStartup measures process start to the first tools/list
// answer over stdio (budget: 50 ms), and reports the idle resident memory
// of the process after it answered (budget: 30 MB).
//
//	go test ./test/e2e -run '^$' -bench StdioStartup -benchtime 20x
func BenchmarkStdioStartup(b *testing.B) {
	dir := b.TempDir()
	env := append(os.Environ(), "ARROWHEAD_DOCS_ROOT="+dir+"/documents", "ARROWHEAD_JAIL_ROOT="+dir, "ARROWHEAD_DATA_DIR="+dir+"/data")
	msgs := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	var rssTotal float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cmd := exec.Command(binary)
		cmd.Env, cmd.Dir = env, dir
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(stdin, msgs); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":2`) {
				break
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(elapsed.Microseconds())/1000, "ms-to-tools-list")
		time.Sleep(1500 * time.Millisecond) // idle
		rssTotal += rssMB(cmd.Process.Pid)
		_ = stdin.Close()
		_ = cmd.Wait()
		b.StartTimer()
	}
	b.ReportMetric(rssTotal/float64(b.N), "idle-rss-MB")
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
