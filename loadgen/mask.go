package loadgen

import (
	"regexp"
	"strings"
)

// MaskURL is the one way a URL the user gave is shown in a message or a
// report: raw, taken as one URL (valid or not, absolute or a request
// target such as "/x?a=b"), with what may be secret masked. The password
// of the user information: "http://user:secret@host/" becomes
// "http://user:***@host/"; a user information without a password may be
// a token ("https://TOKEN@host/"), so it is masked whole:
// "https://***@host/". The authority ends at the first '/', '?' or '#'
// after "://", and the user information at its last '@', as net/url
// reads it, so a password with an unescaped '@' is masked entirely. And
// every value of the query, which may be a token or a signature:
// "/x?token=abc&page=2" becomes "/x?token=***&page=***" (a part without
// '=' is masked whole; the names stay, the fragment is left as it is).
// A string with neither comes back unchanged; masking twice changes
// nothing more.
func MaskURL(raw string) string {
	return maskQuery(MaskUserinfo(raw))
}

// MaskUserinfo masks only the user information of raw, as MaskURL does.
// It is for a scenario's step names made from its URL templates, whose
// query is the file's own text ("?page={{rand 1 5}}", not a secret the
// user typed), and which must stay as distinct as the URLs are.
func MaskUserinfo(raw string) string {
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

// maskQuery masks the value of every part of raw's query (from the
// first '?' to the '#' of a fragment).
func maskQuery(raw string) string {
	q := strings.IndexByte(raw, '?')
	if q < 0 {
		return raw
	}
	query, frag := raw[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		switch name, _, ok := strings.Cut(p, "="); {
		case ok:
			parts[i] = name + "=***"
		case p != "":
			parts[i] = "***"
		}
	}
	return raw[:q+1] + strings.Join(parts, "&") + frag
}

// urlRE matches every URL with a scheme in free text: it ends at
// whitespace, a quote or an angle bracket, which close it in a message
// (Get "http://h/?a=b": EOF).
var urlRE = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.\\-]*://[^\\s\"'`<>]*")

// MaskCredentials masks every URL with a scheme in s (a message, a
// label) as MaskURL does, leaving the rest untouched.
func MaskCredentials(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlRE.ReplaceAllStringFunc(s, MaskURL)
}
