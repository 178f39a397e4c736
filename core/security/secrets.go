// This file is the secret and personal-data scanner behind doc_scan: a
// fixed set of detectors, each precise enough to keep false positives rare,
// and findings that locate and name what was found without ever carrying it.

package security

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// SecretType names a kind of secret or personal data. The values are the
// TYPE part of a placeholder.
type SecretType string

// The detected types.
const (
	// SecretAWSAccessKeyID is an AWS access key id: AKIA (long-term) or
	// ASIA (temporary) and friends, 20 characters.
	SecretAWSAccessKeyID SecretType = "AWS_ACCESS_KEY_ID"
	// SecretAWSSecretAccessKey is a 40-character AWS secret access key,
	// recognized only after a name such as aws_secret_access_key or
	// SecretAccessKey and an assignment: without that context 40 base64
	// characters are indistinguishable from any other.
	SecretAWSSecretAccessKey SecretType = "AWS_SECRET_ACCESS_KEY"
	// SecretGitHubToken is a GitHub token: ghp_, gho_, ghu_, ghs_ or ghr_
	// with at least 36 characters, or github_pat_ with at least 82.
	SecretGitHubToken SecretType = "GITHUB_TOKEN"
	// SecretSlackToken is a Slack token: xoxa-, xoxb-, xoxe-, xoxo-,
	// xoxp-, xoxr-, xoxs- or xapp-.
	SecretSlackToken SecretType = "SLACK_TOKEN"
	// SecretSlackWebhook is a Slack incoming-webhook or workflow URL, which
	// is itself the credential.
	SecretSlackWebhook SecretType = "SLACK_WEBHOOK"
	// SecretStripeKey is a Stripe secret or restricted key, live or test.
	SecretStripeKey SecretType = "STRIPE_KEY"
	// SecretGoogleAPIKey is a Google API key: AIza and 35 characters.
	SecretGoogleAPIKey SecretType = "GOOGLE_API_KEY"
	// SecretGitLabToken is a GitLab token: a personal, deploy, runner,
	// pipeline-trigger, feed, OAuth-application-secret or CI-build prefix
	// (glpat-, gldt-, glrt-, glptt-, glft-, gloas-, glcbt-) and at least 20
	// characters.
	SecretGitLabToken SecretType = "GITLAB_TOKEN"
	// SecretNPMToken is an npm access token: npm_ and 36 characters.
	SecretNPMToken SecretType = "NPM_TOKEN"
	// SecretAzureStorageKey is the account key of an Azure storage
	// connection string (AccountKey=, base64 of at least 32 bytes).
	SecretAzureStorageKey SecretType = "AZURE_STORAGE_KEY"
	// SecretPrivateKey is a PEM or OpenSSH private key block. It is found by
	// its BEGIN line, and the value is the block through its END line. A
	// block whose END line is missing (a truncated key is still a secret)
	// ends with the last line that can belong to it (base64 body lines,
	// RFC 1421 headers, the blank line after them), so it never hides
	// what follows.
	SecretPrivateKey SecretType = "PRIVATE_KEY"
	// SecretJWT is a JSON Web Token (JWS or JWE compact form) whose header
	// decodes to a JSON object with an "alg" member.
	SecretJWT SecretType = "JWT"
	// SecretCredential is the value of a credential assignment: a name
	// ending in password, passwd, passphrase, pwd, secret, secret_key,
	// client_secret, api_key (apikey, api-key), access_key, private_key,
	// token, access_token, auth_token or refresh_token (any case, any
	// prefix such as DB_ or smtp_, optionally quoted), then =, :, := or =>,
	// then the value, quoted on one line or unquoted up to a space, comma
	// or semicolon. The value must be non-trivial: at least
	// minCredentialLen characters, and not a placeholder or a reference
	// to a value kept elsewhere. Not reported: an empty or one-character-
	// repeated value ("", "********"); a reference (${VAR}, $VAR,
	// %(name)s, {{ x }}, <%= x %>, an unquoted expression with brackets or
	// parentheses such as os.environ["X"] or getpass(), a YAML alias
	// *name or tag !vault); a plain unquoted identifier without digits
	// (user_password, self.token, config.db.password), which in code names
	// a variable; an angle-bracketed or bracketed template (<your-password>,
	// [password]); and a well-known dummy value or one containing a
	// dummy word (changeme, changeit, password, secret, example, sample,
	// dummy, placeholder, redacted, your..., xxx, null, none, true, false
	// and the like). Default passwords such as changeme are public, not
	// secrets; a scanner that reported every template would bury the real
	// findings.
	SecretCredential SecretType = "CREDENTIAL"
	// SecretEmail is an e-mail address.
	SecretEmail SecretType = "EMAIL"
	// SecretUSSSN is a US social security number written NNN-NN-NNNN that
	// could have been issued: area not 000, 666 or 900-999, group not 00,
	// serial not 0000. Undashed nine-digit numbers are not reported: they
	// are too often something else.
	SecretUSSSN SecretType = "US_SSN"
	// SecretCreditCard is a payment card number: 13 to 19 digits, optionally
	// grouped by single spaces or dashes, starting 2 to 6 (the card
	// networks' ranges) and passing the Luhn check.
	SecretCreditCard SecretType = "CREDIT_CARD"
)

// SecretTypes returns every type the scanner detects, most specific first:
// the order in which overlapping matches are resolved.
func SecretTypes() []SecretType { return slices.Clone(secretOrder[:]) }

var secretOrder = [...]SecretType{
	SecretServerSecret, SecretPrivateKey, SecretJWT, SecretSlackWebhook, SecretWebhookURL,
	SecretAnthropicKey, SecretOpenAIKey, SecretGitHubToken, SecretGitLabToken, SecretNPMToken,
	SecretSlackToken, SecretStripeKey, SecretGoogleAPIKey, SecretAPIToken, SecretAzureStorageKey,
	SecretAWSAccessKeyID, SecretAWSSecretAccessKey, SecretAuthHeader, SecretURLPassword,
	SecretCredential, SecretCreditCard, SecretUSSSN, SecretEmail,
}

// specificity ranks types for overlap resolution; lower wins.
func specificity(t SecretType) int {
	for i, s := range secretOrder {
		if s == t {
			return i
		}
	}
	return len(secretOrder)
}

// Scanner limits and sizes.
const (
	// ScannerKeyBytes is the size of the key NewRandomScanner draws.
	ScannerKeyBytes = 32
	// MinScannerKeyBytes is the shortest key NewScanner accepts: a short
	// key would let anyone who sees a tag brute-force a low-entropy value
	// such as an SSN back from it.
	MinScannerKeyBytes = 16
	// DefaultMaxFindings applies when ScanText is given a limit of zero or
	// less; it matches ARROWHEAD_SCAN_MAX_FINDINGS.
	DefaultMaxFindings = 200
	// PlaceholderTagLen is the number of hex characters of the HMAC kept in
	// a placeholder's tag.
	PlaceholderTagLen = 12
)

// Finding locates one secret. It never holds the secret: Placeholder is
// "[REDACTED:TYPE:tag]" where tag is the first PlaceholderTagLen hex
// characters of HMAC-SHA256 of the value under the scanner's key, so equal
// values get equal tags within one scanner (one process, for the random
// scanner) and the tag cannot be reversed without the key.
type Finding struct {
	Type SecretType `json:"type"`
	// Path is the document the text came from, as the caller named it.
	Path string `json:"path"`
	// Line and Column are 1-based; Column counts characters (runes), not
	// bytes. They locate the start of the redacted span.
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	Placeholder string `json:"placeholder"`
}

// Scanner finds secrets and personal data in text. It is immutable and safe
// for concurrent use.
type Scanner struct {
	key []byte
	// known are the server's own secret values (see WithKnown), longest
	// first so that a DSN is redacted whole before its password is looked
	// for inside it.
	known []string
}

// NewScanner returns a scanner whose placeholder tags are keyed by key (the
// key is copied). It panics if key is shorter than MinScannerKeyBytes, a
// programming error that would make tags reversible.
func NewScanner(key []byte) *Scanner {
	if len(key) < MinScannerKeyBytes {
		panic("security: scanner key shorter than MinScannerKeyBytes")
	}
	return &Scanner{key: append([]byte(nil), key...)}
}

// NewRandomScanner returns a scanner keyed by ScannerKeyBytes from
// crypto/rand. The key lives only in memory, so tags correlate within the
// process and never across restarts.
func NewRandomScanner() *Scanner {
	key := make([]byte, ScannerKeyBytes)
	if _, err := rand.Read(key); err != nil {
		// crypto/rand does not fail on supported platforms; a predictable
		// key would make tags reversible, so stop.
		panic("security: no randomness for the scanner key")
	}
	return &Scanner{key: key}
}

// String keeps the key out of anything that formats the scanner.
func (s *Scanner) String() string { return "security.Scanner{key: redacted}" }

// GoString keeps the key out of %#v.
func (s *Scanner) GoString() string { return s.String() }

// ScanText reports up to maxFindings findings in text (DefaultMaxFindings
// when maxFindings <= 0), in order of position, each tagged with path.
// Overlapping matches are reported once, as the most specific type.
func (s *Scanner) ScanText(path, text string, maxFindings int) []Finding {
	if maxFindings <= 0 {
		maxFindings = DefaultMaxFindings
	}
	spans := s.find(text)
	if len(spans) > maxFindings {
		spans = spans[:maxFindings]
	}
	return s.findings(path, text, spans)
}

// Redact returns text with every secret replaced by its placeholder, and
// the findings (with an empty Path), without a limit: a redaction that
// stopped early would leak the rest.
func (s *Scanner) Redact(text string) (string, []Finding) {
	return s.redact(text, false)
}

// RedactLines is Redact keeping the text's line structure: a secret that
// spans lines (a private key) becomes its placeholder followed by as many
// newlines as it held, so line numbers after it still count the original
// lines. A search or a line-range read redacts the whole text this way
// before cutting it into lines, so no line shows a piece of a secret that
// only its neighbours make recognisable.
func (s *Scanner) RedactLines(text string) string {
	out, _ := s.redact(text, true)
	return out
}

func (s *Scanner) redact(text string, keepLines bool) (string, []Finding) {
	spans := s.find(text)
	if len(spans) == 0 {
		return text, nil
	}
	findings := s.findings("", text, spans)
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for i, sp := range spans {
		b.WriteString(text[last:sp.start])
		b.WriteString(findings[i].Placeholder)
		if keepLines {
			for range strings.Count(text[sp.start:sp.end], "\n") {
				b.WriteByte('\n')
			}
		}
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String(), findings
}

// placeholder renders "[REDACTED:TYPE:tag]" for value.
func (s *Scanner) placeholder(t SecretType, value string) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(value))
	sum := mac.Sum(nil)
	return "[REDACTED:" + string(t) + ":" + hex.EncodeToString(sum)[:PlaceholderTagLen] + "]"
}

// findings turns spans (sorted, disjoint) into findings with 1-based line
// and rune column, computed incrementally so many findings on one long line
// stay linear.
func (s *Scanner) findings(path, text string, spans []secretSpan) []Finding {
	out := make([]Finding, 0, len(spans))
	line, lineStart := 1, 0
	colPos, col := 0, 1 // col is the column of byte offset colPos
	for _, sp := range spans {
		if n := strings.Count(text[colPos:sp.start], "\n"); n > 0 {
			line += n
			lineStart = colPos + strings.LastIndexByte(text[colPos:sp.start], '\n') + 1
			colPos, col = lineStart, 1
		}
		col += utf8.RuneCountInString(text[colPos:sp.start])
		colPos = sp.start
		out = append(out, Finding{
			Type:        sp.typ,
			Path:        path,
			Line:        line,
			Column:      col,
			Placeholder: s.placeholder(sp.typ, sp.value),
		})
	}
	return out
}

// secretSpan is one match, or after merging one redacted region: [start,
// end) in the text, the winning type and the value its tag is computed from.
type secretSpan struct {
	start, end int
	typ        SecretType
	value      string
}

// find runs every detector, on the normalized text when text is not
// plain ASCII (see normalizeForScan), maps the matches back to text and
// merges overlapping ones: each cluster of overlapping matches becomes one
// span covering all of them (so no part of any match is left unredacted),
// typed and tagged by the most specific match, the longest among equals.
func (s *Scanner) find(text string) []secretSpan {
	var all []secretSpan
	if isASCII(text) {
		all = s.detect(text)
	} else {
		n := normalizeForScan(text)
		all = s.detect(n.text)
		n.toOriginal(all)
	}
	if len(all) == 0 {
		return nil
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		return all[i].end > all[j].end
	})
	merged := all[:0:0]
	cur := all[0]
	win := all[0]
	for _, m := range all[1:] {
		if m.start < cur.end {
			if m.end > cur.end {
				cur.end = m.end
			}
			if better(m, win) {
				win = m
			}
			continue
		}
		merged = append(merged, secretSpan{start: cur.start, end: cur.end, typ: win.typ, value: win.value})
		cur, win = m, m
	}
	return append(merged, secretSpan{start: cur.start, end: cur.end, typ: win.typ, value: win.value})
}

// detect runs every detector and the known-value search over text.
func (s *Scanner) detect(text string) []secretSpan {
	var all []secretSpan
	for _, d := range detectors() {
		all = d(text, all)
	}
	return s.findKnown(text, all)
}

func better(a, b secretSpan) bool {
	if sa, sb := specificity(a.typ), specificity(b.typ); sa != sb {
		return sa < sb
	}
	return a.end-a.start > b.end-b.start
}

// LazyRegexp returns a pattern compiled on its first use, for validators
// and scanners that only some calls or settings need: a bounded repetition
// expands when compiled, which at package initialisation every start-up
// would pay for. It panics on first use if expr does not compile.
func LazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// A detector appends its matches in text to found.
type detector func(text string, found []secretSpan) []secretSpan

// detectors are compiled on the first scan, not at start-up: only the
// scanning tools need them, and their patterns cost every process a few
// hundred microseconds to compile.
var detectors = sync.OnceValue(func() []detector {
	return []detector{
		findTokens,
		submatchDetector(SecretAzureStorageKey, regexp.MustCompile(`AccountKey[ \t]*=[ \t]*([A-Za-z0-9+/]{43,}={0,2})`), 1),
		findPrivateKeys,
		findAWSSecretKeys,
		findURLPasswords,
		findCredentialAssignments,
		findEmails,
		findSSNs,
		findCards,
	}
})

// RuleCount is the number of detection rules the scanner runs: each token
// rule, each other detector, and the search for the server's own values.
func RuleCount() int {
	return len(tokenRuleSpecs) + len(infixRuleSpecs) + len(detectors()) - 1 + 1
}

// submatchDetector reports group g of each match of re as the value: the
// rest of the match is the context that makes it a secret.
func submatchDetector(t SecretType, re *regexp.Regexp, g int) detector {
	return func(text string, found []secretSpan) []secretSpan {
		for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
			if start, end := loc[2*g], loc[2*g+1]; start >= 0 && end == len(text) || start >= 0 && !isAlnumByte(text[end]) {
				found = append(found, secretSpan{start: start, end: end, typ: t, value: text[start:end]})
			}
		}
		return found
	}
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// alnumBounded requires that the match is not glued to letters or digits on
// either side: then it is part of some longer identifier or blob.
func alnumBounded(text string, start, end int) bool {
	return (start == 0 || !isAlnumByte(text[start-1])) && (end == len(text) || !isAlnumByte(text[end]))
}

func googleKeyBounded(text string, start, end int) bool {
	if !alnumBounded(text, start, end) {
		return false
	}
	return end == len(text) || text[end] != '_' && text[end] != '-'
}

// maxJWTHeader bounds the header segment a JWT candidate may have.
const maxJWTHeader = 4096

// jwtValid checks that the first segment decodes to a JSON object with an
// "alg" member, as every JWS and JWE header has.
func jwtValid(text string, start, end int) bool {
	if !alnumBounded(text, start, end) {
		return false
	}
	header, _, _ := strings.Cut(text[start:end], ".")
	if len(header) > maxJWTHeader {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	alg, ok := h["alg"]
	return ok && len(alg) > 0 && alg[0] == '"'
}

var (
	rePrivateKeyBegin = LazyRegexp(`-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
	rePrivateKeyEnd   = LazyRegexp(`-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
)

// findPrivateKeys reports each private key block from its BEGIN line
// through its END line. Without an END line the block still ends where a
// PEM body must: after the last line that is a header, the blank line after
// the headers, or base64, so a truncated key is reported and the text after
// it is scanned as usual.
func findPrivateKeys(text string, found []secretSpan) []secretSpan {
	for from := 0; from < len(text); {
		loc := rePrivateKeyBegin().FindStringIndex(text[from:])
		if loc == nil {
			break
		}
		start, end := from+loc[0], pemBlockEnd(text, from+loc[1])
		found = append(found, secretSpan{start: start, end: end, typ: SecretPrivateKey, value: text[start:end]})
		from = end
	}
	return found
}

// maxPEMBlockBytes bounds how far after its BEGIN line a key block's END
// line is looked for: past the largest real keys (an RSA-16384 PEM is about
// 12.5 KB), an END line belongs to something else.
const maxPEMBlockBytes = 16 << 10

// pemBlockEnd returns the end of the key block whose BEGIN marker ends at
// i: the end of its END marker when one follows within maxPEMBlockBytes and
// before any other BEGIN marker, or else the end of the last line that can
// belong to a PEM body (RFC 1421 headers, the blank line after them, base64
// lines), so that nothing after a truncated key is hidden.
func pemBlockEnd(text string, i int) int {
	window := text[i:min(len(text), i+maxPEMBlockBytes)]
	if b := rePrivateKeyBegin().FindStringIndex(window); b != nil {
		// Searching only up to the next BEGIN keeps a text of many BEGIN
		// lines linear.
		window = window[:b[0]]
	}
	if e := rePrivateKeyEnd().FindStringIndex(window); e != nil {
		return i + e[1]
	}
	end, inHeaders := lineEndAt(text, i), true
	for p := end; p < len(text); {
		p++ // past the newline
		q := lineEndAt(text, p)
		line := strings.TrimRight(text[p:q], " \t\r")
		switch {
		case inHeaders && isPEMHeaderLine(line):
			end = q
		case inHeaders && line == "":
			// The blank line after the headers; it belongs to the block
			// only if body lines follow.
			inHeaders = false
		case line != "" && strings.Trim(line, base64Chars) == "":
			inHeaders = false
			end = q
		default:
			return end
		}
		p = q
	}
	return end
}

func lineEndAt(text string, i int) int {
	if k := strings.IndexByte(text[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(text)
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

// isPEMHeaderLine reports the RFC 1421 encapsulated headers that encrypted
// PEM keys carry ("Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,...").
// Other "Name: value" lines are not taken: after a BEGIN line with no END
// they are more likely the next thing in the file.
func isPEMHeaderLine(line string) bool {
	return strings.HasPrefix(line, "Proc-Type: ") || strings.HasPrefix(line, "DEK-Info: ")
}

// awsSecretLen is the length of an AWS secret access key.
const awsSecretLen = 40

// awsSecretContextBytes is how far before a candidate the scanner looks for
// the name that makes 40 base64 characters an AWS secret.
const awsSecretContextBytes = 100

// reAWSSecretContext matches the end of the text before a candidate: a name
// such as aws_secret_access_key, AWS_SECRET_KEY or SecretAccessKey, an
// optional closing quote, an assignment (=, :, :=, =>) and an optional
// opening quote.
var reAWSSecretContext = LazyRegexp(`(?i)(?:aws[_\-. ]?secret(?:[_\-. ]?access)?(?:[_\-. ]?key)?|secret[_\-. ]?access[_\-. ]?key)["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?$`)

func isAWSSecretByte(c byte) bool { return isAlnumByte(c) || c == '/' || c == '+' }

// findAWSSecretKeys finds runs of exactly 40 base64 characters and keeps
// those preceded on their line by an AWS secret key name and assignment.
// Such a name holds "secret" (in lower or upper case) within
// awsSecretContextBytes before the run, so only the stretch after each
// occurrence is walked: most text has none.
func findAWSSecretKeys(text string, found []secretSpan) []secretSpan {
	var anchors []int
	for _, word := range []string{"ecret", "ECRET"} {
		for from := 0; ; {
			k := strings.Index(text[from:], word)
			if k < 0 {
				break
			}
			anchors = append(anchors, from+k)
			from += k + len(word)
		}
	}
	if len(anchors) == 0 {
		return found
	}
	slices.Sort(anchors)
	next := 0 // no run starts before next (runs already walked)
	for _, a := range anchors {
		i := max(a, next)
		limit := min(len(text), a+awsSecretContextBytes+1)
		for i < limit {
			if !isAWSSecretByte(text[i]) {
				i++
				continue
			}
			start := i
			if start > 0 && isAWSSecretByte(text[start-1]) {
				// Inside a run that began before this stretch: skip it.
				for i < len(text) && isAWSSecretByte(text[i]) {
					i++
				}
				continue
			}
			for i < len(text) && isAWSSecretByte(text[i]) {
				i++
			}
			if i-start != awsSecretLen {
				continue
			}
			ctxStart := max(start-awsSecretContextBytes, strings.LastIndexByte(text[:start], '\n')+1, 0)
			if reAWSSecretContext().MatchString(text[ctxStart:start]) {
				found = append(found, secretSpan{start: start, end: i, typ: SecretAWSSecretAccessKey, value: text[start:i]})
			}
		}
		next = max(next, i)
	}
	return found
}

func isEmailLocalByte(c byte) bool {
	return isAlnumByte(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isEmailDomainByte(c byte) bool { return isAlnumByte(c) || c == '.' || c == '-' }

// findEmails looks around each '@' for a local part and a domain with at
// least two labels and an alphabetic top-level label of two or more letters.
func findEmails(text string, found []secretSpan) []secretSpan {
	for from := 0; ; {
		k := strings.IndexByte(text[from:], '@')
		if k < 0 {
			return found
		}
		at := from + k
		from = at + 1
		start := at
		for start > 0 && isEmailLocalByte(text[start-1]) {
			start--
		}
		for start < at && text[start] == '.' {
			start++
		}
		end := at + 1
		for end < len(text) && isEmailDomainByte(text[end]) {
			end++
		}
		for end > at+1 && (text[end-1] == '.' || text[end-1] == '-') {
			end--
		}
		if start == at || !validEmailDomain(text[at+1:end]) {
			continue
		}
		found = append(found, secretSpan{start: start, end: end, typ: SecretEmail, value: text[start:end]})
		from = end
	}
}

func validEmailDomain(d string) bool {
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if isDigitByte(tld[i]) || tld[i] == '-' {
			return false
		}
	}
	return true
}

// findSSNs finds NNN-NN-NNNN not glued to letters, digits or dashes and
// keeps those that could have been issued.
func findSSNs(text string, found []secretSpan) []secretSpan {
	for from := 0; ; {
		k := strings.IndexByte(text[from:], '-')
		if k < 0 {
			return found
		}
		d := from + k
		from = d + 1
		start, end := d-3, d+8
		if start < 0 || end > len(text) || text[d+3] != '-' ||
			!allDigits(text[start:d]) || !allDigits(text[d+1:d+3]) || !allDigits(text[d+4:end]) {
			continue
		}
		if start > 0 && (isAlnumByte(text[start-1]) || text[start-1] == '-') ||
			end < len(text) && (isAlnumByte(text[end]) || text[end] == '-') {
			continue
		}
		area, group, serial := text[start:d], text[d+1:d+3], text[d+4:end]
		if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
			continue
		}
		found = append(found, secretSpan{start: start, end: end, typ: SecretUSSSN, value: text[start:end]})
		from = end
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigitByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// Card number lengths.
const (
	minCardDigits = 13
	maxCardDigits = 19
)

// findCards finds runs of digit groups joined by single spaces or dashes,
// not glued to letters or digits, and reports every sub-run of whole groups
// that is a plausible card number. Overlapping reports merge into one
// redacted span, so a number that only happens to pass the Luhn check next
// to a real one cannot leave part of the real one showing.
func findCards(text string, found []secretSpan) []secretSpan {
	type group struct{ start, end int }
	var groups []group
	for i := 0; i < len(text); {
		k := strings.IndexAny(text[i:], "0123456789")
		if k < 0 {
			break
		}
		i += k
		runStart := i
		groups = groups[:0]
		for {
			gs := i
			for i < len(text) && isDigitByte(text[i]) {
				i++
			}
			groups = append(groups, group{gs, i})
			if i+1 < len(text) && (text[i] == ' ' || text[i] == '-') && isDigitByte(text[i+1]) {
				i++
				continue
			}
			break
		}
		if runStart > 0 && isAlnumByte(text[runStart-1]) || i < len(text) && isAlnumByte(text[i]) {
			// Part of an identifier: skip the rest of it.
			for i < len(text) && isAlnumByte(text[i]) {
				i++
			}
			continue
		}
		var digits [maxCardDigits]byte
		for a := range groups {
			n := 0
			for b := a; b < len(groups); b++ {
				g := groups[b]
				if n+g.end-g.start > maxCardDigits {
					break
				}
				n += copy(digits[n:], text[g.start:g.end])
				if n >= minCardDigits && digits[0] >= '2' && digits[0] <= '6' && luhn(digits[:n]) {
					found = append(found, secretSpan{start: groups[a].start, end: g.end, typ: SecretCreditCard, value: string(digits[:n])})
				}
			}
		}
	}
	return found
}

// luhn reports whether the digits pass the Luhn checksum.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// minCredentialLen is the shortest credential-assignment value reported:
// shorter values are flags, lengths and placeholders far more often than
// passwords.
const minCredentialLen = 6

// credentialNames are the endings (compared lower-cased) that make a name
// a credential's.
var credentialNames = []string{
	"password", "passwd", "passphrase", "pwd", "secret", "token",
	"secretkey", "secret_key", "secret-key", "apikey", "api_key", "api-key",
	"accesskey", "access_key", "access-key", "privatekey", "private_key", "private-key",
}

// maxCredentialName is the longest of credentialNames.
const maxCredentialName = len("private_key")

// findCredentialAssignments reports the values of credential assignments
// that are not placeholders (see SecretCredential). It visits each ':' and
// '=' and looks back for a credential name, which stays fast on any text
// (a case-insensitive regular expression without a literal to search for
// is forty times slower here).
func findCredentialAssignments(text string, found []secretSpan) []secretSpan {
	// The next ':' and '=' at or after i, each found with the vectorized
	// IndexByte and kept until passed (-1 when there is none left).
	colon, equals := strings.IndexByte(text, ':'), strings.IndexByte(text, '=')
	nextAt := func(c byte, i int) int {
		if k := strings.IndexByte(text[i:], c); k >= 0 {
			return i + k
		}
		return -1
	}
	for i := 0; i < len(text); i++ {
		if colon >= 0 && colon < i {
			colon = nextAt(':', i)
		}
		if equals >= 0 && equals < i {
			equals = nextAt('=', i)
		}
		switch {
		case colon < 0 && equals < 0:
			return found
		case colon < 0 || equals >= 0 && equals < colon:
			i = equals
		default:
			i = colon
		}
		opLen := 1
		switch {
		case text[i] == ':' && i+1 < len(text) && text[i+1] == '=', text[i] == '=' && i+1 < len(text) && text[i+1] == '>':
			opLen = 2
		case text[i] == '=' && (i+1 < len(text) && text[i+1] == '=' || i > 0 && strings.IndexByte(":=!<>", text[i-1]) >= 0):
			// ==, !=, <=, >= compare; := was taken at its ':'.
			continue
		}
		if !credentialNameBefore(text, i) {
			continue
		}
		j := i + opLen
		for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
			j++
		}
		start, end, quoted := credentialValue(text, j)
		if start < 0 {
			continue
		}
		if v := text[start:end]; plausibleCredential(v, quoted) {
			found = append(found, secretSpan{start: start, end: end, typ: SecretCredential, value: v})
			i = end - 1
		}
	}
	return found
}

// credentialNameBefore reports whether the assignment operator at text[op]
// follows a credential name, allowing spaces and a closing quote between.
func credentialNameBefore(text string, op int) bool {
	j := op
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	if j > 0 && (text[j-1] == '"' || text[j-1] == '\'') {
		j--
	}
	if j == 0 || strings.IndexByte("detnyDETNY", text[j-1]) < 0 {
		// No credential name ends in another letter: most ':' and '='
		// stop here.
		return false
	}
	var buf [maxCredentialName]byte
	n := min(j, maxCredentialName)
	tail := buf[maxCredentialName-n:]
	for k := range n {
		c := text[j-n+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		tail[k] = c
	}
	for _, name := range credentialNames {
		if len(name) <= n && string(tail[n-len(name):]) == name {
			return true
		}
	}
	return false
}

// credentialValue returns the value starting at i: the inside of a quoted
// string closed on the same line, or a run up to a space, comma, semicolon
// or quote. start is -1 if there is none.
func credentialValue(text string, i int) (start, end int, quoted bool) {
	if i >= len(text) {
		return -1, -1, false
	}
	switch q := text[i]; q {
	case '"', '\'', '`':
		for j := i + 1; j < len(text); j++ {
			switch text[j] {
			case '\\':
				j++
			case '\n':
				return -1, -1, false
			case q:
				return i + 1, j, true
			}
		}
		return -1, -1, false
	}
	j := i
	for j < len(text) && !strings.ContainsRune(" \t\r\n,;\"'`", rune(text[j])) {
		j++
	}
	return i, j, false
}

// credentialDummyWords make a value a placeholder wherever they appear in
// it; credentialDummyValues only when they are the whole value (compared
// lower-cased, without punctuation).
var (
	credentialDummyWords  = []string{"changeme", "changeit", "example", "sample", "dummy", "placeholder", "redacted", "your", "xxx", "fixme", "todo", "replace", "insert", "secret_here", "here>"}
	credentialDummyValues = map[string]bool{
		"password": true, "passwd": true, "secret": true, "token": true, "apikey": true, "secretkey": true,
		"null": true, "none": true, "nil": true, "true": true, "false": true, "undefined": true, "empty": true,
		"default": true, "required": true, "optional": true, "string": true, "value": true, "hidden": true,
		"masked": true, "notset": true, "unset": true, "test": true, "testing": true, "foobar": true,
		"mypassword": true, "mysecret": true, "mytoken": true, "letmein": true, "qwerty": true, "123456": true,
		"12345678": true, "admin": true, "root": true,
	}
)

// plausibleCredential reports whether v looks like a real credential
// rather than a placeholder, a reference or, unquoted, a code expression.
func plausibleCredential(v string, quoted bool) bool {
	if len(v) < minCredentialLen || strings.Count(v, v[:1]) == len(v) {
		return false
	}
	lower := strings.ToLower(v)
	for _, ref := range []string{"${", "{{", "%(", "<%", "://", "$(", "#{"} {
		if strings.Contains(lower, ref) {
			return false
		}
	}
	switch v[0] {
	case '$', '%', '<', '[', '{', '(', '*', '&', '!', '=', '@', '#':
		return false
	}
	for _, w := range credentialDummyWords {
		if strings.Contains(lower, w) {
			return false
		}
	}
	var alnum strings.Builder
	digits := false
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		if isAlnumByte(c) {
			alnum.WriteByte(c)
		}
		digits = digits || isDigitByte(c)
	}
	if credentialDummyValues[alnum.String()] {
		return false
	}
	if !quoted {
		if strings.ContainsAny(v, "()[]{}<>") {
			return false
		}
		if !digits && isDottedIdentifier(v) {
			return false
		}
	}
	return true
}

// isDottedIdentifier reports a name such as user_password or
// self.config.token: in code, an unquoted one is a variable, not a value.
func isDottedIdentifier(v string) bool {
	for _, part := range strings.Split(v, ".") {
		if part == "" || isDigitByte(part[0]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isAlnumByte(part[i]) && part[i] != '_' && part[i] != '-' {
				return false
			}
		}
	}
	return true
}
