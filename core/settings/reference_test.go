package settings

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryVariableIsDocumented: the reference documentation and
// .env.example are generated from the table, so every variable needs a
// one-line meaning, a section, a type; a new variable fails here until it
// has them.
func TestEveryVariableIsDocumented(t *testing.T) {
	var seen []string
	last := ""
	for _, d := range Docs() {
		if d.Meaning == "" {
			t.Errorf("%s has no meaning: add .means(\"...\") to its entry in core/settings/table.go", d.Name)
		} else if strings.ContainsAny(d.Meaning, "\n\r") || !strings.HasSuffix(d.Meaning, ".") {
			t.Errorf("%s: the meaning must be one line ending with a full stop: %q", d.Name, d.Meaning)
		}
		if d.Section.Title == "" || d.Section.About == "" {
			t.Errorf("%s has no section: put it in the in(Section{...}) it belongs to in core/settings/table.go", d.Name)
		}
		if d.Type == "" {
			t.Errorf("%s has no type", d.Name)
		}
		if d.Section.Title != last {
			if slices.Contains(seen, d.Section.Title) {
				t.Errorf("section %q appears twice: keep its variables together", d.Section.Title)
			}
			seen = append(seen, d.Section.Title)
			last = d.Section.Title
		}
	}
	for _, name := range Extensions {
		if _, ok := DefaultOf(name); !ok {
			t.Errorf("extension %s is not in the table", name)
		}
	}
}

// TestRulesSayWhatTheParserChecks holds each printed rule to the parser:
// an integer's bounds admit exactly that range, a choice exactly its
// values, and an optional value the empty string.
func TestRulesSayWhatTheParserChecks(t *testing.T) {
	between := regexp.MustCompile(`^between (-?\d+) and (\d+)$`)
	atLeast := regexp.MustCompile(`^at least (-?\d+)$`)
	choice := regexp.MustCompile(`^(empty, or )?one of (.+)$`)
	s := Settings{Limits: map[string]int{}}
	checked := 0
	for _, v := range s.vars() {
		accepts := func(raw string) bool { return v.parse(raw) == nil }
		if m := between.FindStringSubmatch(v.Rule()); m != nil {
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			for raw, want := range map[string]bool{fmt.Sprint(lo - 1): false, fmt.Sprint(lo): true, fmt.Sprint(hi): true, fmt.Sprint(hi + 1): false} {
				if accepts(raw) != want {
					t.Errorf("%s says %q, but %s is accepted=%v", v.Name, v.Rule(), raw, !want)
				}
			}
			checked++
			continue
		}
		if m := atLeast.FindStringSubmatch(v.Rule()); m != nil {
			lo, _ := strconv.Atoi(m[1])
			if accepts(fmt.Sprint(lo-1)) || !accepts(fmt.Sprint(lo)) || !accepts(fmt.Sprint(lo+1_000_000)) {
				t.Errorf("%s says %q, which the parser does not hold to", v.Name, v.Rule())
			}
			checked++
			continue
		}
		if m := choice.FindStringSubmatch(v.Rule()); m != nil && v.Type == "string" {
			for _, value := range strings.Split(m[2], ", ") {
				if !accepts(value) {
					t.Errorf("%s says %q, but refuses %s", v.Name, v.Rule(), value)
				}
			}
			if accepts("not-" + m[2]) {
				t.Errorf("%s says %q, but accepts another value", v.Name, v.Rule())
			}
			if accepts("") != (m[1] != "") {
				t.Errorf("%s says %q, but the empty value is accepted=%v", v.Name, v.Rule(), accepts(""))
			}
			checked++
			continue
		}
		if strings.HasPrefix(v.Rule(), "empty, or ") && !accepts("") {
			t.Errorf("%s says %q, but refuses the empty value", v.Name, v.Rule())
		}
	}
	if checked < 50 {
		t.Fatalf("only %d rules were checked against the parser", checked)
	}
}
