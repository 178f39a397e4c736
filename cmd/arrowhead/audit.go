package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
)

// exitUnvouched is audit verify's status when nothing was tampered with
// but some lines are not vouched for by a checkpoint: a chain without its
// shutdown checkpoint (a server still running or stopped abruptly, or a
// log cut short).
const exitUnvouched = 3

// maxKeyFileBytes bounds the --key file.
const maxKeyFileBytes = 64 << 10

// maxFindingsPerChain bounds what audit verify prints for one chain (a
// file given out of order would otherwise print every line of it).
const maxFindingsPerChain = 50

const auditUsage = `usage:
  arrowhead audit verify --key KEY FILE...
      verify hash-chained audit logs: every chain (one per server process) in the
      files, which may hold several replicas' lines and other log lines (skipped).
      KEY is the attestation public key the checkpoints must be signed by: a JWK
      (as the server publishes it), a JWK set of one key, or a PEM public key (the
      private key file also works). Give a chain's rotated files oldest first;
      FILE "-" is standard input.
Exit status: 0 every chain verifies and ends with its shutdown checkpoint;
1 a line was altered, deleted, reordered or inserted, or a checkpoint does not
verify; 3 nothing was tampered with but lines after the last checkpoint are
unsigned (a running or crashed server, or a log cut short); 2 usage.
`

// auditCmd runs the audit log's subcommands.
func auditCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, auditUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyPath := fs.String("key", "", "the attestation public key (JWK or PEM file)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() == 0 {
		fmt.Fprint(stderr, auditUsage)
		return exitUsage
	}
	if *keyPath == "" {
		// The auditor names the key they trust: a key read from the log
		// or from the server under audit would vouch for a forger too.
		fmt.Fprintln(stderr, "arrowhead: audit verify needs --key, the attestation public key the checkpoints must be signed by")
		return exitUsage
	}
	keyText, err := readBounded(*keyPath, maxKeyFileBytes)
	if err != nil {
		fmt.Fprintln(stderr, "arrowhead: the --key file cannot be read")
		return exitUsage
	}
	pub, err := signing.PublicKeyOf(keyText)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: --key: %v\n", err)
		return exitUsage
	}

	inputs := make([]telemetry.AuditInput, 0, fs.NArg())
	for i, name := range fs.Args() {
		if name == "-" {
			inputs = append(inputs, telemetry.AuditInput{Name: "(stdin)", R: stdin})
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead: file %d of %d cannot be opened\n", i+1, fs.NArg())
			return exitUsage
		}
		defer f.Close()
		inputs = append(inputs, telemetry.AuditInput{Name: name, R: f})
	}
	rep, err := telemetry.VerifyAuditLog(inputs, func(token []byte) ([]byte, error) { return signing.Verify(token, pub) })
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead: %v\n", err)
		return exitUsage
	}
	printAuditReport(stdout, rep)
	switch {
	case rep.Tampered():
		return exitFailure
	case len(rep.Findings) > 0:
		return exitUnvouched
	}
	return exitOK
}

func printAuditReport(w io.Writer, rep *telemetry.AuditReport) {
	for _, c := range rep.Chains {
		state := "closed by its shutdown checkpoint"
		switch {
		case c.VouchedSeq == 0:
			state = "no checkpoint verifies"
		case !c.Closed:
			state = fmt.Sprintf("vouched for up to seq %d, not closed", c.VouchedSeq)
		}
		fmt.Fprintf(w, "chain %s: seq %d-%d, %d lines, %d good checkpoints, %s\n", c.ID, c.First, c.Last, c.Lines, c.Checkpoints, state)
	}
	shown := map[string]int{}
	for _, f := range rep.Findings {
		shown[f.ChainID]++
		if shown[f.ChainID] <= maxFindingsPerChain {
			fmt.Fprintln(w, f.String())
		}
	}
	for _, c := range rep.Chains {
		if n := shown[c.ID]; n > maxFindingsPerChain {
			fmt.Fprintf(w, "... and %d more findings in chain %s\n", n-maxFindingsPerChain, c.ID)
		}
	}
	if n := shown[""]; n > maxFindingsPerChain {
		fmt.Fprintf(w, "... and %d more findings outside any chain\n", n-maxFindingsPerChain)
	}
	verdict := "every chain verifies"
	switch {
	case rep.Tampered():
		verdict = "TAMPERED: the log was changed where shown"
	case len(rep.Findings) > 0:
		verdict = "no tampering found, but some lines are not vouched for by a checkpoint"
	}
	fmt.Fprintf(w, "%d audit lines in %d chains; %d other lines skipped; %s\n", rep.AuditLines, len(rep.Chains), rep.Skipped, verdict)
}

// readBounded reads at most limit bytes of the file at path.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
