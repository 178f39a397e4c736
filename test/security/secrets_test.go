package security_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// plantedSecret is one record of planted_secrets.txt.
type plantedSecret struct{ typ, text string }

func readPlanted(t *testing.T) []plantedSecret {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "planted_secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []plantedSecret
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && len(recs) == 0:
		case strings.HasPrefix(line, "=== "):
			recs = append(recs, plantedSecret{typ: strings.TrimPrefix(line, "=== ")})
		case len(recs) > 0:
			r := &recs[len(recs)-1]
			if r.text != "" {
				r.text += "\n"
			}
			r.text += line
		}
	}
	if len(recs) < 40 {
		t.Fatalf("only %d planted secrets", len(recs))
	}
	return recs
}

// scanTypes runs doc_scan over the prefix and returns the types found per
// path, in order.
func scanTypes(t *testing.T, call func(map[string]any) (map[string]any, error), prefix string) map[string][]string {
	t.Helper()
	res, err := call(map[string]any{"path_prefix": prefix})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res["truncated"].([]any); len(tr) != 0 {
		t.Fatalf("scan truncated: %v", tr)
	}
	out := map[string][]string{}
	for _, f := range res["findings"].([]any) {
		m := f.(map[string]any)
		out[m["path"].(string)] = append(out[m["path"].(string)], m["type"].(string))
	}
	return out
}

// TestPlantedSecretsSameCountInOneFile plants every sample in its own
// document and all of them in one document: each is found once with its
// type, either way. A private key with no END line must not hide what
// follows it.
func TestPlantedSecretsSameCountInOneFile(t *testing.T) {
	rt, _ := app(t)
	recs := readPlanted(t)
	var all []string
	for i, r := range recs {
		all = append(all, r.text)
		name := filepath.Join(rt.Settings.DocsRoot, "separate", "s"+strconv.Itoa(100+i)+".txt")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(r.text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(rt.Settings.DocsRoot, "together"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rt.Settings.DocsRoot, "together", "all.txt"), []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(args map[string]any) (map[string]any, error) {
		res, err := rt.App.Call(t.Context(), ports.Operator(), "doc_scan", args)
		if err != nil {
			return nil, err
		}
		return res.Structured(), nil
	}

	separate := scanTypes(t, call, "separate/")
	total := 0
	for i, r := range recs {
		got := separate["separate/s"+strconv.Itoa(100+i)+".txt"]
		total += len(got)
		if len(got) != 1 || got[0] != r.typ {
			t.Errorf("record %d alone: found %v, want [%s] in %q", i, got, r.typ, r.text)
		}
	}
	together := scanTypes(t, call, "together/")["together/all.txt"]
	var want []string
	for _, r := range recs {
		want = append(want, r.typ)
	}
	if strings.Join(together, " ") != strings.Join(want, " ") {
		t.Errorf("in one file: %d findings %v\nwant %d %v", len(together), together, len(want), want)
	}
	t.Logf("%d planted: %d found in separate files, %d in one file", len(recs), total, len(together))
}
