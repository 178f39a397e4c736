package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowhead-go/arrowhead/internal/refdocs"
)

// modulePath is the module whose checkout docs writes into.
const modulePath = "github.com/arrowhead-go/arrowhead"

// docsCmd regenerates the reference documentation (docs/reference/ and
// .env.example) and the settings table's rows for the tools' own ceilings
// (core/settings/ceilings.go) in the repository checkout it is run from.
func docsCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "arrowhead: docs takes no arguments")
		return exitUsage
	}
	if !atModuleRoot() {
		fmt.Fprintf(stderr, "arrowhead: docs writes into the repository: run `%s` from the checkout's root\n", refdocs.Command)
		return exitUsage
	}
	files, err := refdocs.Files(context.Background())
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitFailure
	}
	for _, f := range files {
		if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Body) {
			fmt.Fprintf(stdout, "unchanged %s\n", f.Path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			fmt.Fprintf(stderr, "arrowhead: cannot create the directory of %s\n", f.Path)
			return exitFailure
		}
		if err := os.WriteFile(f.Path, f.Body, 0o644); err != nil {
			fmt.Fprintf(stderr, "arrowhead: cannot write %s\n", f.Path)
			return exitFailure
		}
		fmt.Fprintf(stdout, "wrote %s\n", f.Path)
	}
	return exitOK
}

// atModuleRoot reports whether the working directory holds this module's
// go.mod.
func atModuleRoot() bool {
	f, err := os.Open("go.mod")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(mod) == modulePath
		}
	}
	return false
}
