package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/core"
)

const attestUsage = `arrowhead attest: the signed tool-surface manifest (docs/attestation.md)

  arrowhead attest fetch [--url URL] [--out FILE]
        fetch the current attestation (arrowhead://attestation): over stdio by
        starting this arrowhead with the current environment, or from a running
        server over streamable HTTP (bearer token in ARROWHEAD_ATTEST_TOKEN)
  arrowhead attest verify MANIFEST --key KEY
        verify the signature offline with the public key (JWK, JWK set or PEM)
        and print the manifest's SHA-256; exit 1 when it does not verify
  arrowhead attest diff OLD NEW
        name what changed between two manifests; exit 1 when anything did
  arrowhead attest pin MANIFEST --key KEY [--out FILE]
        verify, then write a pin file (digest, key and manifest)
  arrowhead attest check --pin FILE MANIFEST
        exit 1, naming what changed, when MANIFEST is not signed by the pinned
        key or its surface differs from the pin

MANIFEST is a file ("-" for stdin) holding the attestation resource's JSON,
a resources/read response carrying it, or the bare compact JWS; diff also
reads bare manifests and pin files.
`

// Formats of the files the CLI writes.
const (
	pinFormat = "arrowhead.pin/v1"
	// attestTokenVar holds the bearer token fetch --url sends.
	attestTokenVar = "ARROWHEAD_ATTEST_TOKEN"
	// fetchTimeout bounds starting (or reaching) the server and reading
	// the attestation.
	fetchTimeout = 60 * time.Second
	// maxAttestFileBytes bounds a manifest, key or pin file.
	maxAttestFileBytes = 16 << 20
)

// errSurfaceChanged marks a check that ran but found a different surface.
var errSurfaceChanged = errors.New("the surface differs from the pin")

func attestCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, attestUsage)
		return exitUsage
	}
	switch args[0] {
	case "fetch":
		return attestFetchCmd(args[1:], stdout, stderr)
	case "verify":
		return attestVerifyCmd(args[1:], stdin, stdout, stderr)
	case "diff":
		return attestDiffCmd(args[1:], stdin, stdout, stderr)
	case "pin":
		return attestPinCmd(args[1:], stdin, stdout, stderr)
	case "check":
		return attestCheckCmd(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, attestUsage)
		return exitOK
	}
	fmt.Fprint(stderr, "arrowhead attest: unknown subcommand (see arrowhead attest help)\n")
	return exitUsage
}

// parseArgs parses a subcommand's flags, which may come before or after
// its positional arguments (verify MANIFEST --key KEY), and returns the
// positional ones. Arguments valid refuses get the subcommand's usage
// line on stderr and false, as a flag error does.
func parseArgs(flags *flag.FlagSet, args []string, valid func(pos []string) bool, usage string) ([]string, bool) {
	var pos []string
	for {
		if err := flags.Parse(args); err != nil {
			return nil, false
		}
		args = flags.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if !valid(pos) {
		fmt.Fprintf(flags.Output(), "%s: %s\n", flags.Name(), usage)
		return nil, false
	}
	return pos, true
}

// readLimited reads a file named on the command line ("-" is stdin). The
// error names the role, never the path.
func readLimited(role, path string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("%s: cannot be read from stdin here", role)
		}
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot be opened", role)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxAttestFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be read", role)
	}
	if len(b) > maxAttestFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", role, maxAttestFileBytes>>20)
	}
	return b, nil
}

// surfaceDoc is a manifest as read from a file: signed (an attestation or
// a bare JWS) or not (a bare manifest, a pin).
type surfaceDoc struct {
	manifest []byte
	jws      string
	// claimed is the digest the document states, checked against the
	// manifest it carries.
	claimed string
	pin     *pinFile
}

// pinFile is what attest pin writes: the pinned digest, the key that signed
// it and the manifest itself, so a check can name what changed.
type pinFile struct {
	Format    string          `json:"format"`
	Algorithm string          `json:"algorithm"`
	Digest    string          `json:"digest"`
	KeyID     string          `json:"kid"`
	Key       json.RawMessage `json:"key"`
	Manifest  json.RawMessage `json:"manifest"`
}

func parseSurface(role string, text []byte) (surfaceDoc, error) {
	text = bytes.TrimSpace(text)
	if len(text) == 0 || text[0] != '{' {
		return surfaceFromJWS(role, string(text), "")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(text, &obj); err != nil {
		return surfaceDoc{}, fmt.Errorf("%s: not JSON", role)
	}
	var format string
	_ = json.Unmarshal(obj["format"], &format)
	switch {
	case obj["jws"] != nil:
		var att core.Attestation
		if err := json.Unmarshal(text, &att); err != nil || att.Format != core.AttestationFormat {
			return surfaceDoc{}, fmt.Errorf("%s: not an %s document", role, core.AttestationFormat)
		}
		return surfaceFromJWS(role, att.JWS, att.Digest)
	case obj["result"] != nil:
		// A JSON-RPC response to resources/read.
		return parseSurface(role, obj["result"])
	case obj["contents"] != nil:
		var res struct {
			Contents []struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(text, &res); err != nil || len(res.Contents) != 1 || res.Contents[0].URI != core.AttestationURI {
			return surfaceDoc{}, fmt.Errorf("%s: not a read of %s", role, core.AttestationURI)
		}
		return parseSurface(role, []byte(res.Contents[0].Text))
	case format == pinFormat:
		var pin pinFile
		if err := json.Unmarshal(text, &pin); err != nil {
			return surfaceDoc{}, fmt.Errorf("%s: not a pin file", role)
		}
		manifest, err := core.Canonicalize(pin.Manifest)
		if err != nil {
			return surfaceDoc{}, fmt.Errorf("%s: the pin's manifest is not JSON", role)
		}
		return surfaceDoc{manifest: manifest, claimed: pin.Digest, pin: &pin}, nil
	case format == core.ManifestFormat:
		manifest, err := core.Canonicalize(text)
		if err != nil {
			return surfaceDoc{}, fmt.Errorf("%s: not JSON", role)
		}
		return surfaceDoc{manifest: manifest}, nil
	}
	return surfaceDoc{}, fmt.Errorf("%s: not an attestation, manifest or pin", role)
}

// surfaceFromJWS reads a compact JWS's payload without verifying it: diff
// reads unverified manifests; verify and check verify before trusting one.
func surfaceFromJWS(role, token, claimed string) (surfaceDoc, error) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return surfaceDoc{}, fmt.Errorf("%s: not a compact JWS", role)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return surfaceDoc{}, fmt.Errorf("%s: not a compact JWS", role)
	}
	return surfaceDoc{manifest: payload, jws: strings.TrimSpace(token), claimed: claimed}, nil
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// verifySurface checks doc's signature with pub and that what it signs is a
// canonical manifest whose digest is the one doc claims; it returns the
// verified manifest's digest.
func verifySurface(doc surfaceDoc, pub jwk.Key) (string, error) {
	if doc.jws == "" {
		return "", errors.New("the document carries no signature (a bare manifest or a pin)")
	}
	payload, err := signing.Verify([]byte(doc.jws), pub)
	if err != nil {
		return "", err
	}
	if canon, err := core.Canonicalize(payload); err != nil || !bytes.Equal(canon, payload) {
		return "", errors.New("the signed payload is not a canonical manifest")
	}
	if _, err := core.ManifestOf(payload); err != nil {
		return "", err
	}
	digest := digestOf(payload)
	if doc.claimed != "" && doc.claimed != digest {
		return "", errors.New("the stated digest is not the signed manifest's")
	}
	return digest, nil
}

func readKey(path string, stdin io.Reader) (jwk.Key, error) {
	text, err := readLimited("KEY", path, stdin)
	if err != nil {
		return nil, err
	}
	return signing.PublicKeyOf(text)
}

func readSurface(role, path string, stdin io.Reader) (surfaceDoc, error) {
	text, err := readLimited(role, path, stdin)
	if err != nil {
		return surfaceDoc{}, err
	}
	return parseSurface(role, text)
}

func attestVerifyCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead attest verify", flag.ContinueOnError)
	flags.SetOutput(stderr)
	keyPath := flags.String("key", "", "the public key: a JWK, a JWK set of one key, or a PEM")
	pos, ok := parseArgs(flags, args, func(pos []string) bool { return len(pos) == 1 && *keyPath != "" },
		"usage: arrowhead attest verify MANIFEST --key KEY")
	if !ok {
		return exitUsage
	}
	pub, err := readKey(*keyPath, stdin)
	if err == nil {
		var doc surfaceDoc
		if doc, err = readSurface("MANIFEST", pos[0], stdin); err == nil {
			var digest string
			if digest, err = verifySurface(doc, pub); err == nil {
				fmt.Fprintln(stdout, digest)
				return exitOK
			}
		}
	}
	fmt.Fprintf(stderr, "arrowhead attest verify: %v\n", err)
	return exitFailure
}

func attestDiffCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead attest diff", flag.ContinueOnError)
	flags.SetOutput(stderr)
	pos, ok := parseArgs(flags, args, func(pos []string) bool { return len(pos) == 2 },
		"usage: arrowhead attest diff OLD NEW")
	if !ok {
		return exitUsage
	}
	var docs [2]surfaceDoc
	for i, role := range []string{"OLD", "NEW"} {
		doc, err := readSurface(role, pos[i], stdin)
		if err != nil {
			fmt.Fprintf(stderr, "arrowhead attest diff: %v\n", err)
			return exitUsage
		}
		docs[i] = doc
	}
	changes, err := surfaceChanges(docs[0].manifest, docs[1].manifest)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest diff: %v\n", err)
		return exitUsage
	}
	if len(changes) == 0 {
		return exitOK
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	return exitFailure
}

// surfaceChanges names the differences between two manifests; manifests
// whose bytes differ in a way no field shows still report one line.
func surfaceChanges(old, cur []byte) ([]string, error) {
	om, err := core.ManifestOf(old)
	if err != nil {
		return nil, fmt.Errorf("OLD: %w", err)
	}
	cm, err := core.ManifestOf(cur)
	if err != nil {
		return nil, fmt.Errorf("NEW: %w", err)
	}
	var out []string
	for _, c := range core.DiffManifests(om, cm) {
		out = append(out, c.String())
	}
	if len(out) == 0 && digestOf(old) != digestOf(cur) {
		out = append(out, "manifest: changed (the bytes differ, no field does)")
	}
	return out, nil
}

func attestPinCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead attest pin", flag.ContinueOnError)
	flags.SetOutput(stderr)
	keyPath := flags.String("key", "", "the public key the manifest must be signed with")
	out := flags.String("out", "", "write the pin file here (default stdout)")
	pos, ok := parseArgs(flags, args, func(pos []string) bool { return len(pos) == 1 && *keyPath != "" },
		"usage: arrowhead attest pin MANIFEST --key KEY [--out FILE]")
	if !ok {
		return exitUsage
	}
	pin, err := pinOf(pos[0], *keyPath, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest pin: %v\n", err)
		return exitFailure
	}
	body, err := json.MarshalIndent(pin, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest pin: %v\n", err)
		return exitFailure
	}
	body = append(body, '\n')
	if *out == "" {
		_, _ = stdout.Write(body)
		return exitOK
	}
	if err := os.WriteFile(*out, body, 0o644); err != nil {
		fmt.Fprint(stderr, "arrowhead attest pin: the pin file cannot be written\n")
		return exitFailure
	}
	fmt.Fprintln(stdout, pin.Digest)
	return exitOK
}

func pinOf(manifestPath, keyPath string, stdin io.Reader) (pinFile, error) {
	pub, err := readKey(keyPath, stdin)
	if err != nil {
		return pinFile{}, err
	}
	doc, err := readSurface("MANIFEST", manifestPath, stdin)
	if err != nil {
		return pinFile{}, err
	}
	digest, err := verifySurface(doc, pub)
	if err != nil {
		return pinFile{}, err
	}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return pinFile{}, err
	}
	keyJSON, err := json.Marshal(pub)
	if err != nil {
		return pinFile{}, err
	}
	return pinFile{Format: pinFormat, Algorithm: "sha256", Digest: digest,
		KeyID: base64.RawURLEncoding.EncodeToString(thumb), Key: keyJSON, Manifest: doc.manifest}, nil
}

func attestCheckCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead attest check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	pinPath := flags.String("pin", "", "the pin file (arrowhead attest pin)")
	pos, ok := parseArgs(flags, args, func(pos []string) bool { return len(pos) == 1 && *pinPath != "" },
		"usage: arrowhead attest check --pin FILE MANIFEST")
	if !ok {
		return exitUsage
	}
	pin, err := readPin(*pinPath, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest check: %v\n", err)
		return exitFailure
	}
	doc, err := readSurface("MANIFEST", pos[0], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest check: %v\n", err)
		return exitFailure
	}
	changes, err := checkAgainstPin(pin, doc)
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest check: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, pin.pin.Digest)
	return exitOK
}

func readPin(path string, stdin io.Reader) (surfaceDoc, error) {
	doc, err := readSurface("PIN", path, stdin)
	if err == nil && doc.pin == nil {
		err = errors.New("PIN: not a pin file (arrowhead attest pin writes one)")
	}
	if err == nil && digestOf(doc.manifest) != doc.pin.Digest {
		err = errors.New("PIN: its digest is not its manifest's")
	}
	return doc, err
}

// checkAgainstPin verifies doc with the pinned key and compares its surface
// with the pinned one. On a different surface it returns what changed and
// errSurfaceChanged.
func checkAgainstPin(pin, doc surfaceDoc) ([]string, error) {
	pub, err := signing.PublicKeyOf(pin.pin.Key)
	if err != nil {
		return nil, fmt.Errorf("PIN: %w", err)
	}
	digest, err := verifySurface(doc, pub)
	if err != nil {
		return nil, fmt.Errorf("not signed by the pinned key: %w", err)
	}
	if digest == pin.pin.Digest {
		return nil, nil
	}
	changes, err := surfaceChanges(pin.manifest, doc.manifest)
	if err != nil {
		return nil, err
	}
	return changes, errSurfaceChanged
}

func attestFetchCmd(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("arrowhead attest fetch", flag.ContinueOnError)
	flags.SetOutput(stderr)
	url := flags.String("url", "", "a running server's streamable HTTP endpoint (.../mcp); default: start this arrowhead over stdio")
	out := flags.String("out", "", "write the attestation here (default stdout)")
	if _, ok := parseArgs(flags, args, func(pos []string) bool { return len(pos) == 0 }, "unexpected arguments"); !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	body, err := fetchAttestation(ctx, *url)
	if err != nil {
		fmt.Fprintf(stderr, "arrowhead attest fetch: %v\n", err)
		return exitFailure
	}
	body = append(body, '\n')
	if *out == "" {
		_, _ = stdout.Write(body)
		return exitOK
	}
	if err := os.WriteFile(*out, body, 0o644); err != nil {
		fmt.Fprint(stderr, "arrowhead attest fetch: the output file cannot be written\n")
		return exitFailure
	}
	return exitOK
}

// fetchAttestation reads arrowhead://attestation from a server, as an MCP
// client: a running one over streamable HTTP when url is set, otherwise
// this executable started over stdio with the current environment (what a
// client that launches arrowhead gets, with the same configuration). It also
// lists the tools and refuses an attestation whose digest differs from the
// one tools/list carries.
func fetchAttestation(ctx context.Context, url string) ([]byte, error) {
	var c *client.Client
	if url != "" {
		headers := map[string]string{}
		if tok := os.Getenv(attestTokenVar); tok != "" {
			headers["Authorization"] = "Bearer " + tok
		}
		var err error
		c, err = client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
		if err != nil {
			return nil, errors.New("the URL is not usable")
		}
	} else {
		exe, err := os.Executable()
		if err != nil {
			return nil, errors.New("cannot find this executable to start")
		}
		tr := transport.NewStdioWithOptions(exe, nil, []string{"serve"},
			transport.WithCommandStderrWriter(io.Discard),
			transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, command, args...)
				cmd.Env = append(os.Environ(), "ARROWHEAD_TRANSPORT=stdio")
				return cmd, nil
			}))
		if err := tr.Start(ctx); err != nil {
			return nil, errors.New("the server did not start")
		}
		c = client.NewClient(tr)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, errors.New("the server cannot be reached")
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "arrowhead-attest", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		if url == "" {
			// The server we started explains a configuration it refuses.
			return nil, fmt.Errorf("initialize failed: %s", oneLine(err.Error()))
		}
		// HTTP transport errors quote the URL: say what failed instead.
		return nil, errors.New("initialize failed (the server did not answer or refused the token)")
	}
	var read mcp.ReadResourceRequest
	read.Params.URI = core.AttestationURI
	res, err := c.ReadResource(ctx, read)
	if err != nil {
		return nil, errors.New("reading " + core.AttestationURI + " failed (the caller may not see it, or the server has no attestation key)")
	}
	if len(res.Contents) != 1 {
		return nil, errors.New("the attestation resource answered unexpectedly")
	}
	text, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		return nil, errors.New("the attestation resource answered unexpectedly")
	}
	var att core.Attestation
	if err := json.Unmarshal([]byte(text.Text), &att); err != nil || att.Format != core.AttestationFormat {
		return nil, errors.New("the attestation resource answered unexpectedly")
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, errors.New("tools/list failed")
	}
	if listed := listedDigest(tools); listed != att.Digest {
		return nil, errors.New("the digest in tools/list _meta is not the attestation's")
	}
	return []byte(text.Text), nil
}

// listedDigest is the manifest digest a tools/list result carries in _meta.
func listedDigest(r *mcp.ListToolsResult) string {
	if r == nil || r.Meta == nil {
		return ""
	}
	entry, _ := r.Meta.AdditionalFields[mcpadapter.AttestationMetaKey].(map[string]any)
	digest, _ := entry["digest"].(string)
	return digest
}
