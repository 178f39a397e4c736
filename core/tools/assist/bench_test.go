package assist_test

import (
	"strings"
	"testing"
)

// BenchmarkAssistOverhead is what the assist tools add over the model's own
// latency: the whole App call (guard chain, validation, code_read's excerpt
// for code_explain, prompt building, Markdown sanitizing and framing of the
// answer, or rerank's parse) against a fake model that answers at once.
// Budget: under 2 ms per call.
func BenchmarkAssistOverhead(b *testing.B) {
	answer := strings.Repeat("The function adds two numbers and returns the sum. See [docs](https://example.com/a).\n", 20)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"code_explain", map[string]any{"path": "src/app.py"}},
		{"summarize_diff", map[string]any{"diff": strings.Repeat("+added line\n-removed line\n", 200)}},
		{"rerank", map[string]any{"query": "refund policy", "candidates": []any{"a refund", "shipping", "returns within thirty days", "warranty"}}},
	} {
		b.Run(tc.tool, func(b *testing.B) {
			m := &fakeModel{Answer: answer}
			if tc.tool == "rerank" {
				m.Answer = "[2, 0, 3, 1]"
			}
			app := newApp(b, m, nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := app.Call(b.Context(), alice, tc.tool, tc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
