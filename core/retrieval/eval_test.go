package retrieval_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
	"github.com/arrowhead-go/arrowhead/ports"
)

// evalSet is testdata/pflag_eval.json.
type evalSet struct {
	Tree      string `json:"tree"`
	Questions []struct {
		Question string `json:"question"`
		Answers  []struct {
			Path, Parent, Name string
		} `json:"answers"`
	} `json:"questions"`
}

func loadEval(t testing.TB) (evalSet, string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/pflag_eval.json")
	if err != nil {
		t.Fatal(err)
	}
	var set evalSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), set.Tree)
	if _, err := os.Stat(root); err != nil {
		// The module is in go.sum (viper needs it): go mod download brings it.
		if err := exec.Command("go", "mod", "download", strings.Replace(set.Tree, "@", "@", 1)).Run(); err != nil {
			t.Fatalf("the evaluation tree %s is not in the module cache: %v", set.Tree, err)
		}
	}
	return set, root
}

// TestEvalRanking ranks the evaluation questions over pflag's own tree
// and reports where each answer lands; the recall floor at the pack's
// budget is asserted through pack_context itself (contexttools).
func TestEvalRanking(t *testing.T) {
	set, root := loadEval(t)
	var entries []*retrieval.Entry
	files, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || st.IsDir() {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.Base(f)
		entries = append(entries, retrieval.Analyze("repo_file", ports.FileInfo{Path: rel, Size: st.Size(), ModTime: st.ModTime()}, data, codeintel.NativeSymbols(rel, data)))
	}
	k := retrieval.NewCorpus(entries)
	found, total := 0, 0
	for _, q := range set.Questions {
		hits := k.Rank(q.Question, 50)
		for _, a := range q.Answers {
			total++
			rank, budget := -1, 0
			for i, h := range hits {
				budget += (h.Chunk.End - h.Chunk.Start + 1) * 12 // a rough 12 tokens a line
				if h.Entry.Path == a.Path && h.Chunk.Name == a.Name && h.Chunk.Parent == a.Parent {
					rank = i + 1
					break
				}
			}
			if rank > 0 && budget <= 8000 {
				found++
			}
			t.Logf("%-90q %s.%s rank %d (~%d tokens in)", q.Question, a.Parent, a.Name, rank, budget)
		}
	}
	t.Logf("answers within ~8,000 tokens: %d of %d", found, total)
}
