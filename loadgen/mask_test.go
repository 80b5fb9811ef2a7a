package loadgen

import (
	"strings"
	"testing"
)

func TestMaskURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"user and password", "http://user:secret@host/", "http://user:***@host/"},
		{"port, path and query", "http://u:p@127.0.0.1:8080/a?b=c@d", "http://u:***@127.0.0.1:8080/a?b=***"},
		{"token without password", "https://TOKEN@example.com/", "https://***@example.com/"},
		{"empty password", "http://u:@h/", "http://u:***@h/"},
		{"'@' in the password", "http://u:p@ss@h/x", "http://u:***@h/x"},
		{"no path", "http://u:p@h", "http://u:***@h"},
		{"invalid URL with a space", "http://u:sec ret@h/", "http://u:***@h/"},
		{"no user information", "http://h/a@b", "http://h/a@b"},
		{"no scheme", "u:p@h", "u:p@h"},
		{"already masked", "http://u:***@h/", "http://u:***@h/"},
		{"token in the query", "http://h/x?token=SECRET", "http://h/x?token=***"},
		{"every query value", "http://u:p@h:8080/x?a=1&b=&c&&d=e=f", "http://u:***@h:8080/x?a=***&b=***&***&&d=***"},
		{"fragment left as it is", "http://h/x?sig=abc#part", "http://h/x?sig=***#part"},
		{"request target", "/x?token=SECRET&page=2", "/x?token=***&page=***"},
		{"'@' in a query value", "http://h/a?b=c@d", "http://h/a?b=***"},
		{"IPv6 host", "http://[::1]:8080/x?k=v", "http://[::1]:8080/x?k=***"},
		{"query already masked", "http://h/x?token=***", "http://h/x?token=***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaskURL(tt.in); got != tt.want {
				t.Errorf("MaskURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMaskCredentials(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"quoted in a message", `URL "http://user:secret@h/": bad`, `URL "http://user:***@h/": bad`},
		{"two URLs", "from http://a:1@x/ to https://b:2@y", "from http://a:***@x/ to https://b:***@y"},
		{"token", "clone https://ghp_abc@github.com/o/r", "clone https://***@github.com/o/r"},
		{"an address, not a URL", "mail me at a@b.c", "mail me at a@b.c"},
		{"nothing to mask", "plain text", "plain text"},
		{"a Go HTTP error", `Get "http://h/x?token=SECRET&a=1": dial tcp: connection refused`, `Get "http://h/x?token=***&a=***": dial tcp: connection refused`},
		{"a token and a password", "from http://a:1@x/?k=v to y", "from http://a:***@x/?k=*** to y"},
		{"a question mark outside a URL", "why? http://h/ ok?", "why? http://h/ ok?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaskCredentials(tt.in); got != tt.want {
				t.Errorf("MaskCredentials(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestMaskUserinfo: a scenario's step names keep their query.
func TestMaskUserinfo(t *testing.T) {
	if got := MaskUserinfo("http://u:p@h/x?page={{rand 1 5}}"); got != "http://u:***@h/x?page={{rand 1 5}}" {
		t.Errorf("MaskUserinfo = %q", got)
	}
}

// FuzzMaskURL: masking never panics, masking twice changes nothing
// more, and what follows the first '?' up to a '#' holds no value: each
// part is empty, "***" or a name and "=***".
func FuzzMaskURL(f *testing.F) {
	for _, s := range []string{"http://user:secret@host/", "http://h/x?token=SECRET&page=2#f", "/x?a", "u:p@h", "http://[::1]/?=", "?&&=&", "http://a@b@c/?d=e?f=g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := MaskURL(s)
		if again := MaskURL(m); again != m {
			t.Fatalf("MaskURL(%q) = %q, again %q", s, m, again)
		}
		if q := strings.IndexByte(m, '?'); q >= 0 {
			query, _, _ := strings.Cut(m[q+1:], "#")
			for _, p := range strings.Split(query, "&") {
				if name, v, ok := strings.Cut(p, "="); p != "" && p != "***" && (!ok || v != "***" || strings.Contains(name, "=")) {
					t.Fatalf("MaskURL(%q) = %q: query part %q", s, m, p)
				}
			}
		}
		c := MaskCredentials(s)
		if again := MaskCredentials(c); again != c {
			t.Fatalf("MaskCredentials(%q) = %q, again %q", s, c, again)
		}
	})
}

// TestURLPlanMasksPasswords: no refusal of a URL shows its password.
func TestURLPlanMasksPasswords(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"user info", "http://user:secret@127.0.0.1/", "user info in URLs is not supported"},
		{"https", "https://user:secret@example.com/", "https is not supported"},
		{"other scheme", "ftp://user:secret@example.com/", "want an http:// URL"},
		{"no host", "http://user:secret@/x", "no host"},
		{"unparsable port", "http://user:secret@h:x/", "invalid port"},
		{"unparsable user info", "http://user:sec ret@h/", "invalid userinfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := URLWorkload(tt.url, URLOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "user:***@") || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sec ret") {
				t.Fatalf("error %v, want one containing %q and user:***@, without the password", err, tt.want)
			}
		})
	}
}
