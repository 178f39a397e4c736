package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/authz"
)

// maxPolicyFileBytes bounds check-policy's input.
const maxPolicyFileBytes = authz.MaxPolicyBytes + 1

func listToolsCmd(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	for _, a := range args {
		switch a {
		case "--json":
			asJSON = true
		default:
			fmt.Fprintln(stderr, "arrowhead: list-tools takes only --json")
			return exitUsage
		}
	}
	s, ok := loadSettings(stderr)
	if !ok {
		return exitUsage
	}
	cat, err := wire.Catalog(context.Background(), s)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cat); err != nil {
			fmt.Fprintf(stderr, "arrowhead: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tFAMILY\tSCOPE\tPER MINUTE\tHINTS")
	for _, t := range cat.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Name, t.Family, t.Scope, t.PerMinute, strings.Join(t.Hints, ", "))
	}
	_ = tw.Flush()
	return exitOK
}

func checkConfigCmd(stdout, stderr io.Writer) int {
	s, ok := loadSettings(stderr)
	if !ok {
		return exitFailure
	}
	if _, err := wire.Authorizer(s); err != nil {
		fmt.Fprintf(stderr, "arrowhead: invalid configuration: %v\n", err)
		return exitFailure
	}
	if err := wire.CheckStateNotServed(s); err != nil {
		fmt.Fprintf(stderr, "arrowhead: invalid configuration: %v\n", err)
		return exitFailure
	}
	for _, e := range s.Effective() {
		marker := ""
		if e.Value != e.Default && !(e.Secret && e.Value == "") {
			marker = "  # set"
		}
		fmt.Fprintf(stdout, "%s=%s%s\n", e.Name, e.Value, marker)
	}
	return exitOK
}

func checkPolicyCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "arrowhead: check-policy takes one FILE")
		return exitUsage
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "arrowhead: the policy file cannot be opened")
		return exitFailure
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyFileBytes))
	if err != nil {
		fmt.Fprintln(stderr, "arrowhead: the policy file cannot be read")
		return exitFailure
	}
	p, err := authz.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "policy OK: %d grants\n", len(p.Grants()))
	return exitOK
}
