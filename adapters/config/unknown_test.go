package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestUnknownVariablesAreNamedWithTheClosestKnown(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, ".env")
	if err := os.WriteFile(envFile, []byte("ARROWHEAD_EXEC_ENABLD=true\nARROWHEAD_PORT=9001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := func() []string {
		return []string{"PATH", "ARROWHEAD_PROFIL", "ARROWHEAD_PROFILE", "ARROWHEAD_REDIS_URI", "ARROWHEAD_TEST_POSTGRES_DSN",
			"ARROWHEAD_CONFIG_FILE", "ARROWHEAD_REQUIRE_INTEGRATION", "ARROWHEAD_PROFIL", "ARROWHEAD_SAFE_FETCH_PER_MINUTE"}
	}
	got := UnknownWarnings(Options{EnvFile: envFile, Environ: environ})
	want := []string{
		"ARROWHEAD_EXEC_ENABLD is not a setting this server knows and is ignored; did you mean ARROWHEAD_EXEC_ENABLED?",
		"ARROWHEAD_PROFIL is not a setting this server knows and is ignored; did you mean ARROWHEAD_PROFILE?",
		"ARROWHEAD_REDIS_URI is not a setting this server knows and is ignored; did you mean ARROWHEAD_REDIS_URL?",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings\n%q\nwant\n%q", got, want)
	}
	if got := UnknownWarnings(Options{EnvFile: filepath.Join(dir, "none"), Environ: func() []string { return []string{"ARROWHEAD_PROFILE"} }}); len(got) != 0 {
		t.Fatalf("a known variable warned: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("%q %q: %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
