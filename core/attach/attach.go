// Package attach is attachment substitution: how a tool accepts a document
// as an attachment {source, filename?, mime_type?} instead of inline content,
// and how a local file reaches the server at all.
//
// A model cannot hand the server a file on the user's machine; it can only
// name one (file:///home/me/notes.md). The client-side hook, `arrowhead hook
// attachments` (hook.go), runs inside the MCP client before the call leaves
// the machine and rewrites such a source into a data: URI carrying the file's
// bytes. On the server, Resolve accepts data: sources, refuses http(s) with a
// pointer to doc_retrieve, and answers a file:// source that still arrives
// (the hook is missing or older than the current protocol) with one
// install-or-upgrade payload.
//
// The schema, the classifier, the client registration blocks and the
// protocol version live here, once, so the server's payload and the CLI's
// print-config cannot drift apart.
//
// No message built here ever repeats a source, file name or media type the
// caller sent.
package attach

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

// HookProtocolVersion is the attachment hook protocol this build speaks. It is
// stamped in every registration block (--protocol=N on the command line),
// printed by `arrowhead hook attachments --version`, and sent as min_version
// in the missing-hook payload.
//
// Bump it only when the hook must understand a new input shape. The hook's
// output (source: "data:<mime>;base64,<bytes>" with filename and mime_type
// backfilled) is a backward-compatible contract pinned by a golden test and
// never changes with the protocol.
const HookProtocolVersion = 1

// HookCommand is the command that runs the hook; HookCommandLine is the line
// a client registers, carrying the protocol stamp.
const HookCommand = "arrowhead hook attachments"

// HookCommandLine returns the registered command line, with the protocol
// version a user can read in their client configuration.
func HookCommandLine() string {
	return HookCommand + " --protocol=" + strconv.Itoa(HookProtocolVersion)
}

// DefaultDocsURL is where the install-or-upgrade payload points when the
// caller does not name a page.
const DefaultDocsURL = "https://github.com/arrowhead-go/arrowhead/blob/main/README.md#attach-local-files-to-doc_write"

// Field limits of the attachment object.
const (
	// MaxFilenameLength bounds the filename hint, in characters.
	MaxFilenameLength = 255
	// MaxMimeTypeLength bounds the mime_type hint (RFC 6838 allows 127
	// characters for each of type and subtype).
	MaxMimeTypeLength = 255
	// dataURIHeaderAllowance is the room a data: URI needs before its
	// payload: "data:", a media type, a charset parameter and ";base64,".
	dataURIHeaderAllowance = 5 + MaxMimeTypeLength + 64 + 8
)

// Scheme is what an attachment source is, by its URI scheme.
type Scheme string

// The four classes. Classification is truthful, not a policy: an http(s)
// source is SchemeURL even for a tool that will not fetch it; each tool
// decides what to accept.
const (
	SchemeData        Scheme = "data"
	SchemeURL         Scheme = "url"
	SchemeFile        Scheme = "file"
	SchemeUnsupported Scheme = "unsupported"
)

// Classify reports the scheme of source. The scheme is read exactly as RFC
// 3986 spells it (a letter, then letters, digits, "+", "-" or "."), before the
// first colon, case-insensitively. Nothing is trimmed: a source with leading
// whitespace is unsupported, on the server and in the hook alike.
func Classify(source string) Scheme {
	i := strings.IndexByte(source, ':')
	if i <= 0 {
		return SchemeUnsupported
	}
	scheme := source[:i]
	for j := 0; j < len(scheme); j++ {
		c := scheme[j]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return SchemeUnsupported
		}
	}
	switch strings.ToLower(scheme) {
	case "data":
		return SchemeData
	case "http", "https":
		return SchemeURL
	case "file":
		return SchemeFile
	}
	return SchemeUnsupported
}

// Attachment is the minimal common attachment shape. A tool that needs more
// fields declares its own; the hook carries unknown fields across untouched.
//
// Its tags are the argument schema of an attachment object; a tool taking
// one supplies Bounds for the size of data its source may carry.
type Attachment struct {
	// Source is a data: URI, an http(s) URL or a file:// URL.
	Source string `json:"source" minLength:"1" maxLength:"$attachment_source" description:"The document as a data: URI (data:text/markdown;base64,...). A file:// URL is rewritten into a data: URI by the arrowhead attachment hook on the client; http(s) URLs are not fetched here (use doc_retrieve)."`
	// Filename is an optional name hint (its extension helps pick the
	// document type).
	Filename string `json:"filename,omitempty" maxLength:"$attachment_filename" description:"Optional file name; its extension helps choose the document type."`
	// MimeType is an optional media type hint.
	MimeType string `json:"mime_type,omitempty" maxLength:"$attachment_mime_type" description:"Optional media type: text/markdown, application/json or text/plain."`
}

// DataURIMaxLength is the longest data: URI, in characters, that can carry
// maxDataBytes of base64-encoded payload. Percent-encoded payloads are larger
// than base64 for most binary data; they are accepted up to the same length.
func DataURIMaxLength(maxDataBytes int) int {
	if maxDataBytes < 0 {
		maxDataBytes = 0
	}
	return dataURIHeaderAllowance + 4*((maxDataBytes+2)/3)
}

// Bounds are the limits of Attachment's schema for a source that may carry
// up to maxDataBytes of data.
func Bounds(maxDataBytes int) catalog.Bounds {
	return catalog.Bounds{
		"attachment_source":    DataURIMaxLength(maxDataBytes),
		"attachment_filename":  MaxFilenameLength,
		"attachment_mime_type": MaxMimeTypeLength,
	}
}

// Caller-safe decoding errors. None carries any part of the input.
var (
	ErrNotDataURI      = errors.New("attachment source is not a data: URI")
	ErrMalformedData   = errors.New("attachment data: URI is malformed")
	ErrBadMediaType    = errors.New("attachment data: URI has an invalid media type")
	ErrBadCharset      = errors.New("attachment data: URI declares a charset other than UTF-8 or US-ASCII")
	ErrBadBase64       = errors.New("attachment data: URI has invalid base64 data")
	ErrBadPercent      = errors.New("attachment data: URI has invalid percent-encoding")
	ErrAttachmentLarge = errors.New("attachment data is too large")
)

// DecodeData decodes a data: URI of the form
// data:[<mime>][;charset=<cs>][;<param>=<value>]...[;base64],<payload>.
//
// A base64 payload may use the standard or the URL-safe alphabet, with or
// without padding; any other payload is percent-decoded. The size cap is
// checked before decoding, from the encoded length, and again on the decoded
// bytes. The returned media type is lowercased without parameters
// ("text/plain" when the URI names none). Errors are the package's
// caller-safe sentinels, wrapped only with limits.
func DecodeData(source string, maxBytes int) (data []byte, mimeType string, err error) {
	if Classify(source) != SchemeData {
		return nil, "", ErrNotDataURI
	}
	if maxBytes < 0 {
		maxBytes = 0
	}
	rest := source[len("data:"):]
	comma := strings.IndexByte(rest, ',')
	if comma < 0 {
		return nil, "", ErrMalformedData
	}
	header, payload := rest[:comma], rest[comma+1:]
	if len(header) > dataURIHeaderAllowance {
		return nil, "", ErrBadMediaType
	}
	isBase64 := false
	if i := strings.LastIndexByte(header, ';'); i >= 0 && strings.EqualFold(header[i+1:], "base64") {
		isBase64 = true
		header = header[:i]
	}
	mimeType, err = parseDataMediaType(header)
	if err != nil {
		return nil, "", err
	}
	if isBase64 {
		data, err = decodeBase64(payload, maxBytes)
	} else {
		data, err = decodePercent(payload, maxBytes)
	}
	if err != nil {
		return nil, "", err
	}
	return data, mimeType, nil
}

func tooLarge(maxBytes int) error {
	return fmt.Errorf("%w (the limit is %d bytes)", ErrAttachmentLarge, maxBytes)
}

// parseDataMediaType validates the media type part of a data: URI header.
func parseDataMediaType(header string) (string, error) {
	if header == "" {
		return "text/plain", nil
	}
	if strings.HasPrefix(header, ";") {
		// RFC 2397: parameters without a type default to text/plain.
		header = "text/plain" + header
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || strings.Count(mt, "/") != 1 || strings.HasPrefix(mt, "/") || strings.HasSuffix(mt, "/") {
		return "", ErrBadMediaType
	}
	if cs, ok := params["charset"]; ok {
		switch strings.ToLower(cs) {
		case "utf-8", "utf8", "us-ascii":
		default:
			return "", ErrBadCharset
		}
	}
	return mt, nil
}

// decodeBase64 accepts the standard or URL-safe alphabet, padded or not,
// and refuses a mix of the two alphabets, whitespace and non-canonical
// trailing bits.
func decodeBase64(payload string, maxBytes int) ([]byte, error) {
	unpadded := strings.TrimRight(payload, "=")
	pad := len(payload) - len(unpadded)
	if pad > 2 || (pad > 0 && len(payload)%4 != 0) {
		return nil, ErrBadBase64
	}
	// Cap check before decoding: n base64 characters carry floor(n*3/4)
	// bytes (computed without overflow for any string length).
	if n := len(unpadded); n/4*3+(n%4*3)/4 > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	std := strings.ContainsAny(unpadded, "+/")
	urlSafe := strings.ContainsAny(unpadded, "-_")
	enc := base64.RawStdEncoding
	switch {
	case std && urlSafe:
		return nil, ErrBadBase64
	case urlSafe:
		enc = base64.RawURLEncoding
	}
	// The raw decoders skip \r and \n; the data: form allows neither.
	if strings.ContainsAny(unpadded, "\r\n") {
		return nil, ErrBadBase64
	}
	data, err := enc.Strict().DecodeString(unpadded)
	if err != nil {
		return nil, ErrBadBase64
	}
	if len(data) > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	return data, nil
}

// decodePercent decodes a percent-encoded payload. Every byte takes at least
// one and at most three characters, so the decoded size is at least a third
// of the encoded length.
func decodePercent(payload string, maxBytes int) ([]byte, error) {
	if (len(payload)+2)/3 > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	s, err := url.PathUnescape(payload)
	if err != nil {
		return nil, ErrBadPercent
	}
	if len(s) > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	return []byte(s), nil
}

// Document media types and the extensions they map to.
var (
	markdownTypes = []string{"text/markdown", "text/x-markdown"}
	markdownExts  = []string{".md", ".markdown"}
	documentExts  = []string{".md", ".markdown", ".json", ".txt"}
)

// ErrNotDocument is the refusal for an attachment that is not one of the
// allowed document types.
var ErrNotDocument = errors.New("attachment is not an allowed document type")

// DocumentType chooses the document extension for an attachment of media
// type mimeType named filename, among allowed (extensions with the dot, such
// as ".md"; compared case-insensitively).
//
// text/markdown and text/x-markdown map to .md (or .markdown when that is the
// filename's extension), application/json to .json, text/plain to .txt unless
// the filename's extension names another document type. An empty type or
// application/octet-stream (what the hook sends for an unknown extension)
// falls back to the filename's extension alone. Every other type is refused,
// as is a result outside allowed. The error names the allowed extensions,
// never the type or name the caller sent.
func DocumentType(mimeType, filename string, allowed []string) (string, error) {
	mt := strings.ToLower(strings.TrimSpace(mimeType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	hint := extensionOf(filename)
	var candidates []string
	switch {
	case slices.Contains(markdownTypes, mt):
		candidates = preferHint(hint, markdownExts)
	case mt == "application/json":
		candidates = []string{".json"}
	case mt == "text/plain":
		// Plain text is what a Markdown or JSON file often travels as; the
		// name says which document it is.
		candidates = []string{".txt"}
		if slices.Contains(documentExts, hint) {
			candidates = []string{hint}
		}
	case mt == "" || mt == "application/octet-stream":
		if slices.Contains(documentExts, hint) {
			candidates = []string{hint}
		}
	}
	for _, c := range candidates {
		for _, a := range allowed {
			if strings.EqualFold(a, c) {
				return c, nil
			}
		}
	}
	return "", notDocument(allowed)
}

func notDocument(allowed []string) error {
	exts := slices.Clone(allowed)
	slices.Sort(exts)
	return fmt.Errorf("%w (allowed: %s)", ErrNotDocument, strings.Join(exts, ", "))
}

// preferHint orders candidates so the filename's extension comes first when
// it is one of them.
func preferHint(hint string, candidates []string) []string {
	if !slices.Contains(candidates, hint) {
		return candidates
	}
	out := []string{hint}
	for _, c := range candidates {
		if c != hint {
			out = append(out, c)
		}
	}
	return out
}

// extensionOf returns the lowercased extension of the last path element of
// name, with its dot, or "".
func extensionOf(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return ""
	}
	return strings.ToLower(name[i:])
}

// Resolved is an attachment ready to store.
type Resolved struct {
	// Data is the decoded document.
	Data []byte
	// Ext is the chosen document extension, one of the allowed ones.
	Ext string
	// Mime is the media type the extension was chosen from.
	Mime string
}

// Refusal messages for the non-data schemes.
const (
	msgURLSource = "An attachment URL is not fetched by this tool. Retrieve remote documents with " +
		"doc_retrieve, or send the document itself as a data: URI."
	msgUnsupportedSource = "The attachment source must be a data: URI (a local file:// URL is " +
		"turned into one by the arrowhead attachment hook on the client)."
	msgFileHint = "The attachment filename and mime_type must be plain values, not file:// URLs."
)

// Resolve turns an attachment into document bytes for a tool that stores
// documents of the allowed extensions, up to maxBytes.
//
//   - data: the decoded bytes, their media type (mime_type when given,
//     otherwise the URI's) and the document extension;
//   - http(s): a validation refusal pointing to doc_retrieve;
//   - file: the install-or-upgrade payload (MissingHookPayload): the hook
//     is not installed, or is older than the protocol;
//   - anything else: a validation refusal.
//
// Every refusal is a *catalog.ToolError whose text repeats nothing the
// caller sent.
func Resolve(att Attachment, allowedExt []string, maxBytes int) (Resolved, error) {
	if maxBytes <= 0 {
		// A wiring mistake, not a caller's: the boundary masks it.
		return Resolved{}, errors.New("attach: maxBytes must be positive")
	}
	if Classify(att.Filename) == SchemeFile || Classify(att.MimeType) == SchemeFile {
		return Resolved{}, catalog.Invalid(msgFileHint)
	}
	switch Classify(att.Source) {
	case SchemeData:
	case SchemeURL:
		return Resolved{}, catalog.Invalid(msgURLSource)
	case SchemeFile:
		return Resolved{}, MissingHookPayload(PayloadOptions{})
	default:
		return Resolved{}, catalog.Invalid(msgUnsupportedSource)
	}
	data, uriMime, err := DecodeData(att.Source, maxBytes)
	if err != nil {
		return Resolved{}, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	mt := uriMime
	if strings.TrimSpace(att.MimeType) != "" {
		if mt, err = parseDataMediaType(strings.TrimSpace(att.MimeType)); err != nil {
			return Resolved{}, catalog.Invalid("The attachment mime_type is not a valid media type with a UTF-8 or US-ASCII charset.")
		}
	}
	ext, err := DocumentType(mt, att.Filename, allowedExt)
	if err != nil {
		return Resolved{}, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	return Resolved{Data: data, Ext: ext, Mime: mt}, nil
}

// Client names a supported MCP client.
type Client string

// The supported clients, keyed as in the payload's setup_by_host.
const (
	ClientCursor     Client = "cursor"
	ClientClaudeCode Client = "claude_code"
	ClientCodex      Client = "codex"
	ClientVSCode     Client = "vscode"
)

// Clients lists the supported clients in a stable order.
func Clients() []Client {
	return []Client{ClientCursor, ClientClaudeCode, ClientCodex, ClientVSCode}
}

// ParseClient accepts a client key ("claude_code") or its command-line
// spelling ("claude-code").
func ParseClient(name string) (Client, bool) {
	c := Client(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_"))
	if slices.Contains(Clients(), c) {
		return c, true
	}
	return "", false
}

// ClientSetup is how one client registers the hook.
type ClientSetup struct {
	// Name is the client's display name.
	Name string `json:"name"`
	// ConfigFile is where the block goes.
	ConfigFile string `json:"config_file"`
	// Format is "json" or "toml".
	Format string `json:"format"`
	// Snippet is the registration block, merged into ConfigFile.
	Snippet string `json:"snippet"`
	// Requires names the client feature (and, approximately, the release)
	// the hook depends on.
	Requires string `json:"requires"`
	// Notes are client-specific caveats.
	Notes string `json:"notes,omitempty"`
}

// hookTimeoutSeconds is the per-call time a client gives the hook: reading
// and encoding a 25 MiB file takes well under a second; the margin covers
// slow disks.
const hookTimeoutSeconds = 30

// Setup returns the registration block of client c. The command line carries
// the protocol stamp in every format; the TOML block repeats it as a comment.
func Setup(c Client) (ClientSetup, bool) {
	cmd := HookCommandLine()
	cmdJSON, _ := json.Marshal(cmd)
	proto := strconv.Itoa(HookProtocolVersion)
	timeout := strconv.Itoa(hookTimeoutSeconds)
	switch c {
	case ClientCursor:
		return ClientSetup{
			Name:       "Cursor",
			ConfigFile: "~/.cursor/hooks.json (or <project>/.cursor/hooks.json)",
			Format:     "json",
			Snippet: `{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {
        "command": ` + string(cmdJSON) + `,
        "matcher": "MCP:"
      }
    ]
  }
}`,
			Requires: "a Cursor release whose hooks offer preToolUse with updated_input (2026)",
			Notes: "Register under preToolUse: beforeMCPExecution can allow or deny a call but cannot " +
				"change its input, so the hook denies file:// attachments it sees there. Cursor " +
				"requires a JSON permission answer on every call; the hook answers allow for calls " +
				"it does not change.",
		}, true
	case ClientClaudeCode:
		return ClientSetup{
			Name:       "Claude Code",
			ConfigFile: "~/.claude/settings.json (or <project>/.claude/settings.json)",
			Format:     "json",
			Snippet: `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "mcp__.*",
        "hooks": [
          {
            "type": "command",
            "command": ` + string(cmdJSON) + `,
            "timeout": ` + timeout + `
          }
        ]
      }
    ]
  }
}`,
			Requires: "a Claude Code release whose PreToolUse hooks honour updatedInput (2.0.x, from October 2025)",
			Notes: "A rewritten call is answered with permissionDecision allow, which skips the " +
				"interactive prompt for that call (your deny and ask rules still apply). To confirm " +
				"every attachment, add an ask rule for the tool, such as mcp__arrowhead__doc_write.",
		}, true
	case ClientCodex:
		return ClientSetup{
			Name:       "Codex CLI",
			ConfigFile: "~/.codex/config.toml (or ~/.codex/hooks.json in the Claude Code JSON form)",
			Format:     "toml",
			Snippet: `# arrowhead attachment hook, protocol=` + proto + `
[[hooks.PreToolUse]]
matcher = "mcp__.*"

[[hooks.PreToolUse.hooks]]
type = "command"
command = ` + string(cmdJSON) + `
timeout = ` + timeout,
			Requires: "Codex CLI 0.144.0 or later (PreToolUse updatedInput for MCP tools; hooks are on by default since 0.124.0)",
			Notes: "Codex applies updatedInput only together with permissionDecision allow, which the " +
				"hook sends. Codex may ask you to review a new or changed hook before it runs.",
		}, true
	case ClientVSCode:
		return ClientSetup{
			Name:       "VS Code (agent hooks)",
			ConfigFile: "<workspace>/.github/hooks/arrowhead-attachments.json (or a file under ~/.copilot/hooks)",
			Format:     "json",
			Snippet: `{
  "hooks": {
    "PreToolUse": [
      {
        "type": "command",
        "command": ` + string(cmdJSON) + `,
        "timeout": ` + timeout + `
      }
    ]
  }
}`,
			Requires: "VS Code 1.110 or later with agent hooks (Preview) enabled",
			Notes: "VS Code also loads hooks from ~/.claude/settings.json: register the hook in one " +
				"place only. VS Code ignores an updatedInput that does not match the tool's schema.",
		}, true
	}
	return ClientSetup{}, false
}

// PayloadOptions parameterise the install-or-upgrade payload. The zero value
// is valid.
type PayloadOptions struct {
	// ToolName is the tool that received the file:// source (default
	// "doc_write"). It is a server constant, never caller input.
	ToolName string
	// DocsURL points to the install guide (default DefaultDocsURL).
	DocsURL string
}

// MissingHookError is the machine-readable error code in the payload.
const MissingHookError = "attachment_hook_required"

// missingHookMessage is the self-sufficient message body. Field order is the
// reading order.
type missingHookMessage struct {
	Error       string                 `json:"error"`
	Summary     string                 `json:"summary"`
	HookCommand string                 `json:"hook_command"`
	MinVersion  int                    `json:"min_version"`
	Install     string                 `json:"install"`
	PrintConfig string                 `json:"print_config"`
	SetupByHost map[Client]ClientSetup `json:"setup_by_host"`
	AskUser     string                 `json:"ask_user"`
	DocsURL     string                 `json:"docs_url"`
}

// MissingHookPayload is the answer to a file:// attachment that reached the
// server: the hook is not installed, or it is older than the protocol and did
// not understand the call. Install and upgrade are one flow, so both get this
// payload.
//
// Message is self-sufficient JSON: the hook command, every client's
// registration block (setup_by_host), min_version, what to ask the user and
// the docs pointer. Data carries only hook_command, min_version and docs_url:
// transports spread Data beside Message, and a second copy of the blocks
// would double what a client transmits and a model reads.
func MissingHookPayload(opts PayloadOptions) *catalog.ToolError {
	tool := opts.ToolName
	if tool == "" {
		tool = "doc_write"
	}
	docs := opts.DocsURL
	if docs == "" {
		docs = DefaultDocsURL
	}
	setup := make(map[Client]ClientSetup, len(Clients()))
	for _, c := range Clients() {
		setup[c], _ = Setup(c)
	}
	msg := missingHookMessage{
		Error: MissingHookError,
		Summary: "The " + tool + " call carried a local file:// attachment. Local files are read on " +
			"the user's machine by the arrowhead attachment hook, which turns them into data: URIs " +
			"before the call is sent; it is not installed in this client, or it is older than " +
			"protocol " + strconv.Itoa(HookProtocolVersion) + ". Install or upgrade it, restart the " +
			"client, then retry the same call.",
		HookCommand: HookCommandLine(),
		MinVersion:  HookProtocolVersion,
		Install: "The hook is part of the arrowhead binary: install or upgrade arrowhead on the user's " +
			"machine (go install github.com/arrowhead-go/arrowhead/cmd/arrowhead@latest) so that " +
			"`" + HookCommand + " --version` prints protocol=" + strconv.Itoa(HookProtocolVersion) +
			" or later, then add the client's block from setup_by_host to its configuration file.",
		PrintConfig: "arrowhead hook print-config --client cursor|claude-code|codex|vscode",
		SetupByHost: setup,
		AskUser: "Ask the user whether to install (or upgrade) the arrowhead attachment hook in their " +
			"MCP client so local files can be attached, and which client they use. Until it is " +
			"installed, do not retry with a file:// source: send the document's text as content, " +
			"or as a data: URI, instead.",
		DocsURL: docs,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		// The message is built from constants; encoding cannot fail.
		panic("attach: encoding the missing-hook payload: " + err.Error())
	}
	return &catalog.ToolError{
		Kind:    catalog.KindValidation,
		Message: strings.TrimSuffix(b.String(), "\n"),
		Data: map[string]any{
			"hook_command": HookCommandLine(),
			"min_version":  HookProtocolVersion,
			"docs_url":     docs,
		},
	}
}
