// Package raven stands in for github.com/getsentry/raven-go in Arrowhead's
// builds (see the replace directive in the root go.mod).
//
// The pinned SQL parser (github.com/auxten/postgresql-parser v1.0.1) uses
// raven-go for one thing: the Stacktrace type its error package attaches to
// internal errors, built by NewStacktrace and printed as file:line:function.
// The real module also creates a Sentry client when it is initialised: it
// parses a bundled certificate authority list and lists the Go source
// directories, about 5 ms of every process start, for a client Arrowhead
// never calls. It would also read source files from disk to add context
// lines to a stack trace. This module provides the types and the one
// constructor the parser uses, with the same field names and JSON encoding,
// and nothing else: no client, no network, no file reads.
package raven

import (
	"runtime"
	"strings"
)

// Interface is a value that can be attached to an error report.
type Interface interface {
	// Class names the kind of value, as Sentry's protocol does.
	Class() string
}

// Stacktrace is a call stack, oldest frame first.
type Stacktrace struct {
	Frames []*StacktraceFrame `json:"frames"`
}

// Class implements Interface.
func (s *Stacktrace) Class() string { return "stacktrace" }

// StacktraceFrame is one call in a Stacktrace. The context fields are never
// filled here (no source file is read); they exist so that an encoded trace
// from the real module still decodes.
type StacktraceFrame struct {
	Filename     string   `json:"filename,omitempty"`
	Function     string   `json:"function,omitempty"`
	Module       string   `json:"module,omitempty"`
	Lineno       int      `json:"lineno,omitempty"`
	Colno        int      `json:"colno,omitempty"`
	AbsolutePath string   `json:"abs_path,omitempty"`
	ContextLine  string   `json:"context_line,omitempty"`
	PreContext   []string `json:"pre_context,omitempty"`
	PostContext  []string `json:"post_context,omitempty"`
	InApp        bool     `json:"in_app"`
}

// maxFrames bounds the frames one trace records.
const maxFrames = 100

// NewStacktrace records the caller's stack, skipping skip frames above the
// caller of NewStacktrace, oldest frame first. A frame is in the
// application (InApp) when its package is main or starts with one of
// appPackagePrefixes. contextLines is accepted for compatibility and
// ignored: no source is read. It returns nil when there is no frame.
func NewStacktrace(skip int, contextLines int, appPackagePrefixes []string) *Stacktrace {
	pcs := make([]uintptr, maxFrames)
	n := runtime.Callers(skip+2, pcs)
	if n == 0 {
		return nil
	}
	var frames []*StacktraceFrame
	it := runtime.CallersFrames(pcs[:n])
	for {
		f, more := it.Next()
		if frame := newFrame(f, appPackagePrefixes); frame != nil {
			frames = append(frames, frame)
		}
		if !more {
			break
		}
	}
	if len(frames) == 0 {
		return nil
	}
	for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
		frames[i], frames[j] = frames[j], frames[i]
	}
	return &Stacktrace{Frames: frames}
}

// newFrame describes one runtime frame; nil for the goroutine's exit
// trampoline, which is no call of the program.
func newFrame(f runtime.Frame, appPackagePrefixes []string) *StacktraceFrame {
	module, function := splitFunction(f.Function)
	if module == "runtime" && function == "goexit" {
		return nil
	}
	frame := &StacktraceFrame{Filename: f.File, AbsolutePath: f.File, Lineno: f.Line, Module: module, Function: function}
	frame.InApp = module == "main"
	for _, prefix := range appPackagePrefixes {
		if strings.HasPrefix(module, prefix) && !strings.Contains(module, "vendor") && !strings.Contains(module, "third_party") {
			frame.InApp = true
		}
	}
	return frame
}

// splitFunction splits a runtime function name such as
// "github.com/a/b.(*T).Method" into its package and its name within it.
func splitFunction(name string) (module, function string) {
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot], name[slash+1+dot+1:]
	}
	return "", name
}
