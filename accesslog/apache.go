package accesslog

import (
	"fmt"
	"strings"
)

// Apache's usual LogFormat strings, as mod_log_config reads them (the \"
// of a LogFormat directive already turned into ").
const (
	ApacheCommon   = `%h %l %u %t "%r" %>s %b`
	ApacheCombined = `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`
	// ApacheCombinedD is ApacheCombined with the time taken to serve the
	// request in microseconds (%D), the format NoRequestTimeHint proposes.
	ApacheCombinedD = ApacheCombined + ` %D`
)

var apacheNames = map[string]string{
	ApacheCommon:         "apache common",
	ApacheCombined:       "apache combined",
	ApacheCombinedD:      "apache combined_d",
	ApacheCommon + ` %D`: "apache common_d",
}

// NewApache compiles an Apache httpd LogFormat string into a Parser. The
// format may be written as in the configuration file (`\"%r\"`) or with
// the escapes already removed (`"%r"`). Directives that fill Record fields:
// %t (and %{sec}t, %{msec}t, %{usec}t, %{%d/%b/%Y:%H:%M:%S %z}t), %r, %m,
// %U with %q, %s and %>s, %b (where "-" is 0), %B, %O (when there is no
// %b or %B), %D, %T, %{ms}T, %{us}T and %{s}T. Every other directive is
// consumed and ignored. The parser is named "apache combined", "apache
// common", "apache combined_d" or "apache common_d" for those formats and
// "apache custom" otherwise.
func NewApache(format string) (Parser, error) {
	f := unescapeApache(format)
	items, err := compileApache(f)
	if err != nil {
		return nil, fmt.Errorf("accesslog: Apache LogFormat %q: %w", format, err)
	}
	name, ok := apacheNames[f]
	if !ok {
		name = "apache custom"
	}
	return finish(name, items, false), nil
}

// unescapeApache removes the escapes of a LogFormat string as
// mod_log_config does: \n, \t, and a backslash before any other character
// stands for that character.
func unescapeApache(f string) string {
	if !strings.Contains(f, `\`) {
		return f
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '\\' && i+1 < len(f) {
			i++
			switch f[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			default:
				c = f[i]
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func compileApache(f string) ([]item, error) {
	if strings.ContainsAny(f, "\n\r") {
		return nil, fmt.Errorf("the format contains a line break; only one-line records can be read")
	}
	var items []item
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			items = append(items, item{role: rLit, lit: lit})
			lit = nil
		}
	}
	vars := 0
	for i := 0; i < len(f); {
		if f[i] != '%' {
			lit = append(lit, f[i])
			i++
			continue
		}
		start := i
		i++
		if i < len(f) && f[i] == '%' {
			lit = append(lit, '%')
			i++
			continue
		}
		// Modifiers: < or > (original or final request), a status
		// condition ("400,501" or "!200,304"), then an optional {argument}.
		for i < len(f) && strings.IndexByte("<>!,0123456789", f[i]) >= 0 {
			i++
		}
		arg := ""
		if i < len(f) && f[i] == '{' {
			e := strings.IndexByte(f[i:], '}')
			if e < 0 {
				return nil, fmt.Errorf("missing '}' after %q at offset %d", f[start:], start)
			}
			arg = f[i+1 : i+e]
			i += e + 1
		}
		if i >= len(f) {
			return nil, fmt.Errorf("%q at offset %d ends without a directive letter", f[start:], start)
		}
		d := f[i]
		i++
		if d == '^' { // %^ti, %^to: trailers
			if i+1 < len(f) && f[i] == 't' && (f[i+1] == 'i' || f[i+1] == 'o') {
				i += 2
				flush()
				items = append(items, item{role: rSkip})
				vars++
				continue
			}
			return nil, fmt.Errorf("unknown directive %q at offset %d", f[start:min(i+2, len(f))], start)
		}
		it, ok := apacheItem(d, arg)
		if !ok {
			return nil, fmt.Errorf("unknown directive %q at offset %d", f[start:i], start)
		}
		flush()
		items = append(items, it)
		vars++
	}
	flush()
	if vars == 0 {
		return nil, fmt.Errorf("the format has no directives")
	}
	return mergePathArgs(items, "U", "q", ""), nil
}

// apacheItem is the item for directive letter d with argument arg.
func apacheItem(d byte, arg string) (item, bool) {
	it := item{role: rSkip}
	switch d {
	case 't':
		switch strings.TrimPrefix(strings.TrimPrefix(arg, "begin:"), "end:") {
		case "":
			it.role, it.shape = rTimeBracket, sBracket
		case "sec":
			it.role = rEpoch
		case "msec":
			it.role = rEpochMs
		case "usec":
			it.role = rEpochUs
		case "%d/%b/%Y:%H:%M:%S %z":
			it.role, it.shape = rTimeLocal, sLocal
		}
	case 'h', 'a':
		it.role = rClient
	case 'i':
		if strings.EqualFold(arg, "User-Agent") {
			it.role = rAgent
		}
	case 'r':
		it.role = rRequest
	case 'm':
		it.role = rMethod
	case 'U':
		it.lit = []byte("U")
	case 'q':
		it.lit = []byte("q")
	case 's':
		it.role = rStatus
	case 'b':
		it.role = rBytesCLF
	case 'B':
		it.role = rBytes
	case 'O':
		it.role, it.weak = rBytes, true
	case 'I':
		it.role = rReqLength
	case 'D':
		it.role = rMicros
	case 'T':
		switch arg {
		case "ms":
			it.role = rMillis
		case "us":
			it.role = rMicros
		case "", "s":
			it.role = rSecondsInt
		default:
			return it, false
		}
	case 'A', 'C', 'e', 'f', 'H', 'k', 'l', 'L', 'n', 'o', 'p', 'P', 'R', 'u', 'v', 'V', 'X', 'S':
	default:
		return it, false
	}
	return it, true
}
