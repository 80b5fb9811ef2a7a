package report

import (
	"html/template"
	"strings"
)

// The escapers: one per markup format, used by every renderer of that
// format in this package. Each takes the raw string; the caller cleans
// the result (see Clean) at the point where it prints it, never twice.

// mdReplacer is the Markdown escaper's table (see mdEscape).
var mdReplacer = strings.NewReplacer(
	"\\", `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "~", `\~`, "<", "&lt;")

// mdEscape escapes plain text for Markdown, in a paragraph, a list item,
// a heading or a table cell alike, so that what a reader sees is the text
// and nothing of it is taken for markup:
//
//   - '*' and '_' (emphasis; every underscore, since not every renderer
//     leaves those inside words alone), '~' (GFM strikethrough), '`'
//     (code spans) and '[' (links and images: "[x](http://...)" in a log
//     line must not become a link, nor "[x]: http://..." a definition at
//     the start of a list item) get a backslash; so does ']', not for
//     CommonMark (a ']' without an unescaped '[' before it is text) but
//     so that a bracketed pair such as an interval reads "\[0.92,
//     1.05\]" in the source, not "\[0.92, 1.05]": both or neither, and
//     '[' must be;
//   - '|' gets one too, so the text cannot end a table cell;
//   - '<' is written as "&lt;" (HTML tags and autolinks);
//   - a backslash is doubled, so one from the data cannot escape what
//     follows it, and the text as rendered reads exactly as Clean wrote
//     it (\x1b stays \x1b, a backslash from the data stays one backslash;
//     FuzzClean checks this).
//
// The text never starts a line (the renderers put a list marker, a table
// pipe or a heading before it), so line-start markup needs no escape.
func mdEscape(s string) string { return mdReplacer.Replace(s) }

// mdCode keeps the text of a code span in a table cell from ending the
// cell: only the pipe is escaped (GFM reads "\|" in a cell as a pipe, in
// code spans too), as anything else would show its backslash. Outside
// tables, a code span takes its text as is.
func mdCode(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// mdCodeSpan is s as a code span outside a table: a backquote in s, which
// would end the span, is written as a quote ('), and the text is cleaned.
func mdCodeSpan(s string) string { return "`" + Clean(strings.ReplaceAll(s, "`", "'")) + "`" }

// htmlEscape escapes text for HTML element content and quoted attribute
// values: the less-than and greater-than signs, the ampersand and both
// quotes become character references (and NUL U+FFFD), exactly as
// html/template escapes a value in those places, so pages built by hand
// and pages built from templates escape alike.
func htmlEscape(s string) string { return template.HTMLEscapeString(s) }
