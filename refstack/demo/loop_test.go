package demo

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/refstack/refapp"
)

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
