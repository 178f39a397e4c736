package content

import "golang.org/x/text/unicode/norm"

// SanitizeMarkdown makes untrusted Markdown safe to hand to a model and to a
// client that may render it. It starts from SanitizeText (so it refuses a
// UTF-7 mark with ErrUTF7 and strips escapes, controls and invisible
// characters), then:
//
//   - Raw HTML is removed: tags (across lines, in any case, with quoted
//     attribute values containing '>'), comments, CDATA sections,
//     processing instructions and declarations. A '<' that could still open
//     markup afterwards is written as "&lt;", so no tag survives, including
//     one assembled from the pieces around a removed construct.
//   - Images are dropped in every form: inline ![alt](src "title"),
//     reference ![alt][ref], collapsed ![alt][] and shortcut ![alt], the
//     reference definitions those images use, images nested in links, and
//     HTML <img> (already gone with the HTML). An "![" that cannot be
//     matched is escaped so no renderer can start an image there.
//   - Links keep their text but only absolute http and https targets: the
//     target is decoded as a renderer would (backslash escapes, named and
//     numeric entities such as &#106; and &colon;, tabs and newlines
//     removed), checked, and written back in a canonical percent-encoded
//     form without its title. Every other target is removed and the link
//     becomes its plain text: javascript:, data:, file:, vbscript:, mailto:
//     and any other scheme, in any case or spelling (entity-encoded,
//     percent-encoded such as javascript%3A, split by whitespace), and also
//     relative, fragment-only, scheme-relative (//host) and empty targets,
//     and URLs with user information (https://trusted@evil). Relative links
//     are neutralized on purpose: a renderer resolves them against its own
//     origin, which is not where the document came from. The same applies
//     to autolinks (<https://...> kept; <mailto:...>, <javascript:...> and
//     e-mail autolinks become their text) and to reference definitions (a
//     bad definition is removed, so references to it render as text). A
//     "](" that is not a link this function understood is escaped as "]\(",
//     so a renderer with different parsing rules cannot find a target there.
//     A GFM footnote definition ("[^1]: ...") stays as text, since its
//     references render as same-page links.
//   - Text cannot be linkified into anything else: renderers that turn bare
//     addresses into links (markdown-it's linkify, marked, remark-gfm) would
//     make ftp://, scheme-relative //host, mailto: (from any e-mail
//     address), xmpp: and user-information links out of it, including from
//     the text left when a link or autolink is removed. Each "@" between
//     non-blank characters and each "//" after another scheme or before a
//     host at the start of a word is defanged to "\[@\]" or "\[//\]"
//     (rendered "[@]", "[//]"), whether written literally, escaped or as a
//     character reference; an "@" in the path of a bare http(s) URL stays
//     unless a domain follows it. A bare http(s) URL otherwise stays, so
//     the only links a renderer can make are absolute http(s) ones without
//     user information (some linkifiers keep a defanged "[@]" inside a URL,
//     whose host then starts with "]" and cannot be parsed: a dead link).
//
// The transform is conservative, not a renderer, and its residual risks are:
// code spans and fenced or indented code blocks get no special treatment, so
// HTML-like text, image syntax and link targets inside them are removed like
// any other (a[i](x) loses "(x)", "x < y" may become "x &lt; y"), because a
// sanitizer that trusted its own idea of where code starts would be one
// renderer disagreement away from passing live markup; a kept http(s) link
// can still carry data to its host when a person clicks it (only zero-click
// loads are prevented); bare http(s) URLs in text become links under
// linkifying renderers, and e-mail addresses read "user[@]host"; GFM
// footnotes lose their definition syntax; renderer extensions (wiki links, shortcodes,
// math, diagrams) are not interpreted. A client that renders the result
// should still apply its own output controls (an image proxy, a content
// security policy).
func SanitizeMarkdown(b []byte) (string, error) {
	s, err := SanitizeText(b)
	if err != nil {
		return "", err
	}
	s = stripHTML(s)
	s = rewriteLinks(s)
	// Removing constructs can join text that was normalized in separate
	// pieces; normalize the whole again before the final passes (which
	// only insert ASCII and so keep NFC).
	s = norm.NFC.String(s)
	s = defuseLinkify(s)
	return escapeTagOpeners(s), nil
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// blankLineAfter reports whether the newline at s[i] is followed by a line
// holding only spaces and tabs (or by the end of the text).
func blankLineAfter(s string, i int) bool {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case ' ', '\t':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}
