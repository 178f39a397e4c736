package settings

import (
	"errors"
	"fmt"
	"strings"
)

// SplitCommand splits a command line into an argv exactly as Python's
// shlex.split does: blanks separate words, single quotes keep everything
// literally, double quotes keep everything but a backslash before " or \,
// and an unquoted backslash keeps the next character. No shell ever runs the result, so what a shell would
// expand or interpret is refused unquoted rather than passed on literally:
// pipes, lists and redirections (| & ; < > ( )), substitutions ($ `),
// globs (* ? [) and a leading ~.
func SplitCommand(line string) ([]string, error) {
	var (
		argv    []string
		word    strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
			if quote == '"' && r != '"' && r != '\\' {
				word.WriteRune('\\')
			}
			word.WriteRune(r)
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				word.WriteRune(r)
			}
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		default:
			switch {
			case r == '\\':
				escaped = true
			case r == '\'' || r == '"':
				quote = r
			case strings.ContainsRune("|&;<>()$`*?[", r), r == '~' && !inWord:
				return nil, fmt.Errorf("has unquoted shell syntax %q, but the command runs without a shell", r)
			default:
				word.WriteRune(r)
			}
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("has an unterminated quote")
	}
	if escaped {
		return nil, errors.New("ends with a backslash")
	}
	if inWord {
		argv = append(argv, word.String())
	}
	return argv, nil
}

// commandLine accepts a command line SplitCommand splits into at least one
// word.
var commandLine = check{"a command line (shell quoting, but no shell syntax: it runs without a shell)", func(raw string) error {
	argv, err := SplitCommand(raw)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return errors.New("names no program")
	}
	return nil
}}

// ExecTestArgv is ARROWHEAD_EXEC_TEST_COMMAND split into its argv; nil when
// it is empty. Load has already refused a command that does not split.
func (s *Settings) ExecTestArgv() []string {
	argv, err := SplitCommand(s.ExecTestCommand)
	if err != nil {
		return nil
	}
	return argv
}
