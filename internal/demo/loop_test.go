package demo

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/refapp"
)

func TestSlower(t *testing.T) {
	cases := []struct {
		name      string
		cur, prev []float64
		want      bool
	}{
		{"all below and 20% down", []float64{80, 78, 82}, []float64{100, 98, 101}, true},
		{"overlapping runs", []float64{80, 99, 82}, []float64{100, 98, 101}, false},
		{"all below but only 5% down: noise", []float64{95, 94, 96}, []float64{100, 98, 101}, false},
		{"faster", []float64{200, 210, 190}, []float64{100, 98, 101}, false},
		{"no previous step", []float64{1}, nil, false},
		{"one run each, 50% down", []float64{50}, []float64{100}, true},
	}
	for _, c := range cases {
		if got := slower(c.cur, c.prev); got != c.want {
			t.Errorf("%s: slower = %v", c.name, got)
		}
	}
}

// TestAppStateCoversConfig: the app target reads back every setting of
// the app's config file, so a new fix behind a setting cannot be applied
// without its read-back.
func TestAppStateCoversConfig(t *testing.T) {
	st := appState(refapp.Config{})
	typ := reflect.TypeOf(refapp.Config{})
	for i := 0; i < typ.NumField(); i++ {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := st[tag]; !ok {
			t.Errorf("refapp.Config.%s (%q) is not in the app target's state", typ.Field(i).Name, tag)
		}
	}
	if len(st) != typ.NumField() {
		t.Errorf("state %v has keys that are no config field", st)
	}
}

func TestLastKept(t *testing.T) {
	r := &LoopResult{Steps: []StepResult{
		{Label: "baseline", Scores: []float64{1, 2, 3}},
		{Label: "indexes", Scores: []float64{10, 11, 12}},
		{Label: "my.cnf", Skipped: "nothing to apply"},
		{Label: "cache", Scores: []float64{5, 5, 5}, RolledBack: "slower"},
	}}
	if got := lastKept(r); !reflect.DeepEqual(got, []float64{10, 11, 12}) {
		t.Errorf("lastKept = %v, want the indexes step's scores", got)
	}
}
