package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/ports"
)

// auditLog writes a closed chain of n records to a file and returns its
// path and the key's data directory.
func auditLog(t *testing.T, n int) (logPath, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	key, err := signing.Load("", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"time":"2026-12-02T06:00:00Z","level":"info","msg":"server started"}` + "\n")
	sink, err := telemetry.NewChainedAuditSink(&buf, telemetry.Chain{Signer: key, CheckpointLines: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		sink.Record(context.Background(), ports.AuditRecord{Time: time.Unix(int64(i), 0), Subject: "alice",
			Kind: ports.ComponentTool, Name: "calculate", Status: ports.StatusOK})
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	logPath = filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(logPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return logPath, dataDir
}

func runAudit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"audit"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditVerifyCommand(t *testing.T) {
	logPath, dataDir := auditLog(t, 25)
	keyFile := filepath.Join(dataDir, signing.FileName)
	key, err := signing.Load("", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	jwkFile := filepath.Join(t.TempDir(), "key.jwk")
	if err := os.WriteFile(jwkFile, key.PublicJWK(), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, k := range []string{jwkFile, keyFile} {
		code, out, errs := runAudit(t, "verify", "--key", k, logPath)
		if code != exitOK || !strings.Contains(out, "28 audit lines in 1 chains; 1 other lines skipped; every chain verifies") {
			t.Fatalf("untouched log with key %s: exit %d\n%s%s", filepath.Base(k), code, out, errs)
		}
	}

	text, _ := os.ReadFile(logPath)
	lines := strings.SplitAfter(string(text), "\n")
	write := func(ls []string) string {
		p := filepath.Join(t.TempDir(), "audit.log")
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Line 6 of the file is seq 5: an edit there is named.
	edited := append([]string(nil), lines...)
	edited[5] = strings.Replace(edited[5], `"subject":"alice"`, `"subject":"bob"`, 1)
	p := write(edited)
	code, out, _ := runAudit(t, "verify", "--key", jwkFile, p)
	if code != exitFailure || !strings.Contains(out, p+":6: chain ") || !strings.Contains(out, "seq 5 altered") || !strings.Contains(out, "TAMPERED") {
		t.Fatalf("edited: exit %d\n%s", code, out)
	}

	// Cut after seq 16 (file line 17): vouched up to the checkpoint at
	// seq 11 (file line 12), five lines unsigned; exit 3, not tampering.
	p = write(lines[:17])
	code, out, _ = runAudit(t, "verify", "--key", jwkFile, p)
	if code != exitUnvouched || !strings.Contains(out, "verified up to checkpoint at seq 11 ("+p+":12); 5 lines after it unsigned") {
		t.Fatalf("truncated: exit %d\n%s", code, out)
	}

	// Another key: every checkpoint fails.
	other := t.TempDir()
	if _, err := signing.Load("", other); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAudit(t, "verify", "--key", filepath.Join(other, signing.FileName), logPath)
	if code != exitFailure || strings.Count(out, "bad_checkpoint") != 3 {
		t.Fatalf("other key: exit %d\n%s", code, out)
	}

	// From standard input, as a pipe from a server's stderr.
	var stdout, stderr bytes.Buffer
	code = run([]string{"audit", "verify", "--key", jwkFile, "-"}, bytes.NewReader(text), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("stdin: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	// Usage: no key, no file, a missing file (not named back).
	for _, args := range [][]string{{"verify", logPath}, {"verify", "--key", jwkFile}, {"verify", "--key", jwkFile, "/nonexistent/secret-name.log"}, {"check"}} {
		code, _, errs := runAudit(t, args...)
		if code != exitUsage || strings.Contains(errs, "secret-name") {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
	}
}
