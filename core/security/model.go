package security

import (
	"context"

	"github.com/arrowhead-go/arrowhead/ports"
)

// RedactCompleter returns a completer that passes every request through
// s before next sees it: the instruction and the material alike. It is the
// egress half of the one redaction rule, and no setting turns it off: what
// a model backend receives is outside this server's control for good.
func RedactCompleter(next ports.Completer, s *Scanner) ports.Completer {
	if next == nil || s == nil {
		panic("security: RedactCompleter needs a completer and a scanner")
	}
	return redactingCompleter{next: next, s: s}
}

type redactingCompleter struct {
	next ports.Completer
	s    *Scanner
}

func (c redactingCompleter) Complete(ctx context.Context, req ports.CompletionRequest) (string, error) {
	req.System, _ = c.s.Redact(req.System)
	req.Prompt, _ = c.s.Redact(req.Prompt)
	return c.next.Complete(ctx, req)
}

// RedactEmbedder returns an embedder that redacts every text before a
// remote embedding model sees it; the vectors of a redacted text are those
// of its placeholders, which is all a secret should contribute to recall.
func RedactEmbedder(next ports.Embedder, s *Scanner) ports.Embedder {
	if next == nil || s == nil {
		panic("security: RedactEmbedder needs an embedder and a scanner")
	}
	return redactingEmbedder{Embedder: next, s: s}
}

type redactingEmbedder struct {
	ports.Embedder
	s *Scanner
}

func (e redactingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i], _ = e.s.Redact(t)
	}
	return e.Embedder.Embed(ctx, out)
}
