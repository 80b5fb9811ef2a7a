package nginxconf

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"16k", 16 << 10, ""},
		{"8K", 8 << 10, ""},
		{"1m", 1 << 20, ""},
		{"2M", 2 << 20, ""},
		{"4096", 4096, ""},
		{"0", 0, ""},
		{"", 0, "want a number"},
		{"k", 0, "want a number"},
		{"1g", 0, "want a number"}, // ngx_parse_size takes no g
		{"-1k", 0, "want a number"},
		{"+1", 0, "want a number"},
		{"1.5k", 0, "want a number"},
		{" 1k", 0, "want a number"},
		{"9223372036854775807", 1<<63 - 1, ""},
		{"9223372036854775808", 0, "too large"},
		{"9007199254740992k", 0, "too large"},
		{"99999999999999999999", 0, "want a number"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), strconv.Quote(tc.in)) {
					t.Fatalf("ParseSize(%q) = %d, %v; want an error quoting it and saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16k", "8K", "1m", "4096", "", "1g", "-1", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		// What it reads is what nginx writes back: the bytes, or a whole
		// number of the unit.
		var back string
		switch s[len(s)-1] {
		case 'k', 'K':
			back = strconv.FormatInt(n>>10, 10) + s[len(s)-1:]
		case 'm', 'M':
			back = strconv.FormatInt(n>>20, 10) + s[len(s)-1:]
		default:
			back = strconv.FormatInt(n, 10)
		}
		if again, err := ParseSize(back); err != nil || again != n {
			t.Fatalf("ParseSize(%q) = %d; %q reads %d, %v", s, n, back, again, err)
		}
	})
}

func TestParseSeconds(t *testing.T) {
	seconds := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"65", 65, true}, {"75s", 75, true}, {"1m", 60, true}, {"500ms", 0.5, true}, {"1h30m", 5400, true},
		{"0", 0, true}, {"", 0, false}, {"s", 0, false}, {"10x", 0, false},
	}
	for _, tc := range seconds {
		if got, ok := ParseSeconds(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
