// Command docsearch benchmarks doc_search's literal path against grep.
//
// It generates a corpus (by default 10,000 documents, about 100 MB, mixed
// .md/.txt/.json, in 100 directories) under a temporary directory, then
// times, on a warm page cache:
//
//	(a) a literal search through the real stack: the document store
//	    (adapters/fs: its streaming walk, then a jailed, symlink-checked
//	    read per document) through search.Search, doc_search's pipeline,
//	    with every cap raised so the whole corpus is scanned, for a term
//	    that appears in few documents; once with the default workers
//	    (GOMAXPROCS) and once with a single worker, the fair match for
//	    single-threaded grep;
//	(b) grep -rF for the same term over the same files.
//
// Each runs -iter times after one untimed warm-up, interleaved round by
// round so that a change in machine load hits all alike; the best and
// median times are printed with the ratio of the medians to grep's
// (target: within 2x). All must report the same number of matching lines.
// Wall-clock numbers mean little on a machine busy with other work (check
// the load average first), so the CPU time each search consumed (user +
// system, from getrusage for this process and from the exited grep) is
// printed as well: it is far less sensitive to contention.
//
// Run it from the repository root:
//
//	go run ./test/bench/docsearch [-docs 10000] [-bytes 100000000] [-iter 5] [-keep] [-cpuprofile FILE]
//
// or test/bench/docsearch/bench.sh, which does the same.
//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	afs "github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/core/search"
)

// term is what the benchmark searches for; the vocabulary never forms it.
const term = "zebracorn"

// profileTo receives a CPU profile of the timed rounds when set.
var profileTo *os.File

func main() {
	docs := flag.Int("docs", 10_000, "number of documents")
	total := flag.Int64("bytes", 100_000_000, "approximate corpus size in bytes")
	iter := flag.Int("iter", 5, "timed iterations of each search")
	hits := flag.Int("hits", 25, "documents containing the search term")
	keep := flag.Bool("keep", false, "keep the generated corpus")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed rounds to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "docsearch:", err)
			os.Exit(1)
		}
		profileTo = f
	}
	if err := run(*docs, *total, *iter, *hits, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "docsearch:", err)
		os.Exit(1)
	}
}

func run(docs int, total int64, iter, hits int, keep bool) error {
	dir, err := os.MkdirTemp("", "arrowhead-docsearch-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("corpus:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	t0 := time.Now()
	size, err := generate(dir, docs, total, hits)
	if err != nil {
		return err
	}
	fmt.Printf("generated %d documents, %.1f MB in %v\n", docs, float64(size)/1e6, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	store, err := afs.OpenDocuments(afs.DocumentsConfig{Root: dir, QuotaBytes: 4 * total})
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Printf("opened the store (one start-up walk, usage %.1f MB) in %v\n", float64(store.Usage())/1e6, time.Since(t0).Round(time.Millisecond))

	storeSearch := func(workers int) (int, error) {
		ctx := context.Background()
		m, err := search.NewMatcher(term, false, search.MatcherOptions{})
		if err != nil {
			return 0, err
		}
		allowAll := func(context.Context, string) (bool, error) { return true, nil }
		rep, err := search.Search(ctx, search.Request{
			Store:   store,
			Allow:   allowAll,
			Matcher: m,
			Limits: search.Limits{
				MaxFiles:      docs + 1,
				MaxResults:    1 << 30,
				MaxTotalBytes: 4 * total,
				Workers:       workers,
				Deadline:      time.Minute,
			},
		})
		if err != nil {
			return 0, err
		}
		if rep.FilesScanned != docs || !rep.Complete() {
			return 0, fmt.Errorf("the search did not cover the corpus: %d files, truncated %v", rep.FilesScanned, rep.Truncated())
		}
		return len(rep.Matches), nil
	}
	var grepCPU time.Duration // CPU time of the last grep run
	grepSearch := func() (int, error) {
		cmd := exec.Command("grep", "-rF", "--", term, dir)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("grep: %w", err)
		}
		grepCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return bytes.Count(out.Bytes(), []byte{'\n'}), nil
	}

	// The contenders run interleaved, round by round, so a change in
	// machine load affects them alike.
	contenders := []struct {
		name string
		f    func() (int, error)
		cpu  func(before rusage) time.Duration
	}{
		{"grep -rF", grepSearch, func(rusage) time.Duration { return grepCPU }},
		{fmt.Sprintf("store + search.Search, %d workers", runtime.GOMAXPROCS(0)), func() (int, error) { return storeSearch(0) }, selfCPU},
		{"store + search.Search, 1 worker", func() (int, error) { return storeSearch(1) }, selfCPU},
	}
	times := make([][]time.Duration, len(contenders))
	cpus := make([][]time.Duration, len(contenders))
	counts := make([]int, len(contenders))
	for round := range max(iter, 1) + 1 {
		if round == 1 && profileTo != nil {
			if err := pprof.StartCPUProfile(profileTo); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		for i, c := range contenders {
			before := selfUsage()
			t := time.Now()
			n, err := c.f()
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if round == 0 { // warm-up
				counts[i] = n
				continue
			}
			times[i] = append(times[i], time.Since(t).Round(time.Microsecond))
			cpus[i] = append(cpus[i], c.cpu(before).Round(time.Microsecond))
		}
	}
	for i, c := range contenders {
		if counts[i] != counts[0] {
			return fmt.Errorf("matching lines differ: %s %d, grep %d", c.name, counts[i], counts[0])
		}
		slices.Sort(times[i])
		slices.Sort(cpus[i])
		line := fmt.Sprintf("%-34s wall best %9v median %9v | cpu median %9v", c.name+":", times[i][0], median(times[i]), median(cpus[i]))
		if i > 0 {
			ratio := float64(median(times[i])) / float64(median(times[0]))
			cpuRatio := float64(median(cpus[i])) / float64(median(cpus[0]))
			verdict := "within"
			if ratio > 2 {
				verdict = "OUTSIDE"
			}
			line += fmt.Sprintf(" | wall %.2fx grep (%s the 2x target), cpu %.2fx", ratio, verdict, cpuRatio)
		}
		fmt.Println(line)
	}
	fmt.Printf("matching lines: %d (all agree)\n", counts[0])
	return nil
}

func median(d []time.Duration) time.Duration { return d[len(d)/2] }

// rusage is this process's CPU time so far.
type rusage time.Duration

func selfUsage() rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return rusage(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
}

// selfCPU is the CPU time this process spent since before, all threads.
func selfCPU(before rusage) time.Duration { return time.Duration(selfUsage() - before) }

var vocabulary = strings.Fields(`the a of and to in is for on with as by at from that this it be
	are was were or an not but which have has had will would can could should may document
	corpus search index server client request response token scope policy audit guard jail
	path file directory write read list quota limit byte line column snippet match result
	alpha beta gamma delta epsilon kappa lambda omega sigma theta river mountain forest
	ocean desert valley meadow harbor bridge tower castle garden lantern compass anchor`)

// generate writes docs documents of about total bytes under dir, hits of
// them containing term once, and returns the bytes written.
func generate(dir string, docs int, total int64, hits int) (int64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	per := int(total / int64(docs))
	hitSet := make(map[int]bool, hits)
	for len(hitSet) < min(hits, docs) {
		hitSet[rng.IntN(docs)] = true
	}
	var written int64
	var line strings.Builder
	for i := range docs {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i%100))
		if err := os.MkdirAll(sub, 0o750); err != nil {
			return 0, err
		}
		var lines []string
		size := 0
		target := per/2 + rng.IntN(per+1) // per on average
		for size < target {
			line.Reset()
			for line.Len() < 50+rng.IntN(60) {
				if line.Len() > 0 {
					line.WriteByte(' ')
				}
				line.WriteString(vocabulary[rng.IntN(len(vocabulary))])
			}
			lines = append(lines, line.String())
			size += line.Len() + 1
		}
		if hitSet[i] {
			k := rng.IntN(len(lines))
			lines[k] += " " + term + " here"
		}
		var (
			name string
			data []byte
		)
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("doc-%05d.md", i)
			data = []byte("# Document " + fmt.Sprint(i) + "\n\n" + strings.Join(lines, "\n") + "\n")
		case 1:
			name = fmt.Sprintf("doc-%05d.txt", i)
			data = []byte(strings.Join(lines, "\n") + "\n")
		default:
			name = fmt.Sprintf("doc-%05d.json", i)
			var b bytes.Buffer
			w := bufio.NewWriter(&b)
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			if err := enc.Encode(map[string]any{"id": i, "lines": lines}); err != nil {
				return 0, err
			}
			w.Flush()
			data = b.Bytes()
		}
		if err := os.WriteFile(filepath.Join(sub, name), data, 0o640); err != nil {
			return 0, err
		}
		written += int64(len(data))
	}
	return written, nil
}
