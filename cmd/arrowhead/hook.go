package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/attach"
)

const hookUsage = `arrowhead hook: the client-side attachment hook

  arrowhead hook attachments [--protocol=N]
        read a client's pre-tool-use JSON on stdin, turn file:// attachments
        into data: URIs, print the client's answer on stdout
  arrowhead hook attachments --pin FILE [--server NAME] [--attest-url URL]
        the same, first refusing any call to the pinned server (NAME, default
        arrowhead) while its signed tool surface differs from the pin
        (arrowhead attest pin; docs/attestation.md)
  arrowhead hook attachments --version
        print the hook protocol version
  arrowhead hook print-config [--client cursor|claude-code|codex|vscode]
        print a client's registration block (every client's without --client)
`

// hookCmd dispatches the hook subcommands.
func hookCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, hookUsage)
		return exitUsage
	}
	switch args[0] {
	case "attachments":
		return hookAttachmentsCmd(args[1:], stdin, stdout, stderr)
	case "print-config":
		return hookPrintConfigCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, hookUsage)
		return exitOK
	}
	fmt.Fprint(stderr, "arrowhead hook: unknown subcommand (see arrowhead hook help)\n")
	return exitUsage
}

// hookAttachmentsCmd runs the hook. Every client in setup_by_host reads the
// answer from stdout on exit status 0, a denial included, so the status is 0
// whenever an answer was printed. A failure to answer exits 1, which Claude
// Code, Codex and VS Code treat as a non-blocking hook error (the call goes
// on unchanged, and a file:// source then reaches the server, which explains
// itself).
func hookAttachmentsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead hook attachments", flag.ContinueOnError)
	flags.SetOutput(stderr)
	version := flags.Bool("version", false, "print the hook protocol version and exit")
	protocol := flags.Int("protocol", 0, "the protocol the registration was written for (informational)")
	pinPath := flags.String("pin", "", "refuse calls to the pinned server while its surface differs from this pin file")
	server := flags.String("server", "arrowhead", "the name the client registered the pinned server under")
	attestURL := flags.String("attest-url", "", "read the surface from this running server (.../mcp) instead of starting arrowhead over stdio")
	if err := flags.Parse(args); err != nil {
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprint(stderr, "arrowhead hook attachments: unexpected arguments\n")
		return exitUsage
	}
	if *version {
		fmt.Fprintf(stdout, "%s protocol=%d\n", attach.HookCommand, attach.HookProtocolVersion)
		return exitOK
	}
	if *protocol > attach.HookProtocolVersion {
		fmt.Fprintf(stderr, "arrowhead hook attachments: the registration names protocol %d, this arrowhead speaks protocol %d; upgrade arrowhead\n",
			*protocol, attach.HookProtocolVersion)
	}
	in, err := io.ReadAll(io.LimitReader(stdin, attach.MaxHookInputBytes+1))
	if err != nil {
		fmt.Fprint(stderr, "arrowhead hook attachments: could not read the hook input\n")
		return exitFailure
	}
	if len(in) > attach.MaxHookInputBytes {
		// Too large to parse, so the client is unknown: answer "no change".
		fmt.Fprintf(stderr, "arrowhead hook attachments: hook input over %d MiB left unchanged\n", attach.MaxHookInputBytes>>20)
		in = nil
	}
	if *pinPath != "" {
		if reason := pinnedSurfaceRefusal(in, *pinPath, *server, *attestURL); reason != "" {
			out, err := attach.Deny(in, reason)
			if err != nil {
				fmt.Fprint(stderr, "arrowhead hook attachments: could not build an answer\n")
				return exitFailure
			}
			_, _ = stdout.Write(out)
			return exitOK
		}
	}
	out, err := attach.RunHook(in, attach.OpenRegular)
	if err != nil {
		fmt.Fprint(stderr, "arrowhead hook attachments: could not build an answer\n")
		return exitFailure
	}
	if _, err := stdout.Write(out); err != nil {
		return exitFailure
	}
	return exitOK
}

// hookPrintConfigCmd prints one client's registration block, ready to merge
// into its configuration file, or every client's under a comment header.
func hookPrintConfigCmd(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead hook print-config", flag.ContinueOnError)
	flags.SetOutput(stderr)
	client := flags.String("client", "", "cursor, claude-code, codex or vscode (default: all)")
	if err := flags.Parse(args); err != nil {
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprint(stderr, "arrowhead hook print-config: unexpected arguments\n")
		return exitUsage
	}
	if *client != "" {
		c, ok := attach.ParseClient(*client)
		if !ok {
			fmt.Fprint(stderr, "arrowhead hook print-config: --client must be cursor, claude-code, codex or vscode\n")
			return exitUsage
		}
		setup, _ := attach.Setup(c)
		fmt.Fprintln(stdout, setup.Snippet)
		return exitOK
	}
	var b strings.Builder
	for i, c := range attach.Clients() {
		setup, ok := attach.Setup(c)
		if !ok {
			fmt.Fprint(stderr, "arrowhead hook print-config: a client has no registration block\n")
			return exitFailure
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# %s (--client %s): merge into %s\n# requires %s\n%s\n",
			setup.Name, strings.ReplaceAll(string(c), "_", "-"), setup.ConfigFile, setup.Requires, setup.Snippet)
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return exitFailure
	}
	return exitOK
}

// pinnedSurfaceRefusal is the pre-call check of a pinned client: for a call
// to the pinned server it reads the server's current signed attestation
// (as attest fetch does) and checks it against the pin (as attest check
// does). It returns why the call must be refused, or "" to go on. It fails
// closed: a surface that cannot be read or verified refuses the call.
// Calls to other servers are not looked at.
func pinnedSurfaceRefusal(in []byte, pinPath, server, url string) string {
	var call struct {
		ToolName string `json:"tool_name"`
	}
	if json.Unmarshal(in, &call) != nil || call.ToolName == "" {
		return ""
	}
	pin, err := readPin(pinPath, nil)
	if err != nil {
		return "the surface pin cannot be read; fix or remove --pin"
	}
	if !callsPinnedServer(call.ToolName, server, pin) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	body, err := fetchAttestation(ctx, url)
	if err != nil {
		return "the server's signed tool surface could not be read, so the pin cannot be confirmed"
	}
	doc, err := parseSurface("attestation", body)
	if err != nil {
		return "the server's signed tool surface could not be read, so the pin cannot be confirmed"
	}
	changes, err := checkAgainstPin(pin, doc)
	switch {
	case errors.Is(err, errSurfaceChanged):
		const shown = 5
		more := ""
		if len(changes) > shown {
			more = fmt.Sprintf("; and %d more", len(changes)-shown)
			changes = changes[:shown]
		}
		return "the server's tool surface differs from the pinned one (" + strings.Join(changes, "; ") + more +
			"); review it with arrowhead attest check and re-pin"
	case err != nil:
		return "the server's tool surface is not signed by the pinned key"
	}
	return ""
}

// callsPinnedServer reports whether a client's tool name names a tool of
// the pinned server: mcp__SERVER__tool (Claude Code, Codex), mcp_SERVER_tool
// (VS Code), or MCP:tool (Cursor, which does not name the server) for a
// tool the pinned surface lists.
func callsPinnedServer(toolName, server string, pin surfaceDoc) bool {
	if strings.HasPrefix(toolName, "mcp__"+server+"__") || strings.HasPrefix(toolName, "mcp_"+server+"_") {
		return true
	}
	bare, ok := strings.CutPrefix(toolName, "MCP:")
	if !ok {
		return false
	}
	m, err := core.ManifestOf(pin.manifest)
	if err != nil {
		return true
	}
	for _, t := range m.Tools {
		if t.Name == bare {
			return true
		}
	}
	return false
}
