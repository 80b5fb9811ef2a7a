package loadgen

import (
	"strings"
	"testing"
)

func TestMaskURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"user and password", "http://user:secret@host/", "http://user:***@host/"},
		{"port, path and query", "http://u:p@127.0.0.1:8080/a?b=c@d", "http://u:***@127.0.0.1:8080/a?b=c@d"},
		{"token without password", "https://TOKEN@example.com/", "https://***@example.com/"},
		{"empty password", "http://u:@h/", "http://u:***@h/"},
		{"'@' in the password", "http://u:p@ss@h/x", "http://u:***@h/x"},
		{"no path", "http://u:p@h", "http://u:***@h"},
		{"invalid URL with a space", "http://u:sec ret@h/", "http://u:***@h/"},
		{"no user information", "http://h/a@b", "http://h/a@b"},
		{"no scheme", "u:p@h", "u:p@h"},
		{"already masked", "http://u:***@h/", "http://u:***@h/"},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaskCredentials(tt.in); got != tt.want {
				t.Errorf("MaskCredentials(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
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
