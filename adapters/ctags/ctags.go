// Package ctags is the universal-ctags adapter of ports.SymbolTagger: the
// symbols of languages the core has no parser for, from Universal Ctags
// run as a bounded subprocess. It runs ctags in its interactive sandbox
// mode, which reads each file's content from stdin and, under a seccomp
// filter, cannot open files; option files are not loaded (--options=NONE),
// no shell is involved, the environment is empty, and every run has a
// deadline and an output cap.
package ctags

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults for Config.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxOutputBytes = 16 << 20
	// probeTimeout bounds the version and feature checks at start-up.
	probeTimeout = 5 * time.Second
	// maxLineBytes bounds one JSON line of ctags output.
	maxLineBytes = 1 << 20
)

// Name is the extractor name results report.
const Name = "universal-ctags"

// Errors. Their text carries no path or content.
var (
	ErrNotUniversal = errors.New("ctags is not Universal Ctags with JSON output and a sandboxed interactive mode")
	ErrOutputCap    = errors.New("ctags produced more output than allowed")
	ErrProtocol     = errors.New("ctags answered out of protocol")
)

// Config configures New.
type Config struct {
	// Binary is the ctags executable; "" looks "ctags" up on PATH.
	Binary string
	// Timeout bounds one Tag call; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps what one Tag call may read back; zero means
	// DefaultMaxOutputBytes.
	MaxOutputBytes int64
}

// Tagger runs Universal Ctags. It is safe for concurrent use: each Tag
// call starts its own process.
type Tagger struct {
	bin       string
	timeout   time.Duration
	maxOutput int64

	verifyOnce sync.Once
	verifyErr  error
}

var _ ports.SymbolTagger = (*Tagger)(nil)

// New finds ctags on PATH (or cfg.Binary). It returns exec.ErrNotFound
// (wrapped) when there is none, so a caller can fall back. It starts no
// process: that the binary is Universal Ctags with the json, interactive
// and sandbox features is checked once, by Verify, before the first Tag,
// so start-up pays nothing for it.
func New(cfg Config) (*Tagger, error) {
	bin := cfg.Binary
	if bin == "" {
		bin = "ctags"
	}
	resolved, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("finding ctags: %w", exec.ErrNotFound)
	}
	t := &Tagger{bin: resolved, timeout: cfg.Timeout, maxOutput: cfg.MaxOutputBytes}
	if t.timeout <= 0 {
		t.timeout = DefaultTimeout
	}
	if t.maxOutput <= 0 {
		t.maxOutput = DefaultMaxOutputBytes
	}
	return t, nil
}

// Verify checks, once per Tagger, that the binary is Universal Ctags with
// the json, interactive and sandbox features (ErrNotUniversal otherwise).
func (t *Tagger) Verify(ctx context.Context) error {
	t.verifyOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
		defer cancel()
		t.verifyErr = ErrNotUniversal
		version, err := t.command(ctx, "--version").Output()
		if err != nil || !bytes.Contains(version, []byte("Universal Ctags")) {
			return
		}
		features, err := t.command(ctx, "--list-features").Output()
		if err != nil {
			return
		}
		for _, f := range []string{"json", "interactive", "sandbox"} {
			if !hasFeature(features, f) {
				return
			}
		}
		t.verifyErr = nil
	})
	return t.verifyErr
}

func hasFeature(list []byte, name string) bool {
	for _, line := range strings.Split(string(list), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// command builds a ctags invocation: no shell, an empty environment, the
// root as working directory, option files off.
func (t *Tagger) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, t.bin, append([]string{"--options=NONE"}, args...)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.WaitDelay = time.Second
	return cmd
}

// Name implements ports.SymbolTagger.
func (t *Tagger) Name() string { return Name }

// request is one interactive-mode command.
type request struct {
	Command  string `json:"command"`
	Filename string `json:"filename"`
	Size     int    `json:"size"`
}

// record is one line of ctags' JSON output.
type record struct {
	Type    string `json:"_type"`
	Name    string `json:"name"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	End     int    `json:"end"`
	Kind    string `json:"kind"`
	Scope   string `json:"scope"`
	Command string `json:"command"`
}

// Tag implements ports.SymbolTagger. Each file is sent under a synthetic
// name keeping only its extension (ctags picks the language from it), so
// no caller path reaches the subprocess.
func (t *Tagger) Tag(ctx context.Context, files []ports.SourceFile) ([][]ports.Symbol, error) {
	if err := t.Verify(ctx); err != nil {
		return nil, err
	}
	out := make([][]ports.Symbol, len(files))
	if len(files) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cmd := t.command(ctx, "--_interactive=sandbox", "--output-format=json", "--fields=-P-f+neKZ", "-o", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, errors.New("starting ctags failed")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errors.New("starting ctags failed")
	}
	if err := cmd.Start(); err != nil {
		return nil, errors.New("starting ctags failed")
	}
	writeErr := make(chan error, 1)
	go func() {
		defer stdin.Close()
		enc := json.NewEncoder(stdin)
		for i, f := range files {
			if err := enc.Encode(request{Command: "generate-tags", Filename: syntheticName(i, f.Path), Size: len(f.Content)}); err != nil {
				writeErr <- err
				return
			}
			if _, err := stdin.Write(f.Content); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	readErr := read(io.LimitReader(stdout, t.maxOutput+1), t.maxOutput, len(files), out)
	if readErr != nil {
		cancel() // stop the process before waiting for it
	}
	werr := <-writeErr
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil && readErr == nil:
		return nil, fmt.Errorf("ctags: %w", ctx.Err())
	case readErr != nil:
		return nil, readErr
	case werr != nil || waitErr != nil:
		return nil, errors.New("ctags failed")
	}
	return out, nil
}

// syntheticName is the name file i goes by inside ctags.
func syntheticName(i int, p string) string {
	ext := path.Ext(p)
	if strings.ContainsFunc(ext, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		ext = ""
	}
	return "f" + strconv.Itoa(i) + ext
}

// read parses ctags' output into out, counting bytes against max: each
// "completed" record closes one file, in order.
func read(r io.Reader, max int64, n int, out [][]ports.Symbol) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	var total int64
	done := 0
	for sc.Scan() {
		line := sc.Bytes()
		total += int64(len(line)) + 1
		if total > max {
			return ErrOutputCap
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return ErrProtocol
		}
		switch rec.Type {
		case "program":
		case "completed":
			done++
		case "tag":
			if done >= n || rec.Path != syntheticNamePrefix(done, rec.Path) || rec.Name == "" || rec.Line <= 0 {
				return ErrProtocol
			}
			end := rec.End
			if end < rec.Line {
				end = rec.Line
			}
			out[done] = append(out[done], ports.Symbol{Name: rec.Name, Kind: rec.Kind, Parent: rec.Scope, StartLine: rec.Line, EndLine: end})
		default:
			return ErrProtocol
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return ErrOutputCap
		}
		return ErrProtocol
	}
	if total > max {
		return ErrOutputCap
	}
	if done != n {
		return ErrProtocol
	}
	return nil
}

// syntheticNamePrefix returns p when p is the synthetic name of file i
// (whatever its extension), "" otherwise.
func syntheticNamePrefix(i int, p string) string {
	stem := "f" + strconv.Itoa(i)
	if p == stem || strings.HasPrefix(p, stem+".") {
		return p
	}
	return ""
}
