// This file holds the scanner's token rules: credentials a vendor issues
// with a fixed, recognisable prefix (or infix), checked in one pass over the
// text. The set follows gitleaks' default configuration (config/gitleaks.toml,
// v8.30.1); docs/reference/secret-rules.md lists which of its rules are
// carried here and which are not, and why.

package security

import (
	"regexp"
	"strings"
	"sync"
)

// Token types beyond the original detectors. Each is the TYPE part of a
// placeholder.
const (
	// SecretOpenAIKey is an OpenAI API key: a project, service-account or
	// admin key (sk-proj-, sk-svcacct-, sk-admin-) or a legacy sk- key.
	SecretOpenAIKey SecretType = "OPENAI_API_KEY"
	// SecretAnthropicKey is an Anthropic API or admin key (sk-ant-api03-,
	// sk-ant-admin01- and siblings).
	SecretAnthropicKey SecretType = "ANTHROPIC_API_KEY"
	// SecretServerSecret is one of this server's own configured secret
	// values (an API key, a signing secret, a DSN or its password), found
	// whatever its shape.
	SecretServerSecret SecretType = "SERVER_SECRET"
	// SecretURLPassword is the password of a URL's user information
	// (scheme://user:password@host), a DSN's most of all.
	SecretURLPassword SecretType = "URL_PASSWORD"
	// SecretAuthHeader is the credential of an HTTP Authorization header or
	// a curl -H/--user argument (Bearer, Basic, token).
	SecretAuthHeader SecretType = "AUTH_HEADER"
	// SecretAPIToken is a vendor token recognised by its issued prefix; the
	// vendor is named in the rule list, not in the placeholder.
	SecretAPIToken SecretType = "API_TOKEN"
	// SecretWebhookURL is an incoming-webhook URL that is itself the
	// credential (Microsoft Teams, Discord).
	SecretWebhookURL SecretType = "WEBHOOK_URL"
)

// tokenRule is one prefixed credential shape. The pattern is matched
// anchored where the prefix occurs; the match must not be glued to a letter
// or digit on either side (open: on the left it may be).
type tokenRule struct {
	typ     SecretType
	prefix  string // literal, case-sensitive, at least two bytes
	pattern string // whole token, starting with the prefix
	group   int    // submatch that is the secret; 0 is the whole match
	open    bool
	re      *regexp.Regexp
}

// tokenWindow bounds how far past its prefix a token is matched: longer
// than any token a vendor issues (PyPI's, the longest, is about 1 KB with
// its prefix), so a pathological text cannot make one check expensive.
const tokenWindow = 2048

// tokenRuleSpecs is the table. Comments name the gitleaks rule ids each
// line carries.
var tokenRuleSpecs = []tokenRule{
	// aws-access-token
	{typ: SecretAWSAccessKeyID, prefix: "AKIA", pattern: `AKIA[A-Z0-9]{16}`},
	{typ: SecretAWSAccessKeyID, prefix: "ASIA", pattern: `ASIA[A-Z0-9]{16}`},
	{typ: SecretAWSAccessKeyID, prefix: "ABIA", pattern: `ABIA[A-Z0-9]{16}`},
	{typ: SecretAWSAccessKeyID, prefix: "ACCA", pattern: `ACCA[A-Z0-9]{16}`},
	{typ: SecretAWSAccessKeyID, prefix: "A3T", pattern: `A3T[A-Z0-9]{17}`},
	// aws-amazon-bedrock-api-key-long-lived, -short-lived
	{typ: SecretAPIToken, prefix: "ABSK", pattern: `ABSK[A-Za-z0-9+/]{109,269}={0,2}`},
	{typ: SecretAPIToken, prefix: "bedrock-api-key-", pattern: `bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*`},
	// github-pat, github-oauth, github-app-token, github-refresh-token
	{typ: SecretGitHubToken, prefix: "gh", pattern: `gh[pousr]_[A-Za-z0-9]{36,}`},
	// github-fine-grained-pat
	{typ: SecretGitHubToken, prefix: "github_pat_", pattern: `github_pat_[A-Za-z0-9_]{82,}`},
	// gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-authentication-token(-routable),
	// gitlab-ptt, gitlab-feed-token, gitlab-oauth-app-secret, gitlab-cicd-job-token,
	// gitlab-feature-flag-client-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token, gitlab-scim-token
	{typ: SecretGitLabToken, prefix: "gl", pattern: `gl(?:pat|dt|rt|ptt|ft|oas|cbt|ffct|imt|agent|soat)-[A-Za-z0-9_-]{20,}(?:\.[a-z0-9]{9})?`},
	// gitlab-rrt
	{typ: SecretGitLabToken, prefix: "GR1348941", pattern: `GR1348941[A-Za-z0-9_-]{20,}`},
	// gitlab-session-cookie
	{typ: SecretGitLabToken, prefix: "_gitlab_session=", pattern: `_gitlab_session=([0-9a-z]{32})`, group: 1},
	// grafana-cloud-api-token, grafana-service-account-token
	{typ: SecretAPIToken, prefix: "glc_", pattern: `glc_[A-Za-z0-9+/]{32,400}={0,3}`},
	{typ: SecretAPIToken, prefix: "glsa_", pattern: `glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`},
	// grafana-api-key (its prefix is a JWT-looking "eyJrIjoi")
	{typ: SecretAPIToken, prefix: "eyJrIjoi", pattern: `eyJrIjoi[A-Za-z0-9]{70,400}={0,3}`},
	// slack-bot-token, slack-user-token, slack-legacy-*, slack-config-access-token, slack-config-refresh-token
	{typ: SecretSlackToken, prefix: "xox", pattern: `xox(?:[abeoprs]|e\.xox[bp])-[A-Za-z0-9-]{10,}`},
	// slack-app-token
	{typ: SecretSlackToken, prefix: "xapp-", pattern: `xapp-[A-Za-z0-9-]{10,}`},
	// slack-webhook-url
	{typ: SecretSlackWebhook, prefix: "https://hooks.slack.com/", pattern: `https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}`, open: true},
	{typ: SecretSlackWebhook, prefix: "http://hooks.slack.com/", pattern: `http://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}`, open: true},
	{typ: SecretSlackWebhook, prefix: "hooks.slack.com/", pattern: `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}`},
	// microsoft-teams-webhook (and Discord webhooks, which gitleaks does not carry)
	{typ: SecretWebhookURL, prefix: "https://", pattern: `https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{20,}`, open: true},
	{typ: SecretWebhookURL, prefix: "https://discord", pattern: `https://discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}`, open: true},
	// stripe-access-token
	{typ: SecretStripeKey, prefix: "sk_", pattern: `sk_(?:live|test|prod)_[A-Za-z0-9]{10,99}`},
	{typ: SecretStripeKey, prefix: "rk_", pattern: `rk_(?:live|test|prod)_[A-Za-z0-9]{10,99}`},
	// openai-api-key (project, service-account, admin and legacy keys)
	{typ: SecretOpenAIKey, prefix: "sk-", pattern: `sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})`},
	// anthropic-api-key, anthropic-admin-api-key
	{typ: SecretAnthropicKey, prefix: "sk-ant-", pattern: `sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{32,}`},
	// gcp-api-key
	{typ: SecretGoogleAPIKey, prefix: "AIza", pattern: `AIza[A-Za-z0-9_-]{35}`},
	// npm-access-token
	{typ: SecretNPMToken, prefix: "npm_", pattern: `npm_[A-Za-z0-9]{36}`},
	// 1password-secret-key, 1password-service-account-token
	{typ: SecretAPIToken, prefix: "A3-", pattern: `A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`},
	{typ: SecretAPIToken, prefix: "ops_eyJ", pattern: `ops_eyJ[A-Za-z0-9+/]{250,}={0,3}`},
	// adobe-client-secret
	{typ: SecretAPIToken, prefix: "p8e-", pattern: `p8e-[A-Za-z0-9]{32}`},
	// age-secret-key
	{typ: SecretPrivateKey, prefix: "AGE-SECRET-KEY-1", pattern: `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
	// airtable-personnal-access-token
	{typ: SecretAPIToken, prefix: "pat", pattern: `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`},
	// alibaba-access-key-id
	{typ: SecretAPIToken, prefix: "LTAI", pattern: `LTAI[A-Za-z0-9]{20}`},
	// artifactory-api-key, artifactory-reference-token
	{typ: SecretAPIToken, prefix: "AKCp", pattern: `AKCp[A-Za-z0-9]{69}`},
	{typ: SecretAPIToken, prefix: "cmVmd", pattern: `cmVmd[A-Za-z0-9]{59}`},
	// authress-service-client-access-key
	{typ: SecretAPIToken, prefix: "sc_", pattern: `sc_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	{typ: SecretAPIToken, prefix: "ext_", pattern: `ext_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	{typ: SecretAPIToken, prefix: "scauth_", pattern: `scauth_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	{typ: SecretAPIToken, prefix: "authress_", pattern: `authress_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	// atlassian-api-token (the ATATT3 form; the context form is a credential assignment)
	{typ: SecretAPIToken, prefix: "ATATT3", pattern: `ATATT3[A-Za-z0-9_=-]{186}`},
	// clickhouse-cloud-api-secret-key
	{typ: SecretAPIToken, prefix: "4b1d", pattern: `4b1d[A-Za-z0-9]{38}`},
	// clojars-api-token
	{typ: SecretAPIToken, prefix: "CLOJARS_", pattern: `CLOJARS_[A-Za-z0-9]{60}`},
	// cloudflare-origin-ca-key
	{typ: SecretAPIToken, prefix: "v1.0-", pattern: `v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`},
	// databricks-api-token
	{typ: SecretAPIToken, prefix: "dapi", pattern: `dapi[a-f0-9]{32}(?:-[0-9])?`},
	// digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token
	{typ: SecretAPIToken, prefix: "dop_v1_", pattern: `dop_v1_[a-f0-9]{64}`},
	{typ: SecretAPIToken, prefix: "doo_v1_", pattern: `doo_v1_[a-f0-9]{64}`},
	{typ: SecretAPIToken, prefix: "dor_v1_", pattern: `dor_v1_[a-f0-9]{64}`},
	// doppler-api-token
	{typ: SecretAPIToken, prefix: "dp.pt.", pattern: `dp\.pt\.[A-Za-z0-9]{43}`},
	// duffel-api-token
	{typ: SecretAPIToken, prefix: "duffel_", pattern: `duffel_(?:test|live)_[A-Za-z0-9_=-]{43}`},
	// dynatrace-api-token
	{typ: SecretAPIToken, prefix: "dt0c01.", pattern: `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`},
	// easypost-api-token, easypost-test-api-token
	{typ: SecretAPIToken, prefix: "EZ", pattern: `EZ[AT]K[A-Za-z0-9]{54}`},
	// facebook-page-access-token, square-access-token (EAAA)
	{typ: SecretAPIToken, prefix: "EAA", pattern: `EAA(?:[MC][A-Za-z0-9]{100,}|A[A-Za-z0-9_-]{22,60})`},
	// square-access-token (sq0atp-) and the Square OAuth secret (sq0csp-)
	{typ: SecretAPIToken, prefix: "sq0", pattern: `sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}`},
	// flutterwave-secret-key, flutterwave-encryption-key (the public key is public)
	{typ: SecretAPIToken, prefix: "FLWSECK", pattern: `FLWSECK(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?`},
	// flyio-access-token
	{typ: SecretAPIToken, prefix: "fo1_", pattern: `fo1_[A-Za-z0-9_-]{43}`},
	{typ: SecretAPIToken, prefix: "fm", pattern: `fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3}`},
	// frameio-api-token
	{typ: SecretAPIToken, prefix: "fio-u-", pattern: `fio-u-[A-Za-z0-9_=-]{64}`},
	// harness-api-key
	{typ: SecretAPIToken, prefix: "pat.", pattern: `pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`},
	{typ: SecretAPIToken, prefix: "sat.", pattern: `sat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`},
	// heroku-api-key-v2
	{typ: SecretAPIToken, prefix: "HRKU-", pattern: `HRKU-AA[0-9A-Za-z_-]{58}`},
	// huggingface-access-token, huggingface-organization-api-token
	{typ: SecretAPIToken, prefix: "hf_", pattern: `hf_[A-Za-z]{34}`},
	{typ: SecretAPIToken, prefix: "api_org_", pattern: `api_org_[A-Za-z]{34}`},
	// infracost-api-token
	{typ: SecretAPIToken, prefix: "ico-", pattern: `ico-[A-Za-z0-9]{32}`},
	// intra42-client-secret
	{typ: SecretAPIToken, prefix: "s-s4t2", pattern: `s-s4t2(?:ud|af)-[a-f0-9]{64}`},
	// linear-api-key
	{typ: SecretAPIToken, prefix: "lin_api_", pattern: `lin_api_[A-Za-z0-9]{40}`},
	// mailgun-private-api-token (without its context: the key- shape is specific enough)
	{typ: SecretAPIToken, prefix: "key-", pattern: `key-[a-f0-9]{32}`},
	// mapbox secret tokens (gitleaks carries only the public pk. form, which is not secret)
	{typ: SecretAPIToken, prefix: "sk.eyJ", pattern: `sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}`},
	// new-relic-user-api-key, new-relic-insert-key, new-relic-browser-api-token
	{typ: SecretAPIToken, prefix: "NR", pattern: `NR(?:AK-[A-Za-z0-9]{27}|II-[A-Za-z0-9-]{32}|JS-[a-f0-9]{19})`},
	// notion-api-token
	{typ: SecretAPIToken, prefix: "ntn_", pattern: `ntn_[0-9]{11}[A-Za-z0-9]{35}`},
	// octopus-deploy-api-key
	{typ: SecretAPIToken, prefix: "API-", pattern: `API-[A-Z0-9]{26}`},
	// openshift-user-token
	{typ: SecretAPIToken, prefix: "sha256~", pattern: `sha256~[A-Za-z0-9_-]{43}`},
	// perplexity-api-key
	{typ: SecretAPIToken, prefix: "pplx-", pattern: `pplx-[A-Za-z0-9]{48}`},
	// planetscale-api-token, planetscale-oauth-token, planetscale-password
	{typ: SecretAPIToken, prefix: "pscale_", pattern: `pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}`},
	// postman-api-token
	{typ: SecretAPIToken, prefix: "PMAK-", pattern: `PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`},
	// prefect-api-token
	{typ: SecretAPIToken, prefix: "pnu_", pattern: `pnu_[A-Za-z0-9]{36}`},
	// pulumi-api-token
	{typ: SecretAPIToken, prefix: "pul-", pattern: `pul-[a-f0-9]{40}`},
	// pypi-upload-token
	{typ: SecretAPIToken, prefix: "pypi-AgEIcHlwaS5vcmc", pattern: `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}`},
	// readme-api-token
	{typ: SecretAPIToken, prefix: "rdme_", pattern: `rdme_[a-z0-9]{70}`},
	// rubygems-api-token
	{typ: SecretAPIToken, prefix: "rubygems_", pattern: `rubygems_[a-f0-9]{48}`},
	// scalingo-api-token
	{typ: SecretAPIToken, prefix: "tk-us-", pattern: `tk-us-[A-Za-z0-9_-]{48}`},
	// sendgrid-api-token
	{typ: SecretAPIToken, prefix: "SG.", pattern: `SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`},
	// sendinblue-api-token
	{typ: SecretAPIToken, prefix: "xkeysib-", pattern: `xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`},
	// sentry-user-token, sentry-org-token
	{typ: SecretAPIToken, prefix: "sntryu_", pattern: `sntryu_[a-f0-9]{64}`},
	{typ: SecretAPIToken, prefix: "sntrys_", pattern: `sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,}`},
	// settlemint-*-access-token
	{typ: SecretAPIToken, prefix: "sm_", pattern: `sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}`},
	// shippo-api-token
	{typ: SecretAPIToken, prefix: "shippo_", pattern: `shippo_(?:live|test)_[a-fA-F0-9]{40}`},
	// shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret
	{typ: SecretAPIToken, prefix: "shp", pattern: `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`},
	// sourcegraph-access-token (the sgp_ forms; a bare 40-hex string is not reported)
	{typ: SecretAPIToken, prefix: "sgp_", pattern: `sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}`},
	// twilio-api-key
	{typ: SecretAPIToken, prefix: "SK", pattern: `SK[0-9a-fA-F]{32}`},
	// twitter-bearer-token (without its context: 22 A's then 80 or more characters)
	{typ: SecretAPIToken, prefix: "AAAAAAAAAAAAAAAAAAAAA", pattern: `A{22}[A-Za-z0-9%]{80,100}`},
	// typeform-api-token
	{typ: SecretAPIToken, prefix: "tfp_", pattern: `tfp_[A-Za-z0-9_.=-]{59}`},
	// vault-service-token (hvs.), vault-batch-token
	{typ: SecretAPIToken, prefix: "hvs.", pattern: `hvs\.[A-Za-z0-9_-]{90,120}`},
	{typ: SecretAPIToken, prefix: "hvb.", pattern: `hvb\.[A-Za-z0-9_-]{138,300}`},
	// yandex-api-key (AQVN form)
	{typ: SecretAPIToken, prefix: "AQVN", pattern: `AQVN[A-Za-z0-9_-]{35,38}`},
	// dropbox-short-lived-api-token (without its context)
	{typ: SecretAPIToken, prefix: "sl.", pattern: `sl\.[A-Za-z0-9_=-]{130,}`},
	// curl-auth-header and the Authorization header anywhere (HTTP dumps, docs, logs)
	{typ: SecretAuthHeader, prefix: "Authorization", pattern: `Authorization["']?[ \t]*[:=][ \t]*["']?(?:Bearer|Basic|Token|token|bearer|basic)[ \t]+([A-Za-z0-9._~+/=-]{8,})`, group: 1},
	{typ: SecretAuthHeader, prefix: "authorization", pattern: `authorization["']?[ \t]*[:=][ \t]*["']?(?:Bearer|Basic|Token|token|bearer|basic)[ \t]+([A-Za-z0-9._~+/=-]{8,})`, group: 1},
	// curl-auth-user
	{typ: SecretAuthHeader, prefix: "--user", pattern: `--user[ =]+["']?[^\s:"']{1,64}:([^\s"']{3,})`, group: 1},
	// nuget-config-password
	{typ: SecretCredential, prefix: "<add key=", pattern: `<add key="(?:ClearText)?Password"\s*value="([^"]{8,})"`, group: 1},
	// jwt
	{typ: SecretJWT, prefix: "eyJ", pattern: `eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+)?`},
}

// infixRule is a credential recognised by a literal inside it rather than
// at its start: the pattern is searched in a window around each
// occurrence of the infix and must cover it.
type infixRule struct {
	typ     SecretType
	infix   string
	before  int // how far before the infix the token may start
	after   int // how far after the infix it may end
	pattern string
	re      *regexp.Regexp
}

var infixRuleSpecs = []infixRule{
	// azure-ad-client-secret
	{typ: SecretAPIToken, infix: "Q~", before: 4, after: 34, pattern: `[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`},
	// hashicorp-tf-api-token
	{typ: SecretAPIToken, infix: ".atlasv1.", before: 14, after: 70, pattern: `[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}`},
	// maxmind-license-key
	{typ: SecretAPIToken, infix: "_mmk", before: 36, after: 0, pattern: `[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk`},
}

// tokenRules are the compiled tables and the first-two-bytes index that
// lets one pass over the text find every candidate.
type tokenRules struct {
	rules []tokenRule
	infix []infixRule
	// pairs marks the first two bytes of some prefix; byPair[k]-1 indexes
	// groups, the rules whose prefix starts with pair k, in table order.
	pairs  [1 << 16 / 64]uint64
	byPair [1 << 16]uint8
	groups [][]int
}

var compiledTokenRules = sync.OnceValue(func() *tokenRules {
	t := &tokenRules{}
	for i, r := range tokenRuleSpecs {
		if len(r.prefix) < 2 {
			panic("security: token rule prefix shorter than two bytes")
		}
		r.re = regexp.MustCompile(`^(?:` + r.pattern + `)`)
		t.rules = append(t.rules, r)
		k := pairKey(r.prefix[0], r.prefix[1])
		if t.byPair[k] == 0 {
			t.groups = append(t.groups, nil)
			t.byPair[k] = uint8(len(t.groups))
		}
		g := t.byPair[k] - 1
		t.groups[g] = append(t.groups[g], i)
		t.pairs[k>>6] |= 1 << (k & 63)
	}
	for _, r := range infixRuleSpecs {
		r.re = regexp.MustCompile(r.pattern)
		t.infix = append(t.infix, r)
	}
	return t
})

func pairKey(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// findTokens reports every token rule match in one pass: at each position
// whose two bytes start some rule's prefix, the rules sharing that pair are
// tried, anchored there. A match moves the pass past it.
func findTokens(text string, found []secretSpan) []secretSpan {
	t := compiledTokenRules()
	for i := 0; i+1 < len(text); i++ {
		k := pairKey(text[i], text[i+1])
		if t.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		glued := i > 0 && isAlnumByte(text[i-1])
		for _, ri := range t.groups[t.byPair[k]-1] {
			r := &t.rules[ri]
			if glued && !r.open || !strings.HasPrefix(text[i:], r.prefix) {
				continue
			}
			window := text[i:min(len(text), i+tokenWindow)]
			loc := r.re.FindStringSubmatchIndex(window)
			if loc == nil {
				continue
			}
			end := i + loc[1]
			if end < len(text) && isAlnumByte(text[end]) {
				continue
			}
			if r.typ == SecretJWT && !jwtValid(text, i, end) {
				continue
			}
			if r.typ == SecretGoogleAPIKey && !googleKeyBounded(text, i, end) {
				continue
			}
			vs, ve := i+loc[2*r.group], i+loc[2*r.group+1]
			found = append(found, secretSpan{start: vs, end: ve, typ: r.typ, value: text[vs:ve]})
			// A rule whose secret is a part of its match (a header's
			// credential) leaves that part to be matched again, so a more
			// specific rule (a JWT) can name it.
			if r.group > 0 {
				i = vs - 1
			} else {
				i = end - 1
			}
			break
		}
	}
	for _, r := range t.infix {
		for from := 0; ; {
			k := strings.Index(text[from:], r.infix)
			if k < 0 {
				break
			}
			at := from + k
			from = at + len(r.infix)
			lo := max(0, at-r.before)
			window := text[lo:min(len(text), at+len(r.infix)+r.after)]
			loc := r.re.FindStringIndex(window)
			if loc == nil || lo+loc[0] > at || lo+loc[1] < at+len(r.infix) {
				continue
			}
			start, end := lo+loc[0], lo+loc[1]
			if !alnumBounded(text, start, end) {
				continue
			}
			found = append(found, secretSpan{start: start, end: end, typ: r.typ, value: text[start:end]})
			from = end
		}
	}
	return found
}

// findURLPasswords reports the password of each URL's user information:
// after "://", a user name, ':', the password and '@' before any '/'. A
// reference or placeholder (${DB_PASSWORD}, <password>, changeme) is not
// reported, as for credential assignments.
func findURLPasswords(text string, found []secretSpan) []secretSpan {
	for from := 0; ; {
		k := strings.Index(text[from:], "://")
		if k < 0 {
			return found
		}
		i := from + k + 3
		from = i
		// user
		j := i
		for j < len(text) && j-i < 256 && isUserinfoByte(text[j]) && text[j] != ':' {
			j++
		}
		if j == i || j >= len(text) || text[j] != ':' {
			continue
		}
		ps := j + 1
		pe := ps
		for pe < len(text) && pe-ps < 512 && isUserinfoByte(text[pe]) {
			pe++
		}
		if pe == ps || pe >= len(text) || text[pe] != '@' {
			continue
		}
		if v := text[ps:pe]; plausibleURLPassword(v) {
			found = append(found, secretSpan{start: ps, end: pe, typ: SecretURLPassword, value: v})
		}
		from = pe
	}
}

// isUserinfoByte is a byte a URL's user information may hold (RFC 3986
// unreserved, sub-delims, ':' and percent-encoding), minus '@' and '/'.
func isUserinfoByte(c byte) bool {
	return isAlnumByte(c) || strings.IndexByte("-._~!$&'()*+,;=:%", c) >= 0
}

func plausibleURLPassword(v string) bool {
	if strings.Contains(v, "${") || strings.Contains(v, "{{") || v[0] == '$' || v[0] == '<' || v[0] == '%' && len(v) > 1 && v[1] == '(' {
		return false
	}
	lower := strings.ToLower(v)
	for _, w := range []string{"password", "passwd", "changeme", "example", "placeholder", "secret", "xxx", "redacted"} {
		if strings.Contains(lower, w) {
			return false
		}
	}
	return len(v) >= 3 && strings.Count(v, v[:1]) != len(v)
}
