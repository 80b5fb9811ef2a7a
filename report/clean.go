package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Strings in a report come from logs and servers: query samples and
// fingerprints, databases, users, hosts, URL paths, methods, error
// messages. Printed raw, a byte such as ESC would let whoever wrote the log
// drive the reader's terminal (clear it, retitle it, hide lines behind a
// carriage return, plant a hyperlink). The text, Markdown and CSV
// renderers therefore escape every string argument at the one point where
// they print it:
//
//   - errWriter.printf and fprintf (every text and Markdown line,
//     sectionWriter's tables included, each text row measured cleaned)
//     pass each string-like argument through Clean, and a block through
//     CleanBlock; only the constant format string, which carries the
//     layout (newlines, table pipes), is written as is;
//   - csvWriter cleans every field before encoding/csv quotes it;
//   - planWrap cleans the prose it wraps, and indexesSQL its header
//     comments;
//   - the demo loop's Markdown cleans each string as it escapes it
//     (mdEscape, mdCodeSpan), its HTML goes through the page skeleton,
//     and its table is sectionWriter's.
//
// Multi-line text shown as a block (a digest's query sample, a note of the
// HTTP profile in text) goes through CleanBlock instead, which keeps its
// newlines and tabs: in text each of its lines is indented, and in
// Markdown it sits in a fenced code block, so it cannot pass for a line of
// the report.
//
// Markdown escaping (mdEscape, the one Markdown escaper, in escape.go)
// runs on the raw string, and the print cleans its result. As mdEscape doubles backslashes, the Markdown
// as rendered reads exactly as Clean wrote the raw string (a property
// FuzzClean checks). Clean is not idempotent (it escapes the backslash of
// a "\x" it finds), so a string must never be cleaned twice: code outside
// these sinks never calls it.

// hexDigits are the digits of \xNN escapes: always lower case.
const hexDigits = "0123456789abcdef"

// Clean returns s fit for one line of a terminal, a Markdown table cell or
// a CSV field. It is the identity on ordinary text; otherwise each byte of
// the following is written as a four-character \xNN escape (lower-case
// hex), so the reader sees exactly which bytes the log held:
//
//   - C0 controls 0x00-0x1f, tab, newline and carriage return included;
//   - DEL 0x7f;
//   - C1 controls U+0080-U+009F: both bytes of their UTF-8 form, so
//     U+009B (CSI) is \xc2\x9b;
//   - every byte that is not part of valid UTF-8 (a lone 0x9b is \x9b);
//   - Unicode bidirectional controls (U+061C, U+200E, U+200F,
//     U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators
//     U+2028 and U+2029, which can reorder or break what is displayed:
//     their UTF-8 bytes, so U+202E is \xe2\x80\xae.
//
// A backslash stays a backslash, except one followed by "x", which is
// written as \x5c. The rule to read the output back is therefore: \x and
// two hex digits is always one escaped byte, and any other backslash is
// itself. Decoding that way gives back the exact input bytes.
//
// The rule holds per cleaned string: the renderers clean each string
// whole, never pieces that are later joined.
func Clean(s string) string { return clean(s, false) }

// CleanBlock is Clean for multi-line text shown as a block (a query
// sample, a multi-line note): newline and tab are kept, as layout of the
// text, and everything else Clean escapes, carriage return included, is
// escaped the same way.
func CleanBlock(s string) string { return clean(s, true) }

// clean implements Clean and CleanBlock, copying s only when something
// must be escaped.
func clean(s string, keepLayout bool) string {
	var b *strings.Builder
	start := 0 // s[start:i] is still to copy
	escape := func(i, n int) {
		if b == nil {
			b = &strings.Builder{}
			b.Grow(len(s) + 4*n + 16)
		}
		b.WriteString(s[start:i])
		for _, c := range []byte(s[i : i+n]) {
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		start = i + n
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' && i+1 < len(s) && s[i+1] == 'x',
				c == 0x7f,
				c < 0x20 && !(keepLayout && (c == '\n' || c == '\t')):
				escape(i, 1)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			escape(i, n)
		}
		i += n
	}
	if b == nil {
		return s
	}
	b.WriteString(s[start:])
	return b.String()
}

// unsafeRune reports the non-ASCII runes Clean escapes: C1 controls,
// bidirectional controls and the line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// block is multi-line text for a renderer's printf: CleanBlock'ed, with
// indent written after each of its newlines so every line stays inside
// the block (the sample's indentation in text, "#   " under a note).
type block struct {
	text, indent string
}

// String is the cleaned block, so even a block printed by plain fmt is
// safe.
func (bl block) String() string {
	s := CleanBlock(bl.text)
	if bl.indent != "" {
		s = strings.ReplaceAll(s, "\n", "\n"+bl.indent)
	}
	return s
}

// cleanArgs returns printf arguments with every string-like one cleaned:
// strings and named string types, []string, []byte, errors and
// non-numeric Stringers through Clean, blocks through their String.
// Numbers and booleans are left to the verb.
func cleanArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if rv := reflect.ValueOf(a); rv.Kind() == reflect.Pointer && rv.IsNil() {
			out[i] = a // fmt prints <nil>, without calling a method
			continue
		}
		switch v := a.(type) {
		case block:
			out[i] = v.String()
		case string:
			out[i] = Clean(v)
		case []byte:
			out[i] = Clean(string(v))
		case []string:
			c := make([]string, len(v))
			for j, s := range v {
				c[j] = Clean(s)
			}
			out[i] = c
		case error:
			out[i] = Clean(v.Error())
		default:
			out[i] = a
			rv := reflect.ValueOf(a)
			if !rv.IsValid() {
				continue
			}
			if st, ok := a.(fmt.Stringer); ok && !numericKind(rv.Kind()) {
				out[i] = Clean(st.String())
			} else if rv.Kind() == reflect.String {
				out[i] = Clean(rv.String())
			}
		}
	}
	return out
}

func numericKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.Bool:
		return true
	}
	return false
}

// fprintf is fmt.Fprintf with its arguments cleaned (see cleanArgs): the
// one way text and Markdown reach a writer. format must be a constant: it
// is written as is.
func fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, cleanArgs(args)...)
}

// csvWriter is a csv.Writer that cleans every field: a CSV row stays one
// line, and encoding/csv still quotes commas and quotes.
type csvWriter struct{ *csv.Writer }

func newCSV(w io.Writer) csvWriter { return csvWriter{csv.NewWriter(w)} }

func (c csvWriter) Write(record []string) error {
	clean := make([]string, len(record))
	for i, f := range record {
		clean[i] = Clean(f)
	}
	return c.Writer.Write(clean)
}

// jsonEscapeControls rewrites, in JSON that encoding/json wrote, the
// characters it leaves raw but a terminal may act on (DEL, C1 controls,
// bidirectional controls) as \u escapes. The decoded values are
// unchanged: only their spelling in the document differs. Such characters
// can only be inside strings, as JSON's own syntax is printable ASCII.
func jsonEscapeControls(js []byte) []byte {
	var out []byte
	start := 0
	for i := 0; i < len(js); {
		r, n := rune(js[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(js[i:])
		}
		if r == 0x7f || (r != utf8.RuneError && unsafeRune(r)) {
			if out == nil {
				out = make([]byte, 0, len(js)+32)
			}
			out = append(out, js[start:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			start = i + n
		}
		i += n
	}
	if out == nil {
		return js
	}
	return append(out, js[start:]...)
}
