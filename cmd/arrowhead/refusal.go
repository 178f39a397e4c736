package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"
)

// A start-up refusal over stdio is also answered to the client, which
// otherwise shows only "Connection closed": the first request on stdin
// gets a JSON-RPC error carrying the same one-line reason.
const (
	// refusalCode is the JSON-RPC error code of that answer, in the range
	// the specification leaves to servers.
	refusalCode = -32000
	// refusalWait bounds how long the refusing server waits for the
	// client's first request; a client sends it at once.
	refusalWait = 10 * time.Second
	// refusalGrace is how long it stays for a further request once it
	// has answered one.
	refusalGrace = 2 * time.Second
	// refusalLines bounds how many lines are read.
	refusalLines = 16
	// refusalLineBytes bounds one line read.
	refusalLineBytes = 1 << 20
)

// answerRefusal answers every JSON-RPC request on stdin with reason as an
// error: a client on the 2026-07-28 leg falls back to initialize when its
// first request is refused, and must see the reason there too. It returns
// at the end of stdin, after refusalWait without a first request, or
// refusalGrace after the last answer. Nothing is read from a terminal (a
// person started the server by hand and has read stderr).
func answerRefusal(stdin io.Reader, stdout io.Writer, reason string) {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice != 0 {
			return
		}
	}
	answered := make(chan struct{}, refusalLines)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), refusalLineBytes)
		for i := 0; i < refusalLines && sc.Scan(); i++ {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" || msg.Method == "" {
				continue // a notification, or not a request at all
			}
			answer, err := json.Marshal(map[string]any{
				"jsonrpc": "2.0",
				"id":      msg.ID,
				"error":   map[string]any{"code": refusalCode, "message": reason},
			})
			if err != nil {
				continue
			}
			if _, err := stdout.Write(append(answer, '\n')); err != nil {
				return
			}
			answered <- struct{}{}
		}
	}()
	timer := time.NewTimer(refusalWait)
	defer timer.Stop()
	for {
		select {
		case <-done:
			return
		case <-answered:
			timer.Reset(refusalGrace)
		case <-timer.C:
			return
		}
	}
}

// oneLine is a refusal's reason as one line: what an MCP client shows.
func oneLine(reason string) string {
	return strings.Join(strings.Fields(reason), " ")
}
