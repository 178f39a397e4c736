// Command arrowhead serves the guarded MCP server and the tools around it.
//
//	arrowhead                      serve (transport from ARROWHEAD_TRANSPORT)
//	arrowhead serve                the same
//	arrowhead list-tools [--json]  the tools this configuration serves
//	arrowhead check-config         the effective configuration, secrets redacted
//	arrowhead check-policy FILE    validate an authorization policy
//	arrowhead hook attachments     the client-side attachment hook (stdin to stdout)
//	arrowhead hook print-config --client X
//	arrowhead migrate [--dry-run]  apply the embedded schema
//	arrowhead kill throw|lift|list  live kill-switch rules on the shared board
//	arrowhead canary new           mint canaries to plant
//	arrowhead attest fetch|verify|diff|pin|check  the signed tool-surface manifest
//	arrowhead audit verify --key KEY FILE...  verify hash-chained audit logs
//	arrowhead docs                 regenerate docs/reference/, .env.example and the tools' ceiling rows
//	arrowhead version              the build version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/arrowhead-go/arrowhead/adapters/config"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/cmd/arrowhead/internal/prefault"
	"github.com/arrowhead-go/arrowhead/cmd/arrowhead/internal/startgc"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if cmd != "serve" {
		// serve resumes collection once it is serving (settleStartup).
		startgc.Resume()
		prefault.Stop()
	}
	switch cmd {
	case "serve":
		return serveCmd(stdin, stdout, stderr)
	case "list-tools":
		return listToolsCmd(args, stdout, stderr)
	case "check-config":
		return checkConfigCmd(stdout, stderr)
	case "check-policy":
		return checkPolicyCmd(args, stdout, stderr)
	case "hook":
		return hookCmd(args, stdin, stdout, stderr)
	case "migrate":
		return migrateCmd(args, stdout, stderr)
	case "docs":
		return docsCmd(args, stdout, stderr)
	case "kill":
		return killCmd(args, stdout, stderr)
	case "canary":
		return canaryCmd(args, stdout, stderr)
	case "attest":
		return attestCmd(args, stdin, stdout, stderr)
	case "audit":
		return auditCmd(args, stdin, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "arrowhead %s\n", wire.Version)
		return exitOK
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "arrowhead: unknown command (see arrowhead help)\n")
	return exitUsage
}

const usage = `arrowhead: a hardened MCP server

  arrowhead [serve]              serve (ARROWHEAD_TRANSPORT: stdio or http)
  arrowhead list-tools [--json]  list the tools this configuration serves
  arrowhead check-config         print the effective configuration (secrets redacted)
  arrowhead check-policy FILE    validate an authorization policy file
  arrowhead hook attachments     run the client-side attachment hook (pre-tool-use JSON on stdin)
  arrowhead hook print-config --client cursor|claude-code|codex|vscode
                                 print a client's hook registration block
  arrowhead migrate [--dry-run]  apply the schema (chunk tables, memory tables) idempotently
  arrowhead kill throw [--tool NAME | --family ID] [--caller ID] [--for DURATION] [--reason TEXT]
  arrowhead kill lift ID | kill list [--json]
                                 live kill-switch rules on every replica (Redis or ARROWHEAD_STATE_DSN)
  arrowhead canary new [--host HOST] [--append FILE]
                                 mint canaries to plant (ARROWHEAD_CANARY_TOKENS / _FILE)
  arrowhead attest fetch|verify|diff|pin|check
                                 the signed tool-surface manifest (arrowhead attest help)
  arrowhead audit verify --key KEY FILE...
                                 verify hash-chained audit logs (several replicas' files)
  arrowhead docs                 regenerate docs/reference/, .env.example and the tools' ceiling rows (from the checkout's root)
  arrowhead version              print the version
`

// loadSettings reads the configuration, printing every problem on its own
// line (each naming its variable).
func loadSettings(stderr io.Writer) (*settings.Settings, bool) {
	s, _ := loadSettingsReason(stderr)
	return s, s != nil
}

// loadSettingsReason is loadSettings that also returns the problems as one
// line, for a client to show; the settings are nil on failure.
func loadSettingsReason(stderr io.Writer) (*settings.Settings, string) {
	s, err := config.Load(config.Options{})
	if err == nil {
		return s, ""
	}
	var se *settings.Error
	if errors.As(err, &se) {
		var reasons []string
		for _, p := range se.Problems {
			fmt.Fprintf(stderr, "arrowhead: invalid configuration: %s\n", p)
			reasons = append(reasons, oneLine(p.String()))
		}
		return nil, strings.Join(reasons, "; ")
	}
	fmt.Fprintf(stderr, "arrowhead: %v\n", err)
	return nil, oneLine(err.Error())
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
