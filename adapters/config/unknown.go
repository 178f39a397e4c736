package config

import (
	"os"
	"slices"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// varPrefix is what every server variable starts with.
const varPrefix = "ARROWHEAD_"

// outsideTable are ARROWHEAD_* variables read by something other than the
// settings table: this adapter's own, and the test and load tooling's
// (ARROWHEAD_TEST_* as a whole).
var outsideTable = []string{ConfigFileVar, "ARROWHEAD_REQUIRE_INTEGRATION", "ARROWHEAD_LOAD_TOKEN"}

const testVarPrefix = "ARROWHEAD_TEST_"

// UnknownWarnings returns one line for each ARROWHEAD_* variable in the
// environment, the .env file or the configuration file that the settings
// table does not know, naming the closest variable it does: a misspelled
// ARROWHEAD_PROFIL otherwise passes silently and its default applies.
// The lines carry names, never values.
func UnknownWarnings(opts Options) []string {
	var names []string
	if opts.Environ != nil {
		names = opts.Environ()
	} else {
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
	}
	envFile := opts.EnvFile
	if envFile == "" {
		envFile = DefaultEnvFile
	}
	if v, err := readFile(envFile, "env", false); err == nil && v != nil {
		for _, k := range v.AllKeys() {
			names = append(names, strings.ToUpper(k))
		}
	}
	known := settings.Names()
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, varPrefix) || seen[n] || strings.HasPrefix(n, testVarPrefix) ||
			slices.Contains(outsideTable, n) || slices.Contains(known, n) {
			continue
		}
		seen[n] = true
		out = append(out, n+" is not a setting this server knows and is ignored; did you mean "+closest(n, known)+"?")
	}
	slices.Sort(out)
	return out
}

// closest is the known name nearest to name by edit distance (the first
// in order on a tie).
func closest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if d := editDistance(name, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by bytes
// (variable names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
