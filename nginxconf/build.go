package nginxconf

import (
	"strconv"
	"strings"
)

// Build is what `nginx -V` says of a binary: its version and the
// arguments it was configured with, which set some of its defaults (the
// configuration's path, the access log's, the temporary directories).
type Build struct {
	// Version is "1.22.1"; "" when unknown (no binary, or output not
	// understood), which counts as recent.
	Version string
	// ConfigureArgs are the configure arguments, quotes removed.
	ConfigureArgs []string
}

// ParseBuild reads the version and the configure arguments from the
// output of nginx -V; lines it does not know are left out.
func ParseBuild(out string) Build {
	var b Build
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "nginx version: "); ok {
			_, b.Version, _ = strings.Cut(strings.TrimSpace(v), "/")
		}
		if a, ok := strings.CutPrefix(line, "configure arguments:"); ok {
			b.ConfigureArgs = shellWords(a)
		}
	}
	return b
}

// shellWords splits on blanks outside single or double quotes, removing
// the quotes, as the shell that ran configure did.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case isSpace(ch):
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// Arg is the value of the configure argument --name=value, or def.
func (b Build) Arg(name, def string) string {
	for _, a := range b.ConfigureArgs {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return def
}

// AtLeast says whether the version is want or later (dotted parts
// compared as numbers); an unknown or unreadable version counts as
// recent.
func (b Build) AtLeast(want ...int) bool {
	if b.Version == "" {
		return true
	}
	parts := strings.Split(b.Version, ".")
	for i, w := range want {
		if i >= len(parts) {
			return false
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return true
		}
		if n != w {
			return n > w
		}
	}
	return true
}
