package content

import "testing"

func TestSanitizeMarkdownDefusesLinkify(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ftp URL", "see ftp://evil.example/x", `see ftp:\[//\]evil.example/x`},
		{"ftp autolink left as text", "<ftp://evil.example/x>", `ftp:\[//\]evil.example/x`},
		{"scheme-relative", "see //evil.example/x", `see \[//\]evil.example/x`},
		{"e-mail", "write to a@evil.example", `write to a\[@\]evil.example`},
		{"xmpp", "xmpp:user@evil.example", `xmpp:user\[@\]evil.example`},
		{"user info", "https://trusted.example@attacker.example/", `https://trusted.example\[@\]attacker.example/`},
		{"user info by reference", "https&#58;//t.example&#64;a.example/", `https&#58;//t.example\[@\]a.example/`},
		{"escaped at", `a\@evil.example`, `a\[@\]evil.example`},
		{"escaped slashes", `ftp:\/\/evil.example`, `ftp:\[//\]evil.example`},
		{"mention kept", "thanks @alice and @bob", "thanks @alice and @bob"},
		{"http kept", "see https://ok.example/a//b and http://ok.example/", "see https://ok.example/a//b and http://ok.example/"},
		{"path at kept", "https://ok.example/@user/post", "https://ok.example/@user/post"},
		{"path e-mail defanged", "https://ok.example/?e=a@b.example", `https://ok.example/?e=a\[@\]b.example`},
		{"kept link target untouched", "[x](https://ok.example/?e=a@b.example)", "[x](https://ok.example/?e=a@b.example)"},
		{"kept autolink untouched", "<https://ok.example/?e=a@b.example>", "<https://ok.example/?e=a@b.example>"},
		{"kept definition untouched", "[x]\n\n[x]: https://ok.example/?e=a@b.example", "[x]\n\n[x]: https://ok.example/?e=a@b.example"},
		{"comment slashes kept", "x = 1 // note", "x = 1 // note"},
		{"path slashes kept", "a//b ///x", "a//b ///x"},
		{"footnote stays text", "x[^1]\n\n[^1]: https://ok.example/", "x[^1]\n\n[^1]\\: https://ok.example/"},
		{"assembled autolink", "<<x>https://t.example@a.example/>", `&lt;https://t.example\[@\]a.example/>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SanitizeMarkdown([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Errorf("SanitizeMarkdown(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if again := defuseLinkify(got); again != got {
				t.Errorf("not a fixed point: %q -> %q", got, again)
			}
		})
	}
}
