package skip

import (
	"reflect"
	"strings"
	"testing"
)

var (
	testA = Define("test_reason_a", "test reason a")
	testB = Define("test_reason_b", "test reason b")
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		defs [][2]string
		want string // a part of the error; "" for none
	}{
		{name: "good", defs: [][2]string{{"truncated_event", "truncated event"}, {"line_too_long_1mib", "line longer than 1 MiB"}}},
		{name: "spaces", defs: [][2]string{{"truncated event", "truncated event"}}, want: "not snake_case"},
		{name: "upper case", defs: [][2]string{{"Truncated", "truncated"}}, want: "not snake_case"},
		{name: "hyphen", defs: [][2]string{{"too-long", "too long"}}, want: "not snake_case"},
		{name: "double underscore", defs: [][2]string{{"too__long", "too long"}}, want: "not snake_case"},
		{name: "leading digit", defs: [][2]string{{"1mib", "1 MiB"}}, want: "not snake_case"},
		{name: "trailing underscore", defs: [][2]string{{"long_", "long"}}, want: "not snake_case"},
		{name: "empty", defs: [][2]string{{"", "nothing"}}, want: "not snake_case"},
		{name: "twice", defs: [][2]string{{"empty_line", "empty line"}, {"empty_line", "blank line"}}, want: "defined twice"},
		{name: "no words", defs: [][2]string{{"empty_line", " "}}, want: "has no words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g registry
			for _, d := range tc.defs {
				g.define(d[0], d[1])
			}
			err := g.check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("check: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("check: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestRegistry: this test binary's definitions are well formed, and the
// first definition of a code keeps its words.
func TestRegistry(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	var g registry
	g.define("empty_line", "empty line")
	g.define("empty_line", "blank line")
	if w := g.words("empty_line"); w != "empty line" {
		t.Errorf("words after a repeat: %q", w)
	}
	if got := (Code("").Codes()); !reflect.DeepEqual(got, []string{"test_reason_a", "test_reason_b"}) {
		t.Errorf("Codes: %v", got)
	}
	if got := Registered(); !reflect.DeepEqual(got, []Entry{{"test_reason_a", "test reason a"}, {"test_reason_b", "test reason b"}}) {
		t.Errorf("Registered: %v", got)
	}
}

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		code Code
		want string
	}{
		{name: "registered", code: "test_reason_a", want: "test reason a"},
		{name: "unknown prints as itself", code: "no_such_code", want: "no_such_code"},
		{name: "an older run's sentence", code: "truncated event (header without query)", want: "truncated event (header without query)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.code.Words(); got != tc.want {
				t.Errorf("Words(%q) = %q, want %q", tc.code, got, tc.want)
			}
		})
	}
	if testA.Words() != "test reason a" || testA.Code() != "test_reason_a" || testA.String() != "test_reason_a" {
		t.Errorf("reason a: %q %q %q", testA.Words(), testA.Code(), testA.String())
	}
}

func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		do      func(c *Counts)
		want    Counts
		total   int64
		unknown []Code
	}{
		{name: "nothing", do: func(c *Counts) {}, want: nil},
		{name: "add makes the map", do: func(c *Counts) { c.Add(testA, 2); c.Add(testA, 1); c.Add(testB, 1) },
			want: Counts{"test_reason_a": 3, "test_reason_b": 1}, total: 4},
		{name: "zero and negative counts nothing", do: func(c *Counts) { c.Add(testA, 0); c.Add(testB, -1) }, want: nil},
		{name: "the zero reason counts nothing", do: func(c *Counts) { c.Add(Reason{}, 5) }, want: nil},
		{name: "merge", do: func(c *Counts) {
			c.Add(testA, 1)
			c.Merge(Counts{"test_reason_a": 2, "test_reason_b": 0, "old sentence": 1})
		}, want: Counts{"test_reason_a": 3, "old sentence": 1}, total: 4, unknown: []Code{"old sentence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Counts
			tc.do(&c)
			if !reflect.DeepEqual(c, tc.want) {
				t.Errorf("counts %v, want %v", c, tc.want)
			}
			if c.Total() != tc.total {
				t.Errorf("total %d, want %d", c.Total(), tc.total)
			}
			if u := c.Unknown(); !reflect.DeepEqual(u, tc.unknown) {
				t.Errorf("unknown %v, want %v", u, tc.unknown)
			}
		})
	}
}
