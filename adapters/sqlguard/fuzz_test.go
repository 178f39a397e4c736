package sqlguard

import (
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// FuzzVet holds the vetter to its contract on arbitrary input:
//   - it never panics (the fuzz target calls vet, which has no recover);
//   - a refusal is a *ports.SQLRefusal with one of the fixed reasons;
//   - admitted output vets again to exactly itself (same SQL, parameters
//     and tables), binds every parameter it lists, and parses to the same
//     tree as the input.
//
// Run: go test -run '^$' -fuzz FuzzVet ./adapters/sqlguard/
func FuzzVet(f *testing.F) {
	for _, path := range []string{"testdata/allow.sql", "testdata/refuse.sql"} {
		for _, e := range loadCorpus(f, path) {
			f.Add(e.sql)
		}
	}
	f.Add("select 1 --x\r; drop table t")
	f.Add("select :a, :a::int, ':a', \":a\", a[:b], a[1 : 2]")
	v := New(Config{})
	f.Fuzz(func(t *testing.T, sql string) {
		got, err := v.vet(sql)
		if err != nil {
			r, ok := err.(*ports.SQLRefusal)
			if !ok {
				t.Fatalf("error is %T, want *ports.SQLRefusal", err)
			}
			checkCallerSafe(t, r)
			return
		}
		for i := range got.Params {
			if !containsPlaceholder(got.SQL, i+1) {
				t.Fatalf("parameter %d (%s) is not bound in %s", i+1, got.Params[i], got.SQL)
			}
		}
		checkRoundTrip(t, got)
		checkEquivalent(t, sql, got)
	})
}

// containsPlaceholder reports whether $k occurs as a whole placeholder.
func containsPlaceholder(sql string, k int) bool {
	p := "$" + strconv.Itoa(k)
	for i := 0; ; {
		j := strings.Index(sql[i:], p)
		if j < 0 {
			return false
		}
		end := i + j + len(p)
		if end == len(sql) || !isDigit(sql[end]) {
			return true
		}
		i = end
	}
}
