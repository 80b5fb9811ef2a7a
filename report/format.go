package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Formats accepted by the renderers.
const (
	Text     = "text"
	JSON     = "json"
	Markdown = "markdown"
	// SQL is statements to run, their evidence in comments.
	SQL = "sql"
)

// CheckFormat returns an error naming the accepted formats when f is not one
// of them.
func CheckFormat(f string, accepted ...string) error {
	for _, a := range accepted {
		if f == a {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q: use one of %s", f, strings.Join(accepted, ", "))
}

// WriteJSON writes v as indented JSON. Strings keep their exact value:
// JSON's own escapes carry C0 controls, and DEL, C1 and bidirectional
// controls, which encoding/json would leave raw, are written as \u
// escapes, so the document is safe on a terminal and decodes to the same
// strings. One loss is encoding/json's and is not undone here: JSON
// strings are Unicode, so each byte of a string that is not valid UTF-8
// becomes U+FFFD (written \ufffd), and the original byte cannot be
// recovered from the JSON. The text, Markdown and CSV formats show such a
// byte as \xNN (see Clean).
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonEscapeControls(b.Bytes()))
	return err
}

// Duration formats seconds with a unit that keeps 3 significant digits:
// 812µs, 12.3ms, 4.56s, 2h03m.
func Duration(sec float64) string {
	switch {
	case math.IsNaN(sec) || math.IsInf(sec, 0):
		return "-"
	case sec == 0:
		return "0"
	case sec < 1e-3:
		return fmt.Sprintf("%.0fµs", sec*1e6)
	case sec < 1:
		return trim3(sec*1e3) + "ms"
	case sec < 600:
		return trim3(sec) + "s"
	case sec < 3600*48:
		h := int(sec / 3600)
		m := int(math.Mod(sec, 3600) / 60)
		if h == 0 {
			return fmt.Sprintf("%dm%02ds", m, int(math.Mod(sec, 60)))
		}
		return fmt.Sprintf("%dh%02dm", h, m)
	default:
		return fmt.Sprintf("%.1fd", sec/86400)
	}
}

func trim3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Count formats an integer with thousands separators.
func Count(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Bytes formats a byte count in binary units.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Percent formats a 0..1 share.
func Percent(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }

// Ratio formats a ratio with two significant decimals.
func Ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return trim3(v)
}

// PerSecond formats a rate with three significant digits (0.000123/s for
// the odd query of a long window, 4.56k/s for a busy one).
func PerSecond(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
