package exectools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a parsed test report: the output it comes from is already
// capped, but one failure's message must not crowd out the others.
const (
	maxFailures       = 50
	maxFailureMessage = 2000
)

// testReport is a run's parsed results.
type testReport struct {
	Parsed   bool          `json:"parsed" description:"True when the output was recognised (go test -json, pytest or unittest); the counts are zero otherwise."`
	Passed   int           `json:"passed" description:"Tests that passed." minimum:"0"`
	Failed   int           `json:"failed" description:"Tests that failed or errored, and packages that did not build." minimum:"0"`
	Skipped  int           `json:"skipped" description:"Tests that were skipped." minimum:"0"`
	Failures []testFailure `json:"failures" description:"Each failure with its location, at most 50 (untrusted data)."`
}

// testFailure is one failed test.
type testFailure struct {
	Test    string `json:"test" description:"The test's name (Go: package and test; Python: node or test id)."`
	File    string `json:"file" description:"The repository-relative file of the failure, when the output named one."`
	Line    int    `json:"line" description:"The line in file, 0 when unknown." minimum:"0"`
	Message string `json:"message" description:"What the test reported, bounded."`
}

func (r *testReport) fail(f testFailure) {
	r.Failed++
	if len(r.Failures) < maxFailures {
		f.Message = strings.TrimSpace(f.Message)
		if len(f.Message) > maxFailureMessage {
			f.Message = strings.ToValidUTF8(f.Message[:maxFailureMessage], "")
		}
		r.Failures = append(r.Failures, f)
	}
}

// parseResults parses a run's output with the named parser. base is the
// repository prefix file names in the output are relative to; modulePath
// is the Go module's path (for go test -json). stdout is what the result
// shows: go test -json's event stream becomes the text it encodes.
func parseResults(parser, base, modulePath string, stdout, stderr []byte) (testReport, []byte) {
	switch parser {
	case parseGoJSON:
		return parseGoTest(base, modulePath, stdout)
	case parsePytest:
		return parsePytestOutput(base, stdout), stdout
	case parseUnittest:
		return parseUnittestOutput(base, stderr), stdout
	}
	return testReport{Failures: []testFailure{}}, stdout
}

// goEvent is one line of go test -json (cmd/test2json), with the build
// events go 1.24 added.
type goEvent struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// goLocation is a file:line: prefix of t.Error output or a compiler
// message.
var goLocation = regexp.MustCompile(`^\s*((?:\.\.?/)?[\w.+\-/]+\.go):(\d+)(?::\d+)?: ?(.*)$`)

// parseGoTest reads go test -json events: tests that pass, fail and skip,
// each failure's output and the first file:line it names, and packages
// that failed without a failing test (a build error, a panic outside a
// test, a timeout).
func parseGoTest(base, modulePath string, stdout []byte) (testReport, []byte) {
	rep := testReport{Failures: []testFailure{}}
	var text bytes.Buffer
	outputs := map[[2]string][]byte{} // by package and test
	add := func(k [2]string, s string) {
		if len(outputs[k]) < 4*maxFailureMessage {
			outputs[k] = append(outputs[k], s...)
		}
	}
	pkgFailed := map[string]bool{}
	type goTest struct{ pkg, test string }
	var failed []goTest
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev goEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			text.Write(line)
			text.WriteByte('\n')
			continue
		}
		rep.Parsed = true
		pkg := ev.Package
		if pkg == "" {
			pkg = ev.ImportPath
		}
		switch ev.Action {
		case "output", "build-output":
			text.WriteString(ev.Output)
			add([2]string{pkg, ev.Test}, ev.Output)
		case "pass":
			if ev.Test != "" {
				rep.Passed++
			}
		case "skip":
			if ev.Test != "" {
				rep.Skipped++
			}
		case "fail", "build-fail":
			if ev.Test == "" {
				if !pkgFailed[pkg] {
					pkgFailed[pkg] = true
					order = append(order, pkg)
				}
				continue
			}
			failed = append(failed, goTest{pkg, ev.Test})
		}
	}
	pkgDir := func(pkg string) string {
		rel, ok := strings.CutPrefix(pkg, modulePath)
		if !ok || modulePath == "" {
			return ""
		}
		return strings.TrimPrefix(rel, "/")
	}
	withTests := map[string]bool{}
	for _, ft := range failed {
		withTests[ft.pkg] = true
		// A parent test fails when a subtest does; the subtest says where.
		if slices.ContainsFunc(failed, func(g goTest) bool { return g.pkg == ft.pkg && strings.HasPrefix(g.test, ft.test+"/") }) {
			rep.Failed++
			continue
		}
		f := testFailure{Test: ft.pkg + "." + ft.test}
		f.Message, f.File, f.Line = goFailureText(string(outputs[[2]string{ft.pkg, ft.test}]), path.Join(base, pkgDir(ft.pkg)), false)
		rep.fail(f)
	}
	for _, pkg := range order {
		if withTests[pkg] {
			continue
		}
		f := testFailure{Test: pkg}
		// Compiler messages name files relative to the module root.
		f.Message, f.File, f.Line = goFailureText(string(outputs[[2]string{pkg, ""}]), base, true)
		rep.fail(f)
	}
	return rep, text.Bytes()
}

// goFailureText keeps a failure's own lines (not the === RUN and --- FAIL
// framing) and finds the first file:line among them. base is the
// repository prefix of the package (tests) or the module (compiler).
func goFailureText(out, base string, compiler bool) (msg, file string, line int) {
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- FAIL") || t == "FAIL" ||
			strings.HasPrefix(t, "FAIL\t") || (compiler && strings.HasPrefix(t, "# ")) {
			continue
		}
		if file == "" {
			if m := goLocation.FindStringSubmatch(l); m != nil {
				file = path.Join(base, path.Clean(m[1]))
				line, _ = strconv.Atoi(m[2])
			}
		}
		kept = append(kept, t)
	}
	return strings.Join(kept, "\n"), file, line
}

var (
	// pytestSummary is pytest's last line: "1 failed, 2 passed in 0.1s".
	pytestSummary = regexp.MustCompile(`^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s`)
	pytestCount   = regexp.MustCompile(`(\d+) (\w+)`)
	// pytestShort is a short-summary line (-rfE): "FAILED node - message".
	pytestShort = regexp.MustCompile(`^(FAILED|ERROR) (\S+)(?: - (.*))?$`)
	// pytestSection opens one failure's or error's traceback:
	// "____ name ____".
	pytestSection = regexp.MustCompile(`^_{3,} (.+?) _{3,}$`)
	// pytestFrame is --tb=short's frame line: "path.py:12: in test_x".
	pytestFrame = regexp.MustCompile(`^(\S+\.py):(\d+): `)
)

// pytestPhases prefix the section of an error outside a test's body:
// "ERROR at setup of test_x", "ERROR collecting tests/test_x.py".
var pytestPhases = []string{"ERROR at setup of ", "ERROR at teardown of "}

const pytestCollecting = "ERROR collecting "

// pytestFailure is one traceback section of pytest's output.
type pytestFailure struct {
	name   string
	frames []pytestFrameAt
	// errs are the section's "E   " lines: the assertion or exception,
	// whole (the short summary cuts it to the terminal's width).
	errs []string
	used bool
}

type pytestFrameAt struct {
	file string
	line int
}

// frameIn is the index of the section's first frame in file, -1 when none
// is.
func (s *pytestFailure) frameIn(file string) int {
	return slices.IndexFunc(s.frames, func(fr pytestFrameAt) bool { return fr.file == file })
}

// parsePytestOutput reads pytest -q -rfE --tb=short output: the counts from
// its summary line, failures and errors from the short summary, and each
// one's line and message from its traceback section. A section is matched
// to its summary line by name in order (two files may hold tests of the
// same name), and the line is the first frame in the test's own file (a
// collection error's traceback starts in importlib).
func parsePytestOutput(base string, stdout []byte) testReport {
	rep := testReport{Failures: []testFailure{}}
	var sections []*pytestFailure
	var cur *pytestFailure
	for _, l := range strings.Split(string(stdout), "\n") {
		l = strings.TrimRight(l, "\r")
		if m := pytestSection.FindStringSubmatch(l); m != nil {
			cur = &pytestFailure{name: m[1]}
			sections = append(sections, cur)
			continue
		}
		if cur != nil {
			if pytestChained(l) {
				// The exception that ended the test is the last of a
				// chain; the ones it was raised while handling are not
				// what the test reports.
				cur.errs = cur.errs[:0]
				continue
			}
			if m := pytestFrame.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[2])
				cur.frames = append(cur.frames, pytestFrameAt{file: m[1], line: n})
				continue
			}
			if rest, ok := strings.CutPrefix(l, "E "); ok {
				cur.errs = append(cur.errs, strings.TrimSpace(rest))
				continue
			}
		}
		if strings.HasPrefix(l, "=") {
			cur = nil // the failures part ended
		}
		if m := pytestShort.FindStringSubmatch(l); m != nil {
			node := m[2]
			file, rest, _ := strings.Cut(node, "::")
			f := testFailure{Test: node, File: path.Join(base, file), Message: m[3]}
			if sec := pytestSectionOf(sections, file, rest); sec != nil {
				if i := sec.frameIn(file); i >= 0 {
					f.Line = sec.frames[i].line
				} else if len(sec.frames) > 0 && !path.IsAbs(sec.frames[0].file) {
					f.File, f.Line = path.Join(base, sec.frames[0].file), sec.frames[0].line
				}
				if len(sec.errs) > 0 {
					f.Message = strings.Join(sec.errs, "\n")
				}
			}
			rep.fail(f)
			rep.Failed-- // counted from the summary line
			continue
		}
		if m := pytestSummary.FindStringSubmatch(l); m != nil {
			rep.Parsed = true
			rep.Passed, rep.Skipped, rep.Failed = 0, 0, 0
			for _, c := range pytestCount.FindAllStringSubmatch(m[1], -1) {
				n, _ := strconv.Atoi(c[1])
				switch c[2] {
				case "passed", "xpassed":
					rep.Passed += n
				case "failed", "error", "errors":
					rep.Failed += n
				case "skipped", "xfailed":
					rep.Skipped += n
				}
			}
		}
	}
	if !rep.Parsed {
		rep.Failed = len(rep.Failures)
	}
	return rep
}

// pytestChained reports the line pytest puts between the exceptions of a
// chain.
func pytestChained(l string) bool {
	return l == "During handling of the above exception, another exception occurred:" ||
		l == "The above exception was the direct cause of the following exception:"
}

// pytestSectionOf is the first section not yet matched that reports the
// short-summary node file::rest, preferring one with a frame in file;
// nil when none does.
func pytestSectionOf(sections []*pytestFailure, file, rest string) *pytestFailure {
	want := strings.ReplaceAll(rest, "::", ".")
	if rest == "" {
		want = pytestCollecting + file
	}
	var first *pytestFailure
	for _, sec := range sections {
		name := sec.name
		for _, p := range pytestPhases {
			name = strings.TrimPrefix(name, p)
		}
		if sec.used || name != want {
			continue
		}
		if sec.frameIn(file) >= 0 {
			sec.used = true
			return sec
		}
		if first == nil {
			first = sec
		}
	}
	if first != nil {
		first.used = true
	}
	return first
}

var (
	unittestRan    = regexp.MustCompile(`^Ran (\d+) tests? in `)
	unittestStatus = regexp.MustCompile(`^(OK|FAILED)(?: \((.*)\))?$`)
	unittestHead   = regexp.MustCompile(`^(FAIL|ERROR): (\S+) \((\S+)\)`)
	unittestFrame  = regexp.MustCompile(`^\s*File "(.+)", line (\d+), in `)
)

// parseUnittestOutput reads unittest's stderr: "Ran N tests", the status
// line's failures, errors and skips, and each FAIL/ERROR block's test id,
// last message line and the frame in the test's own module.
func parseUnittestOutput(base string, stderr []byte) testReport {
	rep := testReport{Failures: []testFailure{}}
	lines := strings.Split(string(stderr), "\n")
	ran, failed, skipped := 0, 0, 0
	var cur *testFailure
	var block []string
	flush := func() {
		if cur == nil {
			return
		}
		for i := len(block) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(block[i]); t != "" {
				cur.Message = t
				break
			}
		}
		rep.fail(*cur)
		cur, block = nil, nil
	}
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		if m := unittestHead.FindStringSubmatch(l); m != nil {
			flush()
			id := m[3]
			if !strings.HasSuffix(id, "."+m[2]) {
				id += "." + m[2] // before Python 3.11 the parentheses name only the class
			}
			cur = &testFailure{Test: id}
			continue
		}
		if strings.HasPrefix(l, "=====") || strings.HasPrefix(l, "-----") {
			if cur != nil && len(block) > 0 {
				flush()
			}
			continue
		}
		if m := unittestRan.FindStringSubmatch(l); m != nil {
			flush()
			ran, _ = strconv.Atoi(m[1])
			continue
		}
		if m := unittestStatus.FindStringSubmatch(l); m != nil && ran > 0 || m != nil && m[1] == "OK" {
			rep.Parsed = true
			for _, kv := range strings.Split(m[2], ", ") {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "failures", "errors", "unexpected successes":
					failed += n
				case "skipped", "expected failures":
					skipped += n
				}
			}
			continue
		}
		if cur != nil {
			block = append(block, l)
			if m := unittestFrame.FindStringSubmatch(l); m != nil {
				if rel := moduleFile(m[1], cur.Test); rel != "" {
					cur.File = path.Join(base, rel)
					cur.Line, _ = strconv.Atoi(m[2])
				}
			}
		}
	}
	flush()
	if rep.Parsed {
		rep.Failed = failed
		rep.Skipped = skipped
		rep.Passed = max(ran-failed-skipped, 0)
	}
	return rep
}

// moduleFile returns the module path of test id ("pkg/test_x.py" for
// "pkg.test_x.T.test_y") when file is that module's source, else "".
func moduleFile(file, id string) string {
	parts := strings.Split(id, ".")
	for i := len(parts) - 1; i > 0; i-- {
		rel := strings.Join(parts[:i], "/") + ".py"
		if file == rel || strings.HasSuffix(file, "/"+rel) {
			return rel
		}
	}
	return ""
}
