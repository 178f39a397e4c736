package security

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testScannerKey = []byte("0123456789abcdef0123456789abcdef")

// secretCase is one sample per type: text holding it, the value its tag is
// computed from, and every spelling of it that must never appear in output.
type secretCase struct {
	typ    SecretType
	text   string
	value  string
	forbid []string
}

func secretCases() []secretCase {
	ghp := "ghp_" + strings.Repeat("aB3dE5", 6)
	pat := "github_pat_" + strings.Repeat("11AbCdEfGh_", 7) + "12345"
	google := "AIza" + "SyD-9tSrke72PouQMnMX_a7eZSW0jkFMBWY"
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	npm := "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	azure := "q7Wc9XbT3mNv5Lk2Jh8Gf4Ds6Ap1Oi0Uy9Tr7Ee5Ww3Qq2Zx4Cv6Bn8Mm1Ll3Kk5Jj7Hh9Gg0Ff2Dd4Ss6Aa8Pp0Oo2Ii4Uu6Yy8Tt=="
	anthropic := "sk-ant-api03-" + strings.Repeat("Ab3_-xY9", 11) + "QwErTAA"
	openai := "sk-proj-" + strings.Repeat("aZ09_-Qw", 9) + "T3BlbkFJ" + strings.Repeat("Kp7-Lm2_", 9)
	hf := "hf_" + strings.Repeat("AbCdEfGhIj", 3) + "KlMn"
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----"
	return []secretCase{
		{SecretAWSAccessKeyID, "id = AKIAIOSFODNN7EXAMPLE\n", "AKIAIOSFODNN7EXAMPLE", []string{"AKIAIOSFODNN7EXAMPLE", "IOSFODNN7"}},
		{SecretAWSSecretAccessKey, "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI", "bPxRfiCYEXAMPLEKEY"}},
		{SecretGitHubToken, "token: " + ghp + "\n", ghp, []string{ghp, ghp[4:]}},
		{SecretGitHubToken, "GH=" + pat, pat, []string{pat, pat[11:40]}},
		{SecretSlackToken, "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx end", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", []string{"AbCdEfGhIjKlMnOpQrStUvWx"}},
		{SecretSlackWebhook, "hook https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdefghijklmnopqrstuvwx\n", "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdefghijklmnopqrstuvwx", []string{"abcdefghijklmnopqrstuvwx", "T01ABCDEF/B02GHIJKL"}},
		{SecretStripeKey, `stripe.api_key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"`, "sk_live_4eC39HqLyjWDarjtT1zdp7dc", []string{"4eC39HqLyjWDarjtT1zdp7dc"}},
		{SecretStripeKey, "rk_test_51H8abcdefGHIJKLmnopqr", "rk_test_51H8abcdefGHIJKLmnopqr", []string{"51H8abcdefGHIJKLmnopqr"}},
		{SecretGoogleAPIKey, "maps?key=" + google + "&x=1", google, []string{google, "SyD-9tSrke72Pou"}},
		{SecretPrivateKey, "config\n" + key + "\ntrailer", key, []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0", "BEGIN RSA PRIVATE KEY"}},
		{SecretJWT, "Authorization: Bearer " + jwt + "\n", jwt, []string{jwt, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"}},
		{SecretEmail, "contact: jane.doe+tag@example.co.uk.", "jane.doe+tag@example.co.uk", []string{"jane.doe", "example.co.uk"}},
		{SecretUSSSN, "SSN 123-45-6789 on file", "123-45-6789", []string{"123-45-6789", "6789"}},
		{SecretGitLabToken, "CI uses glpat-xR4nD0mT0k3nV4lu3zZz now", "glpat-xR4nD0mT0k3nV4lu3zZz", []string{"xR4nD0mT0k3nV4lu3zZz"}},
		{SecretGitLabToken, "deploy gldt-Ab12Cd34Ef56Gh78Ij90Kl", "gldt-Ab12Cd34Ef56Gh78Ij90Kl", []string{"Ab12Cd34Ef56Gh78Ij90Kl"}},
		{SecretNPMToken, "//registry.npmjs.org/:_authToken=" + npm, npm, []string{npm, npm[4:]}},
		{SecretAzureStorageKey, "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=" + azure + ";EndpointSuffix=core.windows.net", azure, []string{azure, azure[:40]}},
		{SecretCredential, `password = "hunter2hunter2"`, "hunter2hunter2", []string{"hunter2hunter2", "hunter2"}},
		{SecretCredential, `"password": "S3cure!Passw0rd",`, "S3cure!Passw0rd", []string{"S3cure!Passw0rd"}},
		{SecretCredential, "api_key=3f9a8b7c6d5e4f3a2b1c\n", "3f9a8b7c6d5e4f3a2b1c", []string{"3f9a8b7c6d5e4f3a2b1c"}},
		{SecretCredential, "secret: k9Xq2vLp8RtY", "k9Xq2vLp8RtY", []string{"k9Xq2vLp8RtY"}},
		{SecretCredential, "token = 9a8b7c6d5e4f3a2b1c0d # prod", "9a8b7c6d5e4f3a2b1c0d", []string{"9a8b7c6d5e4f3a2b1c0d"}},
		{SecretCredential, "Server=db;Password=Wint3r2024!;Database=prod", "Wint3r2024!", []string{"Wint3r2024!"}},
		{SecretCreditCard, "card 4111 1111 1111 1111 exp 12/30", "4111111111111111", []string{"4111 1111 1111 1111", "4111111111111111", "1111 1111"}},
		{SecretCreditCard, "amex 378282246310005.", "378282246310005", []string{"378282246310005"}},
		{SecretCreditCard, "mc 5500-0000-0000-0004", "5500000000000004", []string{"5500-0000-0000-0004", "0000-0004"}},
		{SecretServerSecret, "llm key is " + testKnownSecret + ", keep it", testKnownSecret, []string{testKnownSecret, "known-server"}},
		{SecretWebhookURL, "hook: https://contoso.webhook.office.com/webhookb2/a1b2c3d4-e5f6-7890-abcd-ef1234567890@f1e2d3c4-b5a6-9788-dcba-0987654321fe/IncomingWebhook/0123456789abcdef0123456789abcdef/a1b2c3d4", "https://contoso.webhook.office.com/webhookb2/a1b2c3d4-e5f6-7890-abcd-ef1234567890@f1e2d3c4-b5a6-9788-dcba-0987654321fe/IncomingWebhook/0123456789abcdef0123456789abcdef/a1b2c3d4", []string{"0123456789abcdef0123456789abcdef"}},
		{SecretAnthropicKey, "ANTHROPIC=" + anthropic, anthropic, []string{anthropic[14:60]}},
		{SecretOpenAIKey, "openai " + openai + "\n", openai, []string{openai[8:40]}},
		{SecretAPIToken, "hf " + hf + " end", hf, []string{hf[3:]}},
		{SecretAuthHeader, "Authorization: Bearer 0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d4e5f60718293a4b5c6d7e8f9", []string{"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}},
		{SecretURLPassword, "DSN postgres://app:Zx9vQ2mK7pL4wR@db.internal:5432/prod", "Zx9vQ2mK7pL4wR", []string{"Zx9vQ2mK7pL4wR"}},
	}
}

// testKnownSecret is a configured server secret with no recognisable shape.
const testKnownSecret = "Xq7#known-server-secret!value"

// testScanner is the scanner the type tests use: the test key and one
// known server secret.
func testScanner() *Scanner { return NewScanner(testScannerKey).WithKnown(testKnownSecret) }

func expectedPlaceholder(key []byte, t SecretType, value string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(value))
	return "[REDACTED:" + string(t) + ":" + hex.EncodeToString(mac.Sum(nil))[:12] + "]"
}

func TestScannerFindsEveryType(t *testing.T) {
	s := testScanner()
	seen := map[SecretType]bool{}
	for _, tc := range secretCases() {
		t.Run(string(tc.typ), func(t *testing.T) {
			got := s.ScanText("docs/a.md", tc.text, 0)
			if len(got) != 1 {
				t.Fatalf("got %d findings, want 1: %+v", len(got), got)
			}
			f := got[0]
			if f.Type != tc.typ {
				t.Errorf("type %s, want %s", f.Type, tc.typ)
			}
			if want := expectedPlaceholder(testScannerKey, tc.typ, tc.value); f.Placeholder != want {
				t.Errorf("placeholder %s, want %s", f.Placeholder, want)
			}
			if f.Path != "docs/a.md" {
				t.Errorf("path %q", f.Path)
			}
			seen[tc.typ] = true
		})
	}
	for _, typ := range SecretTypes() {
		if !seen[typ] {
			t.Errorf("no test case for %s", typ)
		}
	}
}

// TestScannerNeverLeaksRawValues is the adversarial check the issue asks
// for: for every type, no spelling of the value appears in any finding
// field, in the redacted text, or in any formatting of the findings.
func TestScannerNeverLeaksRawValues(t *testing.T) {
	s := testScanner()
	for _, tc := range secretCases() {
		t.Run(string(tc.typ), func(t *testing.T) {
			scanned := s.ScanText("notes/file.txt", tc.text, 10)
			redacted, fromRedact := s.Redact(tc.text)
			if len(scanned) == 0 || len(fromRedact) == 0 {
				t.Fatal("nothing found")
			}
			js, err := json.Marshal(scanned)
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{
				"redacted text":        redacted,
				"%+v of ScanText":      fmt.Sprintf("%+v", scanned),
				"%#v of ScanText":      fmt.Sprintf("%#v", scanned),
				"%v of Redact":         fmt.Sprintf("%v", fromRedact),
				"%+v of Redact":        fmt.Sprintf("%+v", fromRedact),
				"JSON of the findings": string(js),
			}
			for _, f := range append(scanned, fromRedact...) {
				outputs["Type"] += string(f.Type) + "\n"
				outputs["Path"] += f.Path + "\n"
				outputs["Placeholder"] += f.Placeholder + "\n"
			}
			for where, out := range outputs {
				for _, raw := range append([]string{tc.value}, tc.forbid...) {
					if strings.Contains(out, raw) {
						t.Errorf("%s contains %q", where, raw)
					}
				}
			}
			if !strings.Contains(redacted, scanned[0].Placeholder) {
				t.Errorf("redacted text %q lacks the placeholder %s", redacted, scanned[0].Placeholder)
			}
		})
	}
}

func TestScannerKeyNeverPrinted(t *testing.T) {
	s := NewScanner(testScannerKey)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%v", []*Scanner{s})} {
		if strings.Contains(out, string(testScannerKey)) || strings.Contains(out, "48 49 50") || strings.Contains(out, "0x30") {
			t.Errorf("scanner formats with its key: %q", out)
		}
	}
}

func TestScannerTags(t *testing.T) {
	a, b := NewScanner(testScannerKey), NewRandomScanner()
	text := "x jane@example.com y jane@example.com z john@example.com"
	fa := a.ScanText("p", text, 0)
	if len(fa) != 3 {
		t.Fatalf("got %d findings", len(fa))
	}
	if fa[0].Placeholder != fa[1].Placeholder {
		t.Error("equal values got different tags")
	}
	if fa[0].Placeholder == fa[2].Placeholder {
		t.Error("different values got equal tags")
	}
	fb := b.ScanText("p", text, 0)
	if fa[0].Placeholder == fb[0].Placeholder {
		t.Error("different keys gave equal tags")
	}
	if c := NewRandomScanner().ScanText("p", text, 0); c[0].Placeholder == fb[0].Placeholder {
		t.Error("two random scanners share a key")
	}
	// The key is copied: changing the caller's slice changes nothing.
	key := append([]byte(nil), testScannerKey...)
	s := NewScanner(key)
	key[0] ^= 0xff
	if got := s.ScanText("p", text, 0)[0].Placeholder; got != fa[0].Placeholder {
		t.Error("scanner shares the caller's key slice")
	}
}

func TestNewScannerRefusesShortKeys(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a short key")
		}
	}()
	NewScanner([]byte("short"))
}

func TestScannerLocations(t *testing.T) {
	s := NewScanner(testScannerKey)
	text := "first line\nhé → a@example.com and b@example.com\r\n\n\tAKIAIOSFODNN7EXAMPLE\n123-45-6789"
	got := s.ScanText("p", text, 0)
	want := []struct {
		typ       SecretType
		line, col int
	}{
		{SecretEmail, 2, 6},
		{SecretEmail, 2, 24},
		{SecretAWSAccessKeyID, 4, 2},
		{SecretUSSSN, 5, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, w := range want {
		if got[i].Type != w.typ || got[i].Line != w.line || got[i].Column != w.col {
			t.Errorf("finding %d = %s %d:%d, want %s %d:%d", i, got[i].Type, got[i].Line, got[i].Column, w.typ, w.line, w.col)
		}
	}
}

func TestScannerMaxFindings(t *testing.T) {
	s := NewScanner(testScannerKey)
	text := strings.Repeat("u@example.com ", 300)
	if got := s.ScanText("p", text, 3); len(got) != 3 {
		t.Errorf("limit 3: got %d", len(got))
	}
	if got := s.ScanText("p", text, 0); len(got) != DefaultMaxFindings {
		t.Errorf("default limit: got %d", len(got))
	}
	redacted, all := s.Redact(text)
	if len(all) != 300 || strings.Contains(redacted, "u@example.com") {
		t.Errorf("Redact is limited: %d findings", len(all))
	}
}

func TestScannerOverlapsReportedOnce(t *testing.T) {
	s := NewScanner(testScannerKey)
	ghp := "ghp_" + strings.Repeat("aB3dE5", 6)
	tests := []struct {
		name   string
		text   string
		want   SecretType
		forbid []string
	}{
		// The token followed by @github.com also reads as an e-mail.
		{"token in URL user info", "https://x:" + ghp + "@github.com/o/r.git", SecretGitHubToken, []string{ghp, "@github.com"}},
		// Base64 inside a key block that happens to look like other things.
		{"email inside key block", "-----BEGIN PRIVATE KEY-----\nroot@example.com\nAKIAIOSFODNN7EXAMPLE\n-----END PRIVATE KEY-----", SecretPrivateKey, []string{"root@example.com", "AKIAIOSFODNN7EXAMPLE"}},
		// A prefix that passes Luhn by chance next to a real card: both
		// are covered by one redaction.
		{"card next to digits", "ref 42 4111 1111 1111 1111", SecretCreditCard, []string{"4111 1111 1111 1111", "1111 1111"}},
		{"key without END", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nmore", SecretPrivateKey, []string{"b3BlbnNzaC1rZXktdjEAAAAA", "more"}},
		{"key pasted on one line", "-----BEGIN EC PRIVATE KEY----- MHcCAQEEIBkg4LVWM9nuwNSk3yBy -----END EC PRIVATE KEY----- ok", SecretPrivateKey, []string{"MHcCAQEEIBkg4LVWM9nuwNSk3yBy"}},
		{"encrypted key headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\nMIIEowIBAAKCAQEAu1SU1LfV\n", SecretPrivateKey, []string{"MIIEowIBAAKCAQEAu1SU1LfV", "3F17F5316E2BAC89"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.ScanText("p", tt.text, 0)
			if len(got) != 1 || got[0].Type != tt.want {
				t.Fatalf("got %+v, want one %s", got, tt.want)
			}
			redacted, _ := s.Redact(tt.text)
			for _, f := range tt.forbid {
				if strings.Contains(redacted, f) {
					t.Errorf("redacted text %q contains %q", redacted, f)
				}
			}
		})
	}
}

func TestScannerFalsePositives(t *testing.T) {
	s := NewScanner(testScannerKey)
	for name, text := range map[string]string{
		"Luhn failure":           "4111 1111 1111 1112",
		"Luhn pass, bad network": "1234 5678 9012 3452",
		"too few digits":         "4111 1111 1111",
		"too many digits":        "41111111111111111111",
		"digits in identifier":   "abc4111111111111111 id4111111111111111x",
		"double separator":       "4111  1111  1111  1111",
		"SSN area 000":           "000-12-3456",
		"SSN area 666":           "666-12-3456",
		"SSN area 9xx":           "900-12-3456 999-12-3456",
		"SSN group 00":           "123-00-4567",
		"SSN serial 0000":        "123-45-0000",
		"SSN inside a number":    "1123-45-6789 123-45-67890 x123-45-6789",
		"phone number":           "+1 (415) 555-0132, 415-555-0132",
		"date and version":       "2024-01-15 v1.2.3",
		"random hex":             "3f2a9c0d5e7b1a4c8d2e6f0a9b3c7d1e5f9a2b6c 9e107d9d372bb6826bd81d3542a419d6",
		"40 base64 no context":   "value = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"UUID":                   "550e8400-e29b-41d4-a716-446655440000",
		"AKIA inside a word":     "XAKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLEX",
		"short ghp":              "ghp_abc123",
		"JWT-like without alg":   "eyJmb28iOiJiYXIifQ.eyJ4IjoxfQ.c2ln",
		"JWT-like bad base64":    "eyJ!!!.abc.def eyJhbGciOi.x.y",
		"emails that are not":    "user@localhost a@b.c x@1.2.3.4 @handle foo@-bar.com foo@bar-.com",
		"public key":             "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
		"stripe publishable":     "pk_live_4eC39HqLyjWDarjtT1zdp7dc",
		"plain prose":            "The quick brown fox jumps over the lazy dog 1234 times.",
		"empty password":         `password = ""`,
		"env reference":          "password = ${DB_PASSWORD}\ntoken: $GITHUB_TOKEN\nsecret: %(secret)s",
		"template":               `password: "{{ .Values.password }}"` + "\napi_key: <your-api-key>\ntoken = <%= ENV['T'] %>",
		"dummy words":            "password = changeme\npassword: \"your_password_here\"\nsecret = example-secret-1\ntoken: 'xxxxxxxxxx'",
		"masked":                 `password = "********"`,
		"code expressions":       "password = os.environ[\"DB_PASSWORD\"]\ntoken = get_token()\npassword = self.config.password\nsecret = user_secret",
		"type annotations":       "def login(password: str, token: Optional[str] = None):",
		"comparison":             `if password == "hunter2hunter2":`,
		"null-ish":               "password: null\ntoken: none\nsecret: true\napi_key: undefined",
		"name continues":         "password_hash = 5f4dcc3b5aa765d61d8327deb882cf99\nmax_tokens = 409600\ntoken_url = https://idp.example.com/token",
		"short value":            "pwd = abc12",
		"yaml alias and tag":     "password: *default_password\nsecret: !vault |",
		"npm-like too short":     "npm_abc123",
		"gitlab-like too short":  "glpat-abc123",
		"AccountKey too short":   "AccountKey=abc123==",
	} {
		t.Run(name, func(t *testing.T) {
			if got := s.ScanText("p", text, 0); len(got) != 0 {
				t.Errorf("findings in %q: %+v", text, got)
			}
			if redacted, _ := s.Redact(text); redacted != text {
				t.Errorf("Redact changed %q to %q", text, redacted)
			}
		})
	}
}

// TestTruncatedKeyHidesNothingAfterIt is the class of the example:
// a BEGIN line without its END line spans only its own block, whatever
// follows it, and every secret after it is still found on its own.
func TestTruncatedKeyHidesNothingAfterIt(t *testing.T) {
	s := testScanner()
	for _, begin := range []string{"-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----"} {
		for _, body := range []string{"", "\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17\n\nMIIEow=="} {
			for _, gap := range []string{"\n", "\n\n", "\nnotes:\n"} {
				var want []SecretType
				text := begin + body + gap
				for _, tc := range secretCases() {
					if tc.typ == SecretPrivateKey || strings.HasPrefix(tc.text, "-----") {
						continue
					}
					text += "before " + strings.TrimSpace(tc.text) + " after\n"
					want = append(want, tc.typ)
				}
				// A complete key further down does not lend its END line.
				text += "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----\n"
				got := s.ScanText("p", text, 0)
				if len(got) != len(want)+2 {
					t.Fatalf("%q: %d findings, want %d: %+v", begin+body+gap, len(got), len(want)+2, got)
				}
				if got[0].Type != SecretPrivateKey || got[len(got)-1].Type != SecretPrivateKey {
					t.Errorf("keys not found first and last: %+v", got)
				}
				for i, w := range want {
					if got[i+1].Type != w {
						t.Errorf("finding %d is %s, want %s", i+1, got[i+1].Type, w)
					}
				}
			}
		}
	}
}

func TestAWSSecretContexts(t *testing.T) {
	s := NewScanner(testScannerKey)
	const v = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	for _, text := range []string{
		"aws_secret_access_key = " + v,
		"AWS_SECRET_ACCESS_KEY=" + v,
		`"SecretAccessKey": "` + v + `"`,
		"aws_secret_key: '" + v + "'",
		"secret-access-key := " + v,
		":aws_secret => \"" + v + "\"",
	} {
		got := s.ScanText("p", text, 0)
		if len(got) != 1 || got[0].Type != SecretAWSSecretAccessKey {
			t.Errorf("%q: %+v", text, got)
		}
	}
	// The name must be on the same line.
	if got := s.ScanText("p", "aws_secret_access_key =\n"+v, 0); len(got) != 0 {
		t.Errorf("context across lines: %+v", got)
	}
}

func FuzzScannerRedact(f *testing.F) {
	for _, tc := range secretCases() {
		f.Add(tc.text)
	}
	f.Add("a@b.co 4111-1111-1111-1111 123-45-6789")
	s := NewScanner(testScannerKey)
	f.Fuzz(func(t *testing.T, text string) {
		redacted, findings := s.Redact(text)
		scanned := s.ScanText("p", text, len(findings)+1)
		if len(scanned) != len(findings) {
			t.Fatalf("ScanText found %d, Redact %d", len(scanned), len(findings))
		}
		// Redaction is complete: nothing is found in its output except
		// what the placeholders themselves could be mistaken for.
		for _, f := range s.ScanText("p", redacted, 0) {
			t.Fatalf("redacted text still holds a %s", f.Type)
		}
	})
}

// benchText builds about 1 MB of prose and configuration with a secret
// every few kilobytes.
func benchText() string {
	var b strings.Builder
	para := "Deployment notes for the reporting service. The nightly job reads from the warehouse, " +
		"aggregates 1,234 rows per batch and posts a summary at 06:00 UTC (see runbook section 4.2).\n" +
		"config:\n  region: eu-west-1\n  timeout_seconds: 30\n  endpoint: https://api.example.com/v2/reports?limit=100\n" +
		"Contact the on-call engineer or open a ticket; version 2.14.3-rc1 fixed the retry loop.\n"
	secrets := []string{
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
		"owner: jane.doe@example.com\n",
		"card on file 4111 1111 1111 1111\n",
		"token ghp_" + strings.Repeat("aB3dE5", 6) + "\n",
	}
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(para)
		if i%5 == 0 {
			b.WriteString(secrets[(i/5)%len(secrets)])
		}
	}
	return b.String()
}

func BenchmarkScanText1MB(b *testing.B) {
	s := NewScanner(testScannerKey)
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		s.ScanText("bench.md", text, DefaultMaxFindings)
	}
}

func BenchmarkRedact1MB(b *testing.B) {
	s := NewScanner(testScannerKey)
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		s.Redact(text)
	}
}

// BenchmarkScanText1MBDense is digits and at-signs everywhere: the
// hand-written detectors' worst ordinary case.
func BenchmarkScanText1MBDense(b *testing.B) {
	s := NewScanner(testScannerKey)
	text := strings.Repeat("id 4111-1111 12-34 a@b x@y.z 2024-01-15 ", 1<<20/41)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		s.ScanText("bench.md", text, 0)
	}
}

// sourceText is 1 MB of real Go source: this package's own files,
// repeated, the shape code_read and code_explain redact most. With
// asciiOnly it takes only the files that are plain ASCII (most source);
// otherwise the text holds a few non-ASCII characters, so the whole of it
// takes the normalizing path.
func sourceText(b *testing.B, asciiOnly bool) string {
	b.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		b.Fatalf("no source files: %v", err)
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			if asciiOnly && !isASCII(string(raw)) {
				continue
			}
			sb.Write(raw)
		}
	}
	return sb.String()[:1<<20]
}

// BenchmarkRedactSource1MB is the redaction-throughput budget: 1 MB of
// source at 50 MB/s or more (Mixed: with some non-ASCII characters).
func BenchmarkRedactSource1MB(b *testing.B) {
	b.Run("ASCII", func(b *testing.B) { benchRedactSource(b, true) })
	b.Run("Mixed", func(b *testing.B) { benchRedactSource(b, false) })
}

func benchRedactSource(b *testing.B, asciiOnly bool) {
	s := NewScanner(testScannerKey)
	text := sourceText(b, asciiOnly)
	b.SetBytes(int64(len(text)))
	b.ReportMetric(float64(RuleCount()), "rules")
	b.ResetTimer()
	for b.Loop() {
		s.Redact(text)
	}
}
