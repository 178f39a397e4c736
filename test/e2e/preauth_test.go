package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Pre-authentication uploads, against the built binary: a request is
// decided from its headers, so an upload without a valid token, or to a
// rebound Host, is answered at once and never buffered.

const (
	// hostileUploads is how many refused uploads are open at once.
	hostileUploads = 200
	// uploadPrefix is how much of its (never ending) body each one sends.
	uploadPrefix = 512 << 10
	// refusalWithin is how long a refusal may take; the server's own read
	// timeout is 60s.
	refusalWithin = 10 * time.Second
	// maxRSSGrowthMB bounds the server's memory growth under the flood;
	// buffering the bodies would cost hostileUploads x uploadPrefix (100 MiB)
	// and more.
	maxRSSGrowthMB = 40
)

// hostileUpload opens a chunked POST /mcp, sends its headers and the first
// chunk, never ends the body, and reports the status that came back (0 when
// none came within refusalWithin).
func hostileUpload(addr, host, authorization string, chunk []byte) int {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return -1
	}
	defer conn.Close()
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n", host)
	if authorization != "" {
		fmt.Fprintf(&head, "Authorization: %s\r\n", authorization)
	}
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		return -1
	}
	go func() { // the server closes the connection without taking it all
		_, _ = fmt.Fprintf(conn, "%x\r\n", len(chunk))
		_, _ = conn.Write(chunk)
	}()
	_ = conn.SetReadDeadline(time.Now().Add(refusalWithin))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestPreAuthUploadsAreNotBuffered(t *testing.T) {
	s := startHTTP(t, map[string]string{"ARROWHEAD_PROFILE": "core"})
	addr := strings.TrimPrefix(s.url, "http://")
	c := s.connect(t, s.token(t, "alice", "tools:read"))
	call(t, c, "calculate", map[string]any{"expression": "1+1"}) // warm
	baseline := rssMB(s.cmd.Process.Pid)

	var peak atomic.Int64
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if mb := int64(rssMB(s.cmd.Process.Pid)); mb > peak.Load() {
				peak.Store(mb)
			}
			select {
			case <-sampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	chunk := bytes.Repeat([]byte("x"), uploadPrefix)
	statuses := make([]int, hostileUploads)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range hostileUploads {
		// Mostly no token or a bad one; every fourth a valid token to a
		// rebound Host.
		host, authorization := addr, ""
		switch i % 4 {
		case 1:
			authorization = "Bearer not-a-jwt"
		case 3:
			host, authorization = "evil.example", "Bearer "+s.token(t, "mallory", "tools:read")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = hostileUpload(addr, host, authorization, chunk)
		}()
	}
	// A valid caller is served meanwhile.
	if r := call(t, c, "calculate", map[string]any{"expression": "6*7"}); r.IsError || !strings.Contains(text(r), "42") {
		t.Errorf("the valid caller was not served during the flood: %s", text(r))
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(sampling)
	<-sampled

	counts := map[int]int{}
	for i, code := range statuses {
		counts[code]++
		want := http.StatusUnauthorized
		if i%4 == 3 {
			want = http.StatusForbidden
		}
		if code != want && counts[code] == 1 {
			t.Errorf("upload %d: status %d, want %d within %v (0: none in time)", i, code, want, refusalWithin)
		}
	}
	growth := peak.Load() - int64(baseline)
	t.Logf("%d hostile uploads answered in %v (statuses %v); RSS %.0f MB -> peak %d MB", hostileUploads, elapsed.Round(time.Millisecond), counts, baseline, peak.Load())
	if growth > maxRSSGrowthMB {
		t.Errorf("RSS grew %d MB under %d refused uploads, bound %d MB", growth, hostileUploads, maxRSSGrowthMB)
	}
	// And still served afterwards.
	if r := call(t, c, "calculate", map[string]any{"expression": "2+2"}); r.IsError {
		t.Errorf("the valid caller was refused after the flood: %s", text(r))
	}
}
