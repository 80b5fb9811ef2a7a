package mysqlvar

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Norm folds a variable or option name as the server does: lower case,
// '-' as '_', no surrounding blanks.
func Norm(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// ValidName reports whether name (after Norm) is a plain variable name:
// letters, digits, '_' and '.' (a component's prefix, as in
// validate_password.length), so it can be written into a SET statement
// as it is.
func ValidName(name string) bool {
	if name != strings.TrimSpace(name) {
		return false
	}
	n := Norm(name)
	if n == "" || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' && i > 0 && i < len(n)-1) {
			return false
		}
	}
	return true
}

// sizeUnits are the suffixes ParseSize takes: the servers' option-file
// letters (K, M, G, T, P, E, powers of 1024, any case) and, for command
// lines, KiB/KB, MiB/MB, GiB/GB, TiB/TB (also powers of 1024) and B.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30}, {"tib", 40},
	{"kb", 10}, {"mb", 20}, {"gb", 30}, {"tb", 40},
	{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}, {"p", 50}, {"e", 60},
	{"b", 0},
}

// ErrNotSize is returned by ParseSize for text that is not a size.
var ErrNotSize = errors.New("not a size")

// ParseSize reads a byte size as an option file or a command line writes
// it: "67108864", "64M", "64m", "2G", "512MiB", "1GB" (all powers of
// 1024). It refuses fractions, signs and sizes beyond int64.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	shift := uint(0)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) && len(t) > len(u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	if t == "" || !isDigits(t) {
		return 0, fmt.Errorf("%q: %w (e.g. 67108864, 64M, 512MiB)", s, ErrNotSize)
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q: %w: too large", s, ErrNotSize)
	}
	return n << shift, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseInt reads a running numeric value as SHOW GLOBAL VARIABLES gives
// it: an integer (unsigned values beyond int64 are capped at MaxInt64), a
// size with a suffix, or a decimal ("10.000000" reads as 10).
func ParseInt(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, true
	}
	if u, err := strconv.ParseUint(v, 10, 64); err == nil {
		if u > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(u), true
	}
	if n, err := ParseSize(v); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		if f > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(f), true
	}
	return 0, false
}

// ParseBool reads a boolean as the servers accept it: ON/OFF, TRUE/FALSE,
// YES/NO (any case); ok is false for anything else (1 and 0 are numbers
// here: see Equal).
func ParseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes":
		return true, true
	case "off", "false", "no":
		return false, true
	}
	return false, false
}

// number reads v as an exact number: an integer (any size), a size with
// a suffix, or a decimal.
func number(v string) (*big.Rat, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, false
	}
	if n, err := ParseSize(v); err == nil {
		return new(big.Rat).SetInt64(n), true
	}
	if strings.ContainsAny(v, "eE") || strings.HasPrefix(v, "+") { // no exponents, signs only '-'
		return nil, false
	}
	r, ok := new(big.Rat).SetString(v)
	return r, ok
}

// Equal compares two values of one setting as the server means them:
// case and runs of blanks do not matter; ON, TRUE, YES and 1 are one
// value (OFF, FALSE, NO and 0 another); numbers compare by value, sizes
// with suffixes by their bytes ("64M" = "67108864", "10" = "10.000000").
// It is the one comparison of setting values in stacktune: the audit
// uses it to see what must change, apply to see what did.
func Equal(a, b string) bool {
	fa, fb := fold(a), fold(b)
	if fa == fb {
		return true
	}
	if ba, ok := boolish(fa); ok {
		bb, ok := boolish(fb)
		return ok && ba == bb
	}
	na, ok1 := number(fa)
	nb, ok2 := number(fb)
	return ok1 && ok2 && na.Cmp(nb) == 0
}

func fold(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// boolish reads a folded value as a boolean, taking 1 and 0 too.
func boolish(v string) (bool, bool) {
	switch v {
	case "1":
		return true, true
	case "0":
		return false, true
	}
	return ParseBool(v)
}

// Literal renders a value for SET GLOBAL: DEFAULT as the keyword, a
// boolean word as ON or OFF, a size as its bytes ("64M" as 67108864), a
// number as it is, anything else as a string literal with its quotes
// doubled (which means the same with and without NO_BACKSLASH_ESCAPES).
// A value holding a backslash or a control character is refused: its
// meaning would depend on the session's sql_mode.
func Literal(v string) (string, error) {
	t := strings.TrimSpace(v)
	switch {
	case strings.EqualFold(t, "default"):
		return "DEFAULT", nil
	case t == "":
		return "''", nil
	}
	if b, ok := ParseBool(t); ok {
		if b {
			return "ON", nil
		}
		return "OFF", nil
	}
	if n, err := ParseSize(t); err == nil {
		return strconv.FormatInt(n, 10), nil
	}
	if _, ok := number(t); ok {
		return t, nil
	}
	for _, r := range t {
		if r == '\\' || r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("the value %q holds a backslash or a control character: set it by hand", v)
		}
	}
	return "'" + strings.ReplaceAll(t, "'", "''") + "'", nil
}

// SetGlobal is the statement that sets a variable on a running server,
// the one the audit shows and apply runs.
func SetGlobal(name, value string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("%q is not a variable name", name)
	}
	lit, err := Literal(value)
	if err != nil {
		return "", fmt.Errorf("%s: %w", Norm(name), err)
	}
	return "SET GLOBAL " + Norm(name) + " = " + lit, nil
}
