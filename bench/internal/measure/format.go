package measure

import (
	"fmt"
	"io"
	"strconv"

	"github.com/stacktune/stacktune/report"
)

// MiB converts bytes to MiB (2^20 bytes).
func MiB(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// Ratio formats a/b as "12.3x", or "n/a" when b is zero.
func Ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 1, 64) + "x"
}

// GroupInt formats n with thousands separators: 827123 -> "827,123".
func GroupInt(n int64) string { return report.Count(n) }

// PrintMismatches lists the disagreements between the tools after a blank
// line and reports whether there were any.
func PrintMismatches(w io.Writer, mismatches []string) bool {
	if len(mismatches) == 0 {
		return false
	}
	fmt.Fprintf(w, "\nMISMATCHES (%d):\n", len(mismatches))
	for _, m := range mismatches {
		fmt.Fprintln(w, "  "+m)
	}
	return true
}
