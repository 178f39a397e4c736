package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// killTimeout bounds one kill-switch command against the board.
const killTimeout = 10 * time.Second

const killUsage = `usage:
  arrowhead kill throw [--tool NAME | --family ID] [--caller ID] [--for DURATION] [--reason TEXT]
      take a tool (or prompt or resource), a family (or "egress": every open-world tool),
      or with neither everything, out of service for one caller or (without --caller)
      for everyone; for a time (--for 30m) or until lifted
  arrowhead kill lift ID
  arrowhead kill list [--json]
The rules live on the shared board (ARROWHEAD_REDIS_URL, else ARROWHEAD_STATE_DSN) and
reach every replica within a second. The audit line goes to stderr.
`

// killCmd throws, lifts and lists live kill-switch rules on the shared
// board.
func killCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, killUsage)
		return exitUsage
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "throw", "lift", "list":
	default:
		fmt.Fprint(stderr, killUsage)
		return exitUsage
	}
	s, ok := loadSettings(stderr)
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	rt, err := wire.KillSwitch(ctx, s, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		if errors.Is(err, wire.ErrNoSharedBoard) {
			return exitUsage
		}
		return exitFailure
	}
	defer func() { _ = rt.Close(context.WithoutCancel(ctx)) }()
	actor := ports.NewPrincipal("cli:" + operatorName())
	switch sub {
	case "throw":
		return killThrow(ctx, rt.App, actor, args, stdout, stderr)
	case "lift":
		if len(args) != 1 {
			fmt.Fprint(stderr, killUsage)
			return exitUsage
		}
		found, err := rt.App.LiftKill(ctx, actor, args[0])
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: %v\n", err)
			return exitFailure
		}
		if !found {
			fmt.Fprintln(stderr, "arrowhead: no such rule")
			return exitFailure
		}
		fmt.Fprintln(stdout, "lifted")
		return exitOK
	default:
		return killList(ctx, rt.App, args, stdout, stderr)
	}
}

func killThrow(ctx context.Context, app *core.App, actor ports.Principal, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kill throw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var r ports.KillRule
	var forText string
	fs.StringVar(&r.Tool, "tool", "", "a tool, prompt or resource name")
	fs.StringVar(&r.Family, "family", "", `a family id, or "egress"`)
	fs.StringVar(&r.Caller, "caller", "", "the caller identity (a token's subject); empty: everyone")
	fs.StringVar(&forText, "for", "", "how long (30m, 2h, 3600 seconds); empty: until lifted")
	fs.StringVar(&r.Reason, "reason", "", "a short note for the audit line")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, killUsage)
		return exitUsage
	}
	if forText != "" {
		d, err := parseFor(forText)
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: --for: %v\n", err)
			return exitUsage
		}
		r.Until = time.Now().Add(d).UTC()
	}
	r, err := app.ThrowKill(ctx, actor, r)
	if err != nil && !errors.Is(err, ports.ErrKillBoardUnavailable) {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, core.DescribeRule(r))
	return exitOK
}

func parseFor(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		s = strconv.Itoa(n) + "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("must be a positive duration such as 30m or 3600")
	}
	return d, nil
}

func killList(ctx context.Context, app *core.App, args []string, stdout, stderr io.Writer) int {
	asJSON := len(args) == 1 && args[0] == "--json"
	if len(args) > 0 && !asJSON {
		fmt.Fprint(stderr, killUsage)
		return exitUsage
	}
	rules, err := app.KillRules(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	if asJSON {
		if rules == nil {
			rules = []ports.KillRule{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rules); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if len(rules) == 0 {
		fmt.Fprintln(stdout, "no rules in force")
	}
	for _, r := range rules {
		fmt.Fprintln(stdout, core.DescribeRule(r))
	}
	return exitOK
}

// operatorName names the person running the command in the audit line.
func operatorName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

const canaryUsage = `usage:
  arrowhead canary new [--host HOST] [--append FILE]
      mint realistic canaries (an AWS-shaped key pair, a URL on HOST, a password line):
      plant the lines it prints in a document, repository or database, and list the
      values in ARROWHEAD_CANARY_TOKENS or (with --append) in the ARROWHEAD_CANARY_FILE
`

// canaryCmd mints canaries.
func canaryCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "new" {
		fmt.Fprint(stderr, canaryUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("canary new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "", "the host of the canary URL (default wiki.internal.example.com)")
	appendTo := fs.String("append", "", "append the values to this canary file (created 0600)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, canaryUsage)
		return exitUsage
	}
	m, err := security.MintCanaries(nil, *host)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, "# Plant these lines where an intruder would look:")
	for _, l := range m.Lines {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintln(stdout)
	if *appendTo != "" {
		f, err := os.OpenFile(*appendTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "arrowhead: --append: the file cannot be opened for writing")
			return exitFailure
		}
		_, werr := fmt.Fprintln(f, strings.Join(m.Tokens, "\n"))
		if cerr := f.Close(); werr != nil || cerr != nil {
			fmt.Fprintln(stderr, "arrowhead: --append: the file could not be written")
			return exitFailure
		}
		fmt.Fprintln(stdout, "# The values were appended to the canary file (ARROWHEAD_CANARY_FILE).")
		return exitOK
	}
	fmt.Fprintln(stdout, "# And watch for them:")
	fmt.Fprintln(stdout, "ARROWHEAD_CANARY_TOKENS="+strings.Join(m.Tokens, ","))
	return exitOK
}
