package loadgen

import (
	"regexp"
	"strings"
)

// MaskURL masks the password in raw, taken as one URL (valid or not):
// "http://user:secret@host/" becomes "http://user:***@host/". A user
// information without a password may be a token ("https://TOKEN@host/"),
// so it is masked whole: "https://***@host/". The authority ends at the
// first '/', '?' or '#' after "://", and the user information at its last
// '@', as net/url reads it, so a password with an unescaped '@' is masked
// entirely. A string without "://" or without user information comes back
// unchanged.
func MaskURL(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	auth := rest
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		auth = rest[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return raw
	}
	return raw[:i+3] + maskUserinfo(auth[:at]) + rest[at:]
}

func maskUserinfo(ui string) string {
	if user, _, ok := strings.Cut(ui, ":"); ok {
		return user + ":***"
	}
	return "***"
}

// userinfoRE matches the user information of every URL with a scheme in
// free text, up to the authority's last '@' (whitespace ends a URL).
var userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]*)@`)

// MaskCredentials masks the user information of every URL in s (a message,
// a label) as MaskURL does, leaving the rest untouched.
func MaskCredentials(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfoRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := userinfoRE.FindStringSubmatch(m) // idempotent: "u:***" stays
		return sm[1] + maskUserinfo(sm[2]) + "@"
	})
}
