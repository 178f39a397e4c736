package attach

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The hook's limits.
const (
	// MaxBytes is the largest local file the hook inlines (25 MiB).
	MaxBytes = 25 << 20
	// MaxFilesPerCall bounds how many local files one tool call may attach.
	MaxFilesPerCall = 32
	// MaxTotalBytes bounds the bytes one tool call may attach in all.
	MaxTotalBytes = 4 * MaxBytes
	// MaxHookInputBytes bounds the client's JSON the CLI reads from stdin:
	// room for tool arguments that already carry data: URIs.
	MaxHookInputBytes = 64 << 20
)

// Opener opens a local file for the hook. The hook checks the opened file's
// Stat (a regular file within MaxBytes) and still reads at most MaxBytes+1
// bytes, so an Opener need not enforce either. Tests pass an in-memory one;
// the CLI passes OpenRegular.
type Opener func(path string) (fs.File, error)

// ErrNotRegular is returned by OpenRegular for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path if it is a regular file (symbolic links are
// followed, as the user's own tools would). It checks before opening, so a
// FIFO or device is never opened, and checks again that the opened file is
// the one examined.
func OpenRegular(path string) (fs.File, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}

// Caller-safe file:// URL errors. None carries the URL.
var (
	ErrFileURLForm   = errors.New("a file URL must have the form file:///absolute/path")
	ErrFileURLHost   = errors.New("a file:// URL that names a host is not read (only file:///path or file://localhost/path)")
	ErrFileURLQuery  = errors.New("a file:// URL must not carry a query or fragment (percent-encode ? and #)")
	ErrFileURLEscape = errors.New("a file:// URL has invalid percent-encoding")
	ErrFileURLNUL    = errors.New("a file:// URL must not contain a NUL byte")
)

// FilePath returns the local path a file:// source names. Only
// file:///absolute/path and file://localhost/absolute/path are accepted;
// the path is percent-decoded, must not contain NUL, and is cleaned. On
// Windows, file:///C:/dir/name maps to C:\dir\name.
func FilePath(source string) (string, error) {
	if Classify(source) != SchemeFile {
		return "", ErrFileURLForm
	}
	rest := source[len("file:"):]
	if !strings.HasPrefix(rest, "//") {
		return "", ErrFileURLForm
	}
	rest = rest[2:]
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return "", ErrFileURLForm
	}
	host, p := rest[:slash], rest[slash:]
	if host != "" && !strings.EqualFold(host, "localhost") {
		return "", ErrFileURLHost
	}
	if strings.ContainsAny(p, "?#") {
		return "", ErrFileURLQuery
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return "", ErrFileURLEscape
	}
	if strings.IndexByte(decoded, 0) >= 0 {
		return "", ErrFileURLNUL
	}
	if runtime.GOOS == "windows" {
		if len(decoded) >= 3 && decoded[0] == '/' && isASCIILetter(decoded[1]) && decoded[2] == ':' {
			decoded = decoded[1:]
		}
		decoded = filepath.FromSlash(decoded)
	}
	if !filepath.IsAbs(decoded) {
		return "", ErrFileURLForm
	}
	return filepath.Clean(decoded), nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// MimeByExtension is the media type the hook backfills for path: by
// extension only, never by content.
func MimeByExtension(path string) string {
	switch extensionOf(path) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".json":
		return "application/json"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}

// Denial reasons. They name the attachment's position (attachment,
// attachments[2]) and the rule, never a path, URL or value.
var (
	errFileMissing    = errors.New("the file does not exist")
	errFileTooLarge   = fmt.Errorf("the file is larger than %d MiB", MaxBytes>>20)
	errFileNotRegular = errors.New("the path is not a regular file")
	errFileUnreadable = errors.New("the file could not be read")
	errCallTooLarge   = fmt.Errorf("the attached files exceed %d MiB in one call", MaxTotalBytes>>20)
	errTooManyFiles   = fmt.Errorf("more than %d local files in one call", MaxFilesPerCall)
	errFileInFilename = errors.New("filename must not be a file: URL")
	errFileInMime     = errors.New("mime_type must not be a file: URL")
	errBadMime        = errors.New("mime_type is not a valid media type with a UTF-8 or US-ASCII charset")
)

const denyPrefix = "arrowhead attachment hook: "

// Messages for the two cases without an attachment position.
const (
	msgBeforeMCP = "the call attaches a local file, but the hook is registered under Cursor's " +
		"beforeMCPExecution, which cannot change a call's input; register it under preToolUse " +
		"(arrowhead hook print-config --client cursor)"
)

// dialect is the client family a hook input came from, which fixes the
// answer's shape.
type dialect int

const (
	// dialectUnknown: not a pre-tool-use call we recognise; answer {}.
	dialectUnknown dialect = iota
	// dialectClaude: Claude Code, Codex CLI and VS Code agent hooks share
	// hookSpecificOutput {permissionDecision, updatedInput}.
	dialectClaude
	// dialectCursor: Cursor preToolUse, {permission, updated_input}.
	dialectCursor
	// dialectCursorMCP: Cursor beforeMCPExecution, which can allow or deny
	// but not rewrite.
	dialectCursorMCP
)

// detect reads the client family from the event name. Claude Code and Codex
// send hook_event_name "PreToolUse", VS Code sends hookEventName
// "PreToolUse", Cursor sends hook_event_name "preToolUse" or
// "beforeMCPExecution" alongside cursor_version.
func detect(env map[string]any) dialect {
	event, _ := env["hook_event_name"].(string)
	if event == "" {
		event, _ = env["hookEventName"].(string)
	}
	_, cursor := env["cursor_version"]
	switch {
	case event == "beforeMCPExecution":
		return dialectCursorMCP
	case event == "preToolUse", event == "PreToolUse" && cursor:
		return dialectCursor
	case event == "PreToolUse":
		return dialectClaude
	}
	return dialectUnknown
}

// RunHook answers one pre-tool-use hook call: in is the client's JSON from
// stdin, the result is the JSON to print on stdout (exit status 0 in every
// client's convention). open reads local files; the CLI passes OpenRegular.
//
// Only the top level of the tool input is examined: an "attachment" object,
// or the objects of an "attachments" array, whose "source" is a string. Of
// those, a file:// source is replaced by
// "data:<mime>;base64,<bytes>", with filename and mime_type backfilled when
// absent and every other key carried across; data: and http(s) sources pass
// verbatim. The call is denied (in the client's deny shape, with a reason
// that names no path) for a file: value in filename or mime_type, a file://
// URL with a host, a missing, unreadable or non-regular file, or a file over
// MaxBytes. Anything unrecognised passes through unchanged.
//
// The error is non-nil only for a nil opener or an encoding failure.
func RunHook(in []byte, open Opener) ([]byte, error) {
	if open == nil {
		return nil, errors.New("attach: RunHook needs an opener")
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var env map[string]any
	if err := dec.Decode(&env); err != nil || env == nil {
		return passThrough(dialectUnknown)
	}
	d := detect(env)
	if d == dialectUnknown {
		return passThrough(d)
	}
	input, ok := toolInput(env["tool_input"])
	if !ok {
		return passThrough(d)
	}
	items := shapedItems(input)
	if d == dialectCursorMCP {
		if err := checkHints(items); err != nil {
			return deny(d, err.Error())
		}
		for _, it := range items {
			if Classify(it.source()) == SchemeFile {
				return deny(d, msgBeforeMCP)
			}
		}
		return passThrough(d)
	}
	changed, err := substitute(items, open)
	if err != nil {
		return deny(d, err.Error())
	}
	if !changed {
		return passThrough(d)
	}
	return rewrite(d, input)
}

// toolInput returns the tool arguments as an object. Cursor has been seen to
// send them as a JSON string; both forms are read.
func toolInput(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case string:
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) != nil || m == nil {
			return nil, false
		}
		return m, true
	}
	return nil, false
}

// item is one attachment-shaped object: {source: string, ...}.
type item struct {
	label string
	obj   map[string]any
}

func (it item) source() string { s, _ := it.obj["source"].(string); return s }

// shapedItems finds the attachment-shaped objects at the top level of the
// tool input, in a stable order: attachment, then attachments[0..n].
//
// The search is deliberately not recursive. The hook runs on every tool call
// of every server, and a nested "attachment" key may be data the tool is
// storing (an e-mail body, a JSON document) rather than a request to read a
// local file; reading files on the strength of such data would widen what a
// prompt-injected argument can make the hook do. The tools that accept
// attachments take them at the top level.
func shapedItems(input map[string]any) []item {
	var items []item
	if obj, ok := input["attachment"].(map[string]any); ok {
		if _, ok := obj["source"].(string); ok {
			items = append(items, item{label: "attachment", obj: obj})
		}
	}
	if list, ok := input["attachments"].([]any); ok {
		for i, v := range list {
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := obj["source"].(string); ok {
				items = append(items, item{label: fmt.Sprintf("attachments[%d]", i), obj: obj})
			}
		}
	}
	return items
}

// checkHints denies a file: URL smuggled into filename or mime_type.
func checkHints(items []item) error {
	for _, it := range items {
		if s, ok := it.obj["filename"].(string); ok && Classify(s) == SchemeFile {
			return fmt.Errorf("%s: %w", it.label, errFileInFilename)
		}
		if s, ok := it.obj["mime_type"].(string); ok && Classify(s) == SchemeFile {
			return fmt.Errorf("%s: %w", it.label, errFileInMime)
		}
	}
	return nil
}

// pending is a file:// item that passed validation and waits to be read.
type pending struct {
	item
	path string
	mime string
}

// substitute rewrites the file:// items in place. Every item is validated
// before any file is read, so a bad item never costs a read of a good one.
func substitute(items []item, open Opener) (bool, error) {
	if err := checkHints(items); err != nil {
		return false, err
	}
	var todo []pending
	for _, it := range items {
		if Classify(it.source()) != SchemeFile {
			continue
		}
		if len(todo) == MaxFilesPerCall {
			return false, errTooManyFiles
		}
		path, err := FilePath(it.source())
		if err != nil {
			return false, fmt.Errorf("%s: %w", it.label, err)
		}
		mt := MimeByExtension(path)
		if s, ok := it.obj["mime_type"].(string); ok && strings.TrimSpace(s) != "" {
			if mt, err = parseDataMediaType(strings.TrimSpace(s)); err != nil {
				return false, fmt.Errorf("%s: %w", it.label, errBadMime)
			}
		}
		todo = append(todo, pending{item: it, path: path, mime: mt})
	}
	budget := MaxTotalBytes
	for _, p := range todo {
		data, err := readAttachment(open, p.path, budget)
		if err != nil {
			return false, fmt.Errorf("%s: %w", p.label, err)
		}
		budget -= len(data)
		p.obj["source"] = "data:" + p.mime + ";base64," + base64.StdEncoding.EncodeToString(data)
		if absent(p.obj, "filename") {
			p.obj["filename"] = filepath.Base(p.path)
		}
		if absent(p.obj, "mime_type") {
			p.obj["mime_type"] = p.mime
		}
	}
	return len(todo) > 0, nil
}

// absent reports whether key is missing, null or the empty string.
func absent(obj map[string]any, key string) bool {
	v, ok := obj[key]
	return !ok || v == nil || v == ""
}

// readAttachment reads one file, checking the size by Stat before reading
// and by a bounded read after, so neither a lying Stat nor a growing file
// can exceed the caps. budget is what the call may still attach.
func readAttachment(open Opener, path string, budget int) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, errFileMissing
		case errors.Is(err, ErrNotRegular):
			return nil, errFileNotRegular
		}
		return nil, errFileUnreadable
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errFileUnreadable
	}
	if !fi.Mode().IsRegular() {
		return nil, errFileNotRegular
	}
	limit := min(MaxBytes, budget)
	switch {
	case fi.Size() > MaxBytes:
		return nil, errFileTooLarge
	case fi.Size() > int64(budget):
		return nil, errCallTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, errFileUnreadable
	}
	switch {
	case len(data) > MaxBytes:
		return nil, errFileTooLarge
	case len(data) > budget:
		return nil, errCallTooLarge
	}
	return data, nil
}

// The answers, one struct per client shape so the key order is fixed.
type (
	claudeAnswer struct {
		HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
	}
	claudeDecision struct {
		HookEventName            string         `json:"hookEventName"`
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason,omitempty"`
		UpdatedInput             map[string]any `json:"updatedInput,omitempty"`
	}
	cursorAnswer struct {
		Permission   string         `json:"permission"`
		UserMessage  string         `json:"user_message,omitempty"`
		AgentMessage string         `json:"agent_message,omitempty"`
		UpdatedInput map[string]any `json:"updated_input,omitempty"`
	}
)

// passThrough is "no change": no opinion for the Claude family (an empty
// object, valid for Claude Code, Codex, whose parser refuses unknown keys,
// and VS Code), and allow for Cursor, which requires a permission on every
// call and treats silence as a failure.
func passThrough(d dialect) ([]byte, error) {
	switch d {
	case dialectCursor, dialectCursorMCP:
		return encode(cursorAnswer{Permission: "allow"})
	}
	return []byte("{}\n"), nil
}

func deny(d dialect, reason string) ([]byte, error) {
	reason = denyPrefix + reason + "."
	switch d {
	case dialectCursor, dialectCursorMCP:
		return encode(cursorAnswer{Permission: "deny", UserMessage: reason, AgentMessage: reason})
	}
	return encode(claudeAnswer{claudeDecision{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason,
	}})
}

// rewrite answers with the whole rewritten input: Claude Code replaces the
// input with updatedInput rather than merging it, and Codex applies
// updatedInput only together with permissionDecision allow.
func rewrite(d dialect, input map[string]any) ([]byte, error) {
	if d == dialectCursor {
		return encode(cursorAnswer{Permission: "allow", UpdatedInput: input})
	}
	return encode(claudeAnswer{claudeDecision{
		HookEventName: "PreToolUse", PermissionDecision: "allow", UpdatedInput: input,
	}})
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the hook answer: %w", err)
	}
	return b.Bytes(), nil
}
