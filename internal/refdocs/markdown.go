package refdocs

import (
	"regexp"
	"strings"
)

// markdownEscaper escapes the characters that could start inline Markdown
// (emphasis, code, links, strikethrough) with a backslash, and those that
// could start HTML or an entity, or end a table cell, as character
// references: a renderer that autolinks a bare URL may take a backslash
// into the link and leave the next character live (markdown-it does), but
// never a reference. Text then renders exactly as written.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `~`, `\~`,
	`<`, "&lt;", `>`, "&gt;", `&`, "&amp;", `|`, "&#124;",
	"\r\n", " ", "\n", " ", "\r", " ",
)

// text is s as literal Markdown text on one line.
func text(s string) string { return markdownEscaper.Replace(s) }

// code is s as a code span, safe inside a table cell.
func code(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// variableRef matches a backquoted variable name in prose the code wrote
// (a gate's condition).
var variableRef = regexp.MustCompile("`(ARROWHEAD_[A-Z0-9_]+)`")

// linkVariables escapes prose and turns each backquoted variable name into a
// link to its entry in the configuration reference at configPath.
func linkVariables(prose, configPath string) string {
	var b strings.Builder
	last := 0
	for _, m := range variableRef.FindAllStringSubmatchIndex(prose, -1) {
		b.WriteString(text(prose[last:m[0]]))
		b.WriteString(variableLink(prose[m[2]:m[3]], configPath))
		last = m[1]
	}
	b.WriteString(text(prose[last:]))
	return b.String()
}

// variableLink links to a variable's entry in the configuration reference.
func variableLink(name, configPath string) string {
	return "[" + code(name) + "](" + configPath + "#" + anchor(name) + ")"
}

// anchor is the id of a variable's entry in the configuration reference.
func anchor(name string) string { return strings.ToLower(name) }

// slug is the anchor GitHub derives from a heading: lower case, spaces to
// hyphens, punctuation other than hyphen and underscore dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// table renders a Markdown table; cells are already Markdown.
func table(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString(strings.Repeat("| --- ", len(header)) + "|\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// leadingBlockMarker matches text that would open a block (list item,
// heading, quote, thematic break) at the start of a line.
var leadingBlockMarker = regexp.MustCompile(`^([-+#=>]|\d+[.)])`)

// paragraph is s as literal Markdown text that starts a line.
func paragraph(s string) string {
	s = text(strings.TrimSpace(s))
	if m := leadingBlockMarker.FindStringIndex(s); m != nil {
		s = s[:m[1]-1] + `\` + s[m[1]-1:]
	}
	return s
}
