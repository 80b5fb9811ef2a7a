package bytesconv

import (
	"strconv"
	"testing"
)

func TestParseSeconds(t *testing.T) {
	for _, s := range []string{"0", "0.000", "0.123", "12.5", ".5", "5.", "1234567.123456", "0.1000000000000000055511151231257827", "1e-3", "3E2"} {
		want, _ := strconv.ParseFloat(s, 64)
		got, ok := ParseSeconds([]byte(s))
		if !ok || got != want {
			t.Errorf("%s: got %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", ".", "-1", "1.2.3", "abc", "1e", "NaN", "Inf", "1e999"} {
		if got, ok := ParseSeconds([]byte(s)); ok {
			t.Errorf("%q accepted as %v", s, got)
		}
	}
}

func TestParseUint(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "42": 42, "123456789012345678": 123456789012345678} {
		if got, ok := ParseUint([]byte(s)); !ok || got != want {
			t.Errorf("%s: got %d %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-1", "1.0", "1234567890123456789", "12a"} {
		if got, ok := ParseUint([]byte(s)); ok {
			t.Errorf("%q accepted as %d", s, got)
		}
	}
}

func TestIsDigits(t *testing.T) {
	for s, want := range map[string]bool{"80": true, "0": true, "": false, "8o": false, "-1": false, " 1": false, "65535": true} {
		if got := IsDigits(s); got != want {
			t.Errorf("IsDigits(%q) = %v", s, got)
		}
	}
}
