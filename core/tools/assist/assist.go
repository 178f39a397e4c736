// Package assist is the model-backed assist family: code_explain,
// summarize_diff and rerank through the configured completion backend
// (ports.Completer). What reaches the model is bounded and sanitized first:
// code_explain reads only what code_read would serve the caller, a diff
// over ARROWHEAD_DIFF_MAX_BYTES never leaves the server, and every prompt
// fits ARROWHEAD_LLM_MAX_PROMPT_CHARS. What comes back is untrusted: prose
// is sanitized as Markdown and framed, and rerank returns only an ordering
// parsed defensively, never model text.
package assist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/tools/repo"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the assist family uses.
type Ports struct {
	// Completer is the model backend; nil with ARROWHEAD_LLM_PROVIDER=none,
	// which serves every assist tool as not configured.
	Completer ports.Completer `port:"optional"`
	// Repo is the source tree code_explain reads; nil serves code_explain
	// as not configured, like the repo tools.
	Repo ports.RepoStore `port:"optional"`
	// Authorizer is the per-resource gate code_read uses.
	Authorizer ports.Authorizer
	// Scanner redacts a model answer before it is sanitized as Markdown
	// (whose escaping would hide a URL's password from the redaction every
	// result passes after); nil leaves that to the later pass alone.
	Scanner *security.Scanner `port:"optional"`
}

const (
	notConfigured     = "No model backend is configured on this server (ARROWHEAD_LLM_PROVIDER=none)."
	repoNotConfigured = "The repository is not configured on this server (ARROWHEAD_REPO_ROOT names no directory)."
)

// Config is what the assist family reads from the settings.
type Config struct {
	// Provider is ARROWHEAD_LLM_PROVIDER; ProviderSampling has the
	// client's own model answer, through an input request.
	Provider string `setting:"ARROWHEAD_LLM_PROVIDER"`
	// MaxPromptChars is ARROWHEAD_LLM_MAX_PROMPT_CHARS, MaxTokens
	// ARROWHEAD_LLM_MAX_TOKENS.
	MaxPromptChars int `setting:"ARROWHEAD_LLM_MAX_PROMPT_CHARS"`
	MaxTokens      int `setting:"ARROWHEAD_LLM_MAX_TOKENS"`
	// DiffMaxBytes is the largest diff summarize_diff sends.
	DiffMaxBytes int `setting:"ARROWHEAD_DIFF_MAX_BYTES"`
	// ContentMaxBytes caps a model answer.
	ContentMaxBytes int `setting:"ARROWHEAD_CONTENT_MAX_BYTES"`
	// RedactReads is ARROWHEAD_REDACT_READS: whether a model answer is
	// redacted before it is sanitized as Markdown.
	RedactReads bool `setting:"ARROWHEAD_REDACT_READS"`
	// Code is what code_explain reads code under: code_read's caps.
	Code repo.Config
}

// Family is the assist family. Without a model backend (neither a
// completer nor sampling) every tool refuses as not configured.
var Family = core.Family[Config, Ports, *model]{
	ID:    catalog.FamilyAssist,
	Serve: newModel,
	Tools: []core.FamilyTool[*model]{
		core.Tool(codeExplain, (*model).explain).Needs((*model).ready, notConfigured),
		core.Tool(summarizeDiff, (*model).summarize).Needs((*model).ready, notConfigured),
		core.Tool(rerank, (*model).rerank).Needs((*model).ready, notConfigured),
	},
}

// ProviderSampling is the ARROWHEAD_LLM_PROVIDER value that asks the
// connected client's own model (MCP sampling) instead of an HTTP backend.
const ProviderSampling = "sampling"

// SampleInputID names the sampling input request; sampleTTL bounds how long
// it stays answerable.
const (
	SampleInputID = "model"
	sampleTTL     = 10 * time.Minute
)

// model is the completion backend as the tools use it: bounded prompts,
// bounded answers, caller-safe failures. In sampling mode the backend is
// the client's own model, asked through an input request.
type model struct {
	config    Config
	completer ports.Completer
	seal      catalog.InputSeal
	scanner   *security.Scanner
	// code reads what code_explain sends; nil without a repository.
	code *repo.Reader
}

func newModel(c Config, p Ports) *model {
	m := &model{config: c, completer: p.Completer, scanner: p.Scanner}
	if c.Provider == ProviderSampling {
		m.completer, m.seal = nil, catalog.NewInputSeal(sampleTTL)
	}
	if p.Repo != nil {
		r := repo.NewReader(c.Code, p.Repo, p.Authorizer)
		m.code = &r
	}
	return m
}

// ready reports whether a model answers: a completer, or the client's.
func (m *model) ready() bool { return m.completer != nil || m.config.Provider == ProviderSampling }

// ask returns the model's answer to one bounded request, or, in sampling
// mode, the input request that asks the client for it. A sampled answer is
// accepted only with the state sealed for this caller, tool and exact
// prompt. The backend's own error never reaches the caller; its fixed text
// is kept as the operators' cause.
func (m *model) ask(ctx context.Context, call catalog.Call, tool, system, prompt string) (string, *catalog.InputRequest, error) {
	if len([]rune(system))+len([]rune(prompt)) > m.config.MaxPromptChars {
		return "", nil, catalog.Invalid("The request exceeds %d characters (ARROWHEAD_LLM_MAX_PROMPT_CHARS); send less.", m.config.MaxPromptChars)
	}
	if m.config.Provider != ProviderSampling {
		out, err := m.completer.Complete(ctx, ports.CompletionRequest{System: system, Prompt: prompt, MaxTokens: m.config.MaxTokens})
		if te, ok := catalog.AsToolError(err); ok {
			// A deliberate refusal on the way out (a tripped canary)
			// passes as it is.
			return "", nil, te
		}
		if err != nil {
			return "", nil, catalog.Failed("The model backend did not answer.").WithCause(err)
		}
		return out, nil, nil
	}
	sum := sha256.Sum256([]byte(system + "\x00" + prompt))
	parts := []string{"assist-sample", call.Principal.Key(), tool, hex.EncodeToString(sum[:])}
	if ans, ok := call.Inputs[SampleInputID]; ok {
		if !m.seal.Open(time.Now(), call.InputState, parts...) {
			return "", nil, catalog.Invalid("The model answer does not match this request or has expired.")
		}
		if strings.TrimSpace(ans.Text) == "" {
			return "", nil, catalog.Failed("The client's model returned no text.")
		}
		return ans.Text, nil, nil
	}
	if !call.Caps.Sampling {
		return "", nil, catalog.Unavailable("This server asks the client's own model (ARROWHEAD_LLM_PROVIDER=sampling), and this client does not offer sampling.")
	}
	return "", &catalog.InputRequest{ID: SampleInputID, State: m.seal.Seal(time.Now(), parts...),
		Sample: &catalog.SampleRequest{System: system, Prompt: prompt, MaxTokens: m.config.MaxTokens}}, nil
}

// prose sanitizes a model answer as Markdown (no HTML, no images, http(s)
// links only), caps it and frames it as untrusted data.
func (m *model) prose(identifier, answer string) (content.Framed, bool, error) {
	src := answer
	if m.scanner != nil && m.config.RedactReads {
		src = m.scanner.RedactLines(answer)
	}
	text, err := content.SanitizeMarkdown([]byte(src))
	if err != nil {
		return content.Framed{}, false, catalog.Failed("The model answer could not be sanitized.")
	}
	text, truncated := content.Truncate(text, m.config.ContentMaxBytes)
	return content.Frame(text, content.NewSource("model", identifier, "markdown", []byte(answer))), truncated, nil
}
