package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
)

// MaxStdioLineBytes bounds one JSON-RPC message on stdio. Larger lines are
// dropped (the core refuses arguments above core.MaxArgumentBytes anyway).
const MaxStdioLineBytes = 64 << 20

// ServeStdio serves MCP over in/out until ctx ends or in closes. Transport
// errors are reported through report with fixed text only: a message's
// content never reaches a log.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, report func(event string)) error {
	if report == nil {
		report = func(string) {}
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(s.pumpStdin(in, pw, report))
	}()
	stdio := server.NewStdioServer(s.mcp)
	stdio.SetErrorLogger(log.New(fixedWriter{report: report, event: "stdio transport error"}, "", 0))
	err := stdio.Listen(ctx, pr, out)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// pumpStdin copies newline-delimited messages from in to w, bounding each
// line.
func (s *Server) pumpStdin(in io.Reader, w io.Writer, report func(string)) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	oversize := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 && !oversize {
			if len(line)+len(chunk) > MaxStdioLineBytes {
				oversize = true
				line = line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		if oversize {
			report("stdio message over the size limit dropped")
			oversize = false
		} else if len(bytes.TrimSpace(line)) > 0 {
			if _, werr := w.Write(append(bytes.TrimRight(line, "\r\n"), '\n')); werr != nil {
				return werr
			}
		}
		line = line[:0]
		if err != nil {
			return io.EOF
		}
	}
}

// fixedWriter turns any write into one fixed event, dropping the text.
type fixedWriter struct {
	report func(string)
	event  string
}

func (f fixedWriter) Write(p []byte) (int, error) {
	f.report(f.event)
	return len(p), nil
}
