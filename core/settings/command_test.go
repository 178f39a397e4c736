package settings

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// shlexSplit is Python's shlex.split of each line, the independent
// reference for the words SplitCommand accepts.
func shlexSplit(t *testing.T, lines []string) [][]string {
	t.Helper()
	in, _ := json.Marshal(lines)
	out, err := exec.Command("python3", "-I", "-c",
		"import shlex, json, sys; print(json.dumps([shlex.split(l) for l in json.loads(sys.argv[1])]))", string(in)).Output()
	if err != nil {
		t.Skipf("python3 is not available for the reference split: %v", err)
	}
	var argvs [][]string
	if err := json.Unmarshal(out, &argvs); err != nil {
		t.Fatal(err)
	}
	return argvs
}

func TestSplitCommandAgreesWithShlex(t *testing.T) {
	lines := []string{
		"python3 -m pytest -q",
		"  python3   -m\tunittest  discover -s tests ",
		`pytest -k 'not slow and (a or b)'`,
		`pytest -k "test_\$x \"quoted\" back\\slash \z"`,
		`a\ b c\"d 'it''s' "" ''`,
		`go test -run 'Test.*' ./...`,
		"python3 -c 'import sys; print(sys.argv)' x~y",
		`echo "line\
continued" done\
here`,
		"ünïcode 'ärg ument'",
	}
	want := shlexSplit(t, lines)
	for i, line := range lines {
		got, err := SplitCommand(line)
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("%q: got %q, shlex %q", line, got, want[i])
		}
	}
}

func TestSplitCommandRefusesShellSyntax(t *testing.T) {
	for _, line := range []string{
		"pytest | tee log", "make && make test", "a; b", "a > out", "a < in", "(a)",
		"echo $HOME", "echo `id`", "pytest tests/*.py", "ls ?", "ls [ab]", "cd ~/x", "a &",
		"'unterminated", `"unterminated`, `trailing\`,
	} {
		if argv, err := SplitCommand(line); err == nil {
			t.Errorf("%q was accepted as %q", line, argv)
		}
	}
}

func TestExecTestCommandIsCheckedAtLoad(t *testing.T) {
	s, err := load(map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": "python3 -m 'unit test'"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ExecTestArgv(); !slices.Equal(got, []string{"python3", "-m", "unit test"}) {
		t.Fatalf("argv %q", got)
	}
	for _, bad := range []string{"pytest | tee", "'open"} {
		_, err := load(map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": bad})
		if err == nil || !strings.Contains(err.Error(), "ARROWHEAD_EXEC_TEST_COMMAND") {
			t.Errorf("%q: err %v, want a refusal naming the variable", bad, err)
		}
	}
	if s, err := load(nil); err != nil || s.ExecTestArgv() != nil {
		t.Fatalf("empty command: %v %q", err, s.ExecTestArgv())
	}
}
