package security

import (
	"strings"
	"testing"
)

func TestURLAllowlistMatch(t *testing.T) {
	l, err := ParseURLAllowlist([]string{
		"https://hooks.example.com/services/",
		" https://Alerts.Example.org ",
		"http://10.0.0.5:8080/notify",
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url  string
		want bool
	}{
		{"https://hooks.example.com/services", true},
		{"https://hooks.example.com/services/T000/B000/xyz", true},
		{"https://hooks.example.com/services?x=1", true},
		{"https://HOOKS.example.com./services/a", true},
		{"https://hooks.example.com:443/services/a", true},
		{"https://alerts.example.org/", true},
		{"https://alerts.example.org", true},
		{"https://alerts.example.org/any/path", true},
		{"http://10.0.0.5:8080/notify/x", true},

		// Scheme, host, port and path are compared as components.
		{"http://hooks.example.com/services/a", false},
		{"https://hooks.example.com:8443/services/a", false},
		{"https://hooks.example.com/servicesevil", false},
		{"https://hooks.example.com/", false},
		{"https://hooks.example.com.evil.test/services/a", false},
		{"https://evil.test/hooks.example.com/services/a", false},
		{"https://hooks.example.com@evil.test/services/a", false},
		{"https://evil.test@hooks.example.com/services/a", false},
		{"https://user:pw@hooks.example.com/services/a", false},
		{"https://xhooks.example.com/services/a", false},
		{"http://10.0.0.5/notify", false},
		{"http://10.0.0.5:80800/notify", false},
		{"http://10.0.0.5:08080/notify", false},
		// Dot segments and encoded separators are refused outright.
		{"https://hooks.example.com/services/../admin", false},
		{"https://hooks.example.com/services/./a", false},
		{"https://hooks.example.com/services/%2e%2e/admin", false},
		{"https://hooks.example.com/services%2f..%2fadmin", false},
		{"https://hooks.example.com/services/a%2fb", false},
		{"https://hooks.example.com/services/a%5cb", false},
		{"https://hooks.example.com/services\\a", false},
		{"https://hooks.example.com/services//a", false},
		{"https://hooks.example.com/services/%zz", false},
		{"https://hooks.example.com/services/a#frag", false},
		{"https://hooks.example.com/services/\r\nX: y", false},
		{"ftp://hooks.example.com/services/a", false},
		{"//hooks.example.com/services/a", false},
		{"https://hooks．example.com/services/a", false},
		{"", false},
	}
	for _, c := range cases {
		if got := l.Match(c.url); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

func TestURLAllowlistZeroValueAdmitsNothing(t *testing.T) {
	var l URLAllowlist
	if l.Match("https://example.com/") {
		t.Fatal("the zero allowlist matched")
	}
}

func TestParseURLAllowlistRefusesMalformedEntries(t *testing.T) {
	bad := []string{
		"not a url",
		"ftp://example.com/",
		"https://",
		"https://user@example.com/",
		"https://example.com/?token=1",
		"https://example.com/#x",
		"https://example.com:0/",
		"https://example.com:65536/",
		"https://example.com/a/../b",
		"https://example.com/a%2fb",
		"https://example.com/a\\b",
		"/relative/path",
	}
	for _, e := range bad {
		_, err := ParseURLAllowlist([]string{"https://ok.example/", e})
		if err == nil {
			t.Errorf("entry %q was accepted", e)
			continue
		}
		if !strings.Contains(err.Error(), "entry 2") || strings.Contains(err.Error(), e) && e != "" {
			t.Errorf("error %q should name the position and never the entry", err)
		}
	}
}
