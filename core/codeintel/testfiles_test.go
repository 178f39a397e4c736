package codeintel

import "testing"

func TestIsTestFile(t *testing.T) {
	for p, want := range map[string]bool{
		"flag_test.go": true, "pkg/flag_test.go": true, "flag.go": false, "testing.go": false, "pkg/testing/x.go": false,
		"tests/test_app.py": true, "test_app.py": true, "app_test.py": true, "conftest.py": true, "app.py": false, "contest.py": false,
		"web/app.test.ts": true, "web/app.spec.js": true, "web/app.js": false, "src/__tests__/a.js": true,
		"internal/testdata/x.go": true, "spec/models/user_spec.rb": true, "latest/x.go": false, "attest.go": false,
	} {
		if got := IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}
