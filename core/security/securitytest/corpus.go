// Package securitytest holds the planted-secret corpus the redaction tests
// share: realistic but fake credentials of many types, built from a fixed
// seed so every run plants the same values and none of them was ever
// issued by anyone.
package securitytest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Planted is one fake secret: the line that carries it in a file, the raw
// value that must never come back, and the type the scanner should name.
type Planted struct {
	Name  string
	Type  string
	Line  string
	Value string
}

// Corpus returns the 43 planted secrets, each on its own line in Line.
func Corpus() []Planted {
	g := gen{rand.New(rand.NewPCG(21, 43))}
	const (
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		lower  = "abcdefghijklmnopqrstuvwxyz"
		digits = "0123456789"
		hex    = "0123456789abcdef"
		alnum  = upper + lower + digits
		urlb64 = alnum + "_-"
		b64    = alnum + "+/"
	)
	jwtHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtBody := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"svc-reporting","iat":1767225600,"scope":"admin"}`))
	rsa := pem("RSA PRIVATE KEY", g.bytes(600))
	ssh := pem("OPENSSH PRIVATE KEY", g.bytes(400))
	p := []Planted{
		{Name: "aws-access-key-id", Type: "AWS_ACCESS_KEY_ID", Value: "AKIA" + g.s(upper+"234567", 16)},
		{Name: "aws-secret-access-key", Type: "AWS_SECRET_ACCESS_KEY", Value: g.s(b64, 40)},
		{Name: "github-pat", Type: "GITHUB_TOKEN", Value: "ghp_" + g.s(alnum, 36)},
		{Name: "github-fine-grained-pat", Type: "GITHUB_TOKEN", Value: "github_pat_11" + g.s(upper+digits, 20) + "_" + g.s(alnum, 59)},
		{Name: "github-oauth", Type: "GITHUB_TOKEN", Value: "gho_" + g.s(alnum, 36)},
		{Name: "gitlab-pat", Type: "GITLAB_TOKEN", Value: "glpat-" + g.s(alnum, 20)},
		{Name: "slack-bot-token", Type: "SLACK_TOKEN", Value: "xoxb-" + g.s(digits, 12) + "-" + g.s(digits, 13) + "-" + g.s(alnum, 24)},
		{Name: "slack-webhook-url", Type: "SLACK_WEBHOOK", Value: "https://hooks.slack.com/services/T" + g.s(upper+digits, 8) + "/B" + g.s(upper+digits, 10) + "/" + g.s(alnum, 24)},
		{Name: "stripe-live-key", Type: "STRIPE_KEY", Value: "sk_live_51" + g.s(alnum, 96)},
		{Name: "gcp-api-key", Type: "GOOGLE_API_KEY", Value: "AIza" + g.s(alnum, 35)},
		{Name: "npm-access-token", Type: "NPM_TOKEN", Value: "npm_" + g.s(alnum, 36)},
		{Name: "azure-storage-key", Type: "AZURE_STORAGE_KEY", Value: base64.StdEncoding.EncodeToString(g.bytes(64))},
		{Name: "rsa-private-key", Type: "PRIVATE_KEY", Value: rsa},
		{Name: "openssh-private-key", Type: "PRIVATE_KEY", Value: ssh},
		{Name: "jwt", Type: "JWT", Value: jwtHeader + "." + jwtBody + "." + g.s(urlb64, 43)},
		{Name: "openai-project-key", Type: "OPENAI_API_KEY", Value: "sk-proj-" + g.s(urlb64, 74) + "T3BlbkFJ" + g.s(urlb64, 74)},
		{Name: "openai-service-account-key", Type: "OPENAI_API_KEY", Value: "sk-svcacct-" + g.s(urlb64, 74) + "T3BlbkFJ" + g.s(urlb64, 74)},
		{Name: "anthropic-api-key", Type: "ANTHROPIC_API_KEY", Value: "sk-ant-api03-" + g.s(urlb64, 93) + "AA"},
		{Name: "anthropic-admin-key", Type: "ANTHROPIC_API_KEY", Value: "sk-ant-admin01-" + g.s(urlb64, 93) + "AA"},
		{Name: "huggingface-token", Type: "API_TOKEN", Value: "hf_" + g.s(upper+lower, 34)},
		{Name: "sendgrid-key", Type: "API_TOKEN", Value: "SG." + g.s(urlb64, 22) + "." + g.s(urlb64, 43)},
		{Name: "twilio-api-key", Type: "API_TOKEN", Value: "SK" + g.s(hex, 32)},
		{Name: "digitalocean-pat", Type: "API_TOKEN", Value: "dop_v1_" + g.s(hex, 64)},
		{Name: "shopify-access-token", Type: "API_TOKEN", Value: "shpat_" + g.s(hex, 32)},
		{Name: "pypi-upload-token", Type: "API_TOKEN", Value: "pypi-AgEIcHlwaS5vcmc" + g.s(urlb64, 160)},
		{Name: "databricks-token", Type: "API_TOKEN", Value: "dapi" + g.s(hex, 32)},
		{Name: "doppler-token", Type: "API_TOKEN", Value: "dp.pt." + g.s(alnum, 43)},
		{Name: "linear-api-key", Type: "API_TOKEN", Value: "lin_api_" + g.s(alnum, 40)},
		{Name: "postman-api-key", Type: "API_TOKEN", Value: "PMAK-" + g.s(hex, 24) + "-" + g.s(hex, 34)},
		{Name: "vault-service-token", Type: "API_TOKEN", Value: "hvs." + g.s(urlb64, 95)},
		{Name: "grafana-service-account-token", Type: "API_TOKEN", Value: "glsa_" + g.s(alnum, 32) + "_" + g.s(hex, 8)},
		{Name: "age-secret-key", Type: "PRIVATE_KEY", Value: "AGE-SECRET-KEY-1" + g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)},
		{Name: "azure-ad-client-secret", Type: "API_TOKEN", Value: g.s(alnum, 3) + "8Q~" + g.s(alnum+"_~.", 34)},
		{Name: "database-password", Type: "CREDENTIAL", Value: g.s(alnum, 10) + "!" + g.s(digits, 3)},
		{Name: "dsn-password", Type: "URL_PASSWORD", Value: g.s(alnum, 18)},
		{Name: "bearer-header", Type: "AUTH_HEADER", Value: g.s(hex, 40)},
		{Name: "mailgun-key", Type: "API_TOKEN", Value: "key-" + g.s(hex, 32)},
		{Name: "perplexity-key", Type: "API_TOKEN", Value: "pplx-" + g.s(alnum, 48)},
		{Name: "heroku-key", Type: "API_TOKEN", Value: "HRKU-AA" + g.s(urlb64, 58)},
		{Name: "notion-token", Type: "API_TOKEN", Value: "ntn_" + g.s(digits, 11) + g.s(alnum, 35)},
		{Name: "atlassian-token", Type: "API_TOKEN", Value: "ATATT3" + g.s(urlb64, 186)},
		{Name: "client-secret", Type: "CREDENTIAL", Value: g.s(alnum, 32)},
		{Name: "terraform-cloud-token", Type: "API_TOKEN", Value: g.s(lower+digits, 14) + ".atlasv1." + g.s(alnum, 67)},
	}
	lines := map[string]string{
		"aws-access-key-id":     "aws_access_key_id = %s",
		"aws-secret-access-key": "aws_secret_access_key = %s",
		"azure-storage-key":     "STORAGE=DefaultEndpointsProtocol=https;AccountName=reports;AccountKey=%s;EndpointSuffix=core.windows.net",
		"database-password":     `DB_PASSWORD="%s"`,
		"dsn-password":          "DATABASE_URL=postgres://reporting:%s@db.internal.example:5432/reports",
		"bearer-header":         "curl -H 'Authorization: Bearer %s' https://api.internal.example/v1/jobs",
		"client-secret":         `"client_secret": "%s",`,
		"jwt":                   "session = %s",
	}
	for i := range p {
		if f, ok := lines[p[i].Name]; ok {
			p[i].Line = strings.Replace(f, "%s", p[i].Value, 1)
		} else {
			p[i].Line = strings.ToUpper(strings.ReplaceAll(p[i].Name, "-", "_")) + ": " + p[i].Value
		}
	}
	return p
}

// File renders the corpus as one configuration-like file, each secret on
// its own line between ordinary text.
func File(p []Planted) string {
	var b strings.Builder
	b.WriteString("# Service configuration (fake values planted for the redaction tests)\n\n")
	for i, s := range p {
		b.WriteString("# setting ")
		b.WriteString(s.Name)
		b.WriteString("\n")
		b.WriteString(s.Line)
		b.WriteString("\n")
		if i%5 == 4 {
			b.WriteString("\nThe nightly job reads these at start-up and never logs them.\n\n")
		}
	}
	return b.String()
}

// Fragments are the pieces of a value whose presence in output means it
// leaked: the whole value, and for long ones a middle slice, so a partial
// redaction is caught too. For a PEM block each body line counts.
func Fragments(s Planted) []string {
	if strings.HasPrefix(s.Value, "-----BEGIN") {
		var out []string
		for _, l := range strings.Split(s.Value, "\n") {
			if !strings.HasPrefix(l, "-----") && len(l) >= 16 {
				out = append(out, l)
			}
		}
		return out
	}
	out := []string{s.Value}
	if len(s.Value) >= 24 {
		m := len(s.Value) / 2
		out = append(out, s.Value[m-8:m+8])
	}
	return out
}

type gen struct{ r *rand.Rand }

func (g gen) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func pem(label string, body []byte) string {
	enc := base64.StdEncoding.EncodeToString(body)
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----\n")
	for len(enc) > 64 {
		b.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	b.WriteString(enc + "\n-----END " + label + "-----")
	return b.String()
}
