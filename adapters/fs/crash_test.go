package fs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	crashChildEnv = "ARROWHEAD_CRASH_CHILD"
	crashDirEnv   = "ARROWHEAD_CRASH_DIR"
	crashHoldEnv  = "ARROWHEAD_CRASH_HOLD"
	// crashMinWrites is how many acknowledged writes the parent waits for
	// before it kills the child.
	crashMinWrites = 100
)

// crashDoc is what the child writes: the pad length is recorded, so a
// document cut short cannot pass for a complete one even if it parsed.
type crashDoc struct {
	Seq    int    `json:"seq"`
	PadLen int    `json:"pad_len"`
	Pad    string `json:"pad"`
	End    bool   `json:"end"`
}

// TestCrashLeavesOnlyCompleteDocuments re-executes the test binary as a
// child that creates and replaces JSON documents in a tight loop and kills
// it with SIGKILL, then checks that every document left is complete, that
// every acknowledged creation is there, that a store opened before the
// crash never lists or reads a temporary file, and that reopening the store
// sweeps the leftovers from disk.
//
// "anywhere" kills the child as soon as it has acknowledged crashMinWrites
// writes, wherever the next write happens to be. "mid-write" has the child
// stop inside its next write, after the temporary file is durable and
// before it is put in place, so the kill always leaves a temporary file.
func TestCrashLeavesOnlyCompleteDocuments(t *testing.T) {
	if os.Getenv(crashChildEnv) == "1" {
		crashChild(os.Getenv(crashHoldEnv) == "1")
		return
	}
	t.Run("anywhere", func(t *testing.T) { crashParent(t, false) })
	t.Run("mid-write", func(t *testing.T) { crashParent(t, true) })
}

func crashParent(t *testing.T, hold bool) {
	root := t.TempDir()
	// Opened before the crash, so its List runs over whatever the killed
	// writer left, temporary files included.
	before := openDocs(t, DocumentsConfig{Root: root, QuotaBytes: 1 << 30})

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLeavesOnlyCompleteDocuments$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashDirEnv+"="+root)
	if hold {
		cmd.Env = append(cmd.Env, crashHoldEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// acked holds the documents the child created (and was told so).
	acked := map[string]bool{}
	writes := 0
	sc := bufio.NewScanner(out)
	held := false
	for sc.Scan() {
		if hold && sc.Text() == "holding" {
			held = true
			break
		}
		if !hold && writes >= crashMinWrites {
			break
		}
		if rel, ok := strings.CutPrefix(sc.Text(), "wrote "); ok {
			writes++
			if strings.HasPrefix(rel, "u/") {
				acked[rel] = true
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() { // drain so the child is never blocked on a full pipe
		for sc.Scan() {
		}
	}()
	_ = cmd.Wait() // "signal: killed" is the expected outcome
	if writes < crashMinWrites || hold && !held {
		t.Fatalf("the child acknowledged %d writes (held: %v) before exiting", writes, held)
	}

	onDisk := diskFiles(t, root)
	var temps []string
	for _, f := range onDisk {
		if strings.Contains(f, TempPrefix) {
			temps = append(temps, f)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		checkCrashDoc(t, f, data)
	}
	t.Logf("%d files on disk after SIGKILL, %d of them temporary", len(onDisk), len(temps))
	if hold && len(temps) == 0 {
		t.Fatal("a child killed mid-write left no temporary file")
	}
	for rel := range acked {
		if !slices.Contains(onDisk, rel) {
			t.Errorf("acknowledged document %s is missing", rel)
		}
	}

	listed, truncated, err := before.List(t.Context(), "", 1<<20)
	if err != nil || truncated {
		t.Fatal(err, truncated)
	}
	if len(listed) != len(onDisk)-len(temps) {
		t.Errorf("listed %d documents, the disk holds %d", len(listed), len(onDisk)-len(temps))
	}
	for _, fi := range listed {
		if strings.Contains(fi.Path, TempPrefix) {
			t.Errorf("a temporary file is listed: %s", fi.Path)
		}
		data, _, err := before.Read(t.Context(), fi.Path, 0)
		if err != nil {
			t.Fatalf("reading %s: %v", fi.Path, err)
		}
		checkCrashDoc(t, fi.Path, data)
	}
	for _, tmp := range temps {
		if _, _, err := before.Read(t.Context(), tmp, 0); err == nil {
			t.Errorf("a temporary file is readable: %s", tmp)
		}
	}

	// A crash may land outside the temp-file window; plant one leftover
	// so the sweep below is always exercised.
	planted := filepath.Join(root, "c", TempPrefix+"planted")
	if err := os.WriteFile(planted, []byte(`{"seq":`), 0o640); err != nil {
		t.Fatal(err)
	}
	before.Close()
	after := openDocs(t, DocumentsConfig{Root: root, QuotaBytes: 1 << 30})
	remaining := diskFiles(t, root)
	if hasTemp(remaining) {
		t.Errorf("reopening left temporary files: %q", remaining)
	}
	if want := slices.DeleteFunc(slices.Clone(onDisk), func(f string) bool { return strings.Contains(f, TempPrefix) }); !slices.Equal(remaining, want) {
		t.Errorf("reopening changed the documents:\nbefore %q\n after %q", want, remaining)
	}
	if got := diskUsage(t, root); after.Usage() != got {
		t.Errorf("usage after reopening %d, disk %d", after.Usage(), got)
	}
}

func checkCrashDoc(t *testing.T, rel string, data []byte) {
	t.Helper()
	var doc crashDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Errorf("%s does not parse (%d bytes): %v", rel, len(data), err)
		return
	}
	if !doc.End || len(doc.Pad) != doc.PadLen {
		t.Errorf("%s is incomplete: end %v, pad %d of %d", rel, doc.End, len(doc.Pad), doc.PadLen)
	}
}

// crashChild writes until it is killed: it cycles over a small set of
// documents (created, then replaced) and creates a new unique one every
// fifth write, printing "wrote <path>" after each write returns. With hold
// set, the write after crashMinWrites prints "holding" once its temporary
// file is durable and blocks there.
func crashChild(hold bool) {
	d, err := OpenDocuments(DocumentsConfig{Root: os.Getenv(crashDirEnv), QuotaBytes: 1 << 30, MaxWriteBytes: 1 << 20})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	for seq := 0; ; seq++ {
		rel := fmt.Sprintf("c/%02d.json", seq%20)
		mode := ports.Replace
		if seq%5 == 0 {
			rel = fmt.Sprintf("u/%05d.json", seq)
			mode = ports.CreateOnly
		}
		if hold && seq == crashMinWrites {
			testHookBeforeCommit = func() {
				fmt.Println("holding")
				select {}
			}
		}
		padLen := 1000 + (seq*7919)%200_000
		data, _ := json.Marshal(crashDoc{Seq: seq, PadLen: padLen, Pad: strings.Repeat("z", padLen), End: true})
		if _, err := d.Write(context.Background(), rel, data, mode); err != nil {
			fmt.Fprintln(os.Stderr, "crash child: write failed:", err)
			os.Exit(2)
		}
		fmt.Println("wrote " + rel)
	}
}
