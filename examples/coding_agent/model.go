package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
)

// fakeModel is a loopback stand-in for an OpenAI-compatible chat
// completions endpoint (what Ollama, vLLM or LM Studio serve), so the
// assist tools run with no model and no key. It answers by rule, not by
// understanding: it names the function definitions it was shown, counts a
// diff's lines, and ranks passages by how many of the query's words each
// contains. The server reaches it only because the walkthrough lists its
// exact host:port in ARROWHEAD_LLM_INTERNAL_HOSTS.
func fakeModel() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "not a chat completion", http.StatusBadRequest)
			return
		}
		prompt := req.Messages[len(req.Messages)-1].Content
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer(prompt)}}},
		})
	}))
}

var (
	definitionRE = regexp.MustCompile(`(?m)^\s*(?:def|func|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	passageRE    = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)
)

// answer is the fake model's reply to one prompt.
func answer(prompt string) string {
	switch {
	case strings.Contains(prompt, "Passages:"):
		return rank(prompt)
	case strings.HasPrefix(prompt, "File "):
		var names []string
		for _, m := range definitionRE.FindAllStringSubmatch(prompt, -1) {
			names = append(names, "`"+m[1]+"`")
		}
		return fmt.Sprintf("This code defines %s. (A fake model's answer: it only lists the definitions it was shown.)", strings.Join(names, ", "))
	default:
		added, removed := 0, 0
		for _, line := range strings.Split(prompt, "\n") {
			switch {
			case strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++"):
				added++
			case strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---"):
				removed++
			}
		}
		return fmt.Sprintf("The diff adds %d line(s) and removes %d. (A fake model's answer: it only counts lines.)", added, removed)
	}
}

// rank orders the prompt's passages by how many of the query's words each
// contains, most first, answering as the rerank prompt asks: a JSON array
// of passage numbers.
func rank(prompt string) string {
	query, _, _ := strings.Cut(strings.TrimPrefix(prompt, "Query: "), "\n")
	words := strings.Fields(strings.ToLower(query))
	type passage struct{ index, score int }
	var passages []passage
	for _, m := range passageRE.FindAllStringSubmatch(prompt, -1) {
		var index int
		fmt.Sscan(m[1], &index)
		text, score := strings.ToLower(m[2]), 0
		for _, word := range words {
			if strings.Contains(text, word) {
				score++
			}
		}
		passages = append(passages, passage{index, score})
	}
	slices.SortStableFunc(passages, func(a, b passage) int { return b.score - a.score })
	order := make([]int, len(passages))
	for i, p := range passages {
		order[i] = p.index
	}
	out, _ := json.Marshal(order)
	return string(out)
}
