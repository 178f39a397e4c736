package ports

import "context"

// CompletionRequest is one model call: a fixed instruction and the
// caller-derived material it applies to. Both are already bounded by the
// tool; the completer bounds the answer.
type CompletionRequest struct {
	// System is the tool's own instruction.
	System string
	// Prompt is the material (code, a diff, passages), already sanitized.
	Prompt string
	// MaxTokens bounds the answer.
	MaxTokens int
}

// Completer asks a model backend for a completion. Implementations send
// only what the request carries, never echo the backend's error bodies or
// their credentials in an error, and are safe for concurrent use.
type Completer interface {
	Complete(ctx context.Context, req CompletionRequest) (string, error)
}
