package jsonschema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type color string

func (color) Codes() []string { return []string{"red", "dark_blue"} }

type inner struct {
	Name string `json:"name"`
	Deep string `json:"deep"`
}

type shaped struct{ Secret int }

func (shaped) MarshalJSON() ([]byte, error) { return []byte(`{"public":"x"}`), nil }
func (shaped) JSONShape() any {
	return struct {
		Public string `json:"public"`
	}{}
}

type node struct {
	Kids []*node `json:"kids"`
}

type sample struct {
	inner
	Deep   int               `json:"deep,omitempty"`
	Color  color             `json:"color"`
	Counts map[color]int64   `json:"counts"`
	When   time.Time         `json:"when"`
	Ptr    *inner            `json:"ptr"`
	Skip   string            `json:"-"`
	Raw    json.RawMessage   `json:"raw"`
	Tree   node              `json:"tree"`
	Quoted int64             `json:"quoted,string"`
	Any    any               `json:"any"`
	Bytes  []byte            `json:"bytes"`
	Fixed  [2]float64        `json:"fixed"`
	Plain  map[string]string `json:"plain"`
	Shaped shaped            `json:"shaped"`
	hidden int
	NoTag  bool
}

func TestDescribe(t *testing.T) {
	doc, err := Describe(reflect.TypeOf(&sample{}))
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Root.Nullable || doc.Root.Ref != "jsonschema.sample" {
		t.Fatalf("root = %+v, want a nullable ref to jsonschema.sample", doc.Root)
	}
	obj := doc.Types["jsonschema.sample"]
	type want struct{ typ, format, ref string }
	for _, c := range []struct {
		name  string
		field string
		want  want
	}{
		{"embedded field inlined", "name", want{typ: "string"}},
		{"shallower field wins", "deep", want{typ: "integer"}},
		{"enum", "color", want{typ: "string"}},
		{"map with enum keys", "counts", want{typ: "map"}},
		{"time", "when", want{typ: "string", format: "date-time"}},
		{"pointer to struct", "ptr", want{typ: "ref", ref: "jsonschema.inner"}},
		{"raw message", "raw", want{typ: "any"}},
		{"recursive type", "tree", want{typ: "ref", ref: "jsonschema.node"}},
		{"string option", "quoted", want{typ: "string", format: "quoted integer"}},
		{"interface", "any", want{typ: "any"}},
		{"bytes", "bytes", want{typ: "string", format: "base64"}},
		{"array", "fixed", want{typ: "array"}},
		{"untagged field by its Go name", "NoTag", want{typ: "boolean"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := obj.Fields[c.field]
			if f == nil {
				t.Fatalf("no field %q in %v", c.field, keys(obj.Fields))
			}
			if got := (want{f.Type, f.Format, f.Ref}); got != c.want {
				t.Errorf("%s = %+v, want %+v", c.field, got, c.want)
			}
		})
	}
	for _, name := range []string{"Skip", "-", "hidden", "inner"} {
		if _, ok := obj.Fields[name]; ok {
			t.Errorf("field %q described; encoding/json leaves it out", name)
		}
	}
	if got := strings.Join(obj.Fields["color"].Enum, ","); got != "dark_blue,red" {
		t.Errorf("color codes = %s, want dark_blue,red (sorted)", got)
	}
	if obj.Fields["counts"].KeyEnum != "jsonschema.color" {
		t.Errorf("counts keys = %q, want the enumeration jsonschema.color", obj.Fields["counts"].KeyEnum)
	}
	if !obj.Fields["deep"].OmitEmpty || obj.Fields["name"].OmitEmpty {
		t.Errorf("omitempty: deep %v, name %v; want true, false", obj.Fields["deep"].OmitEmpty, obj.Fields["name"].OmitEmpty)
	}
	if n := doc.Types["jsonschema.node"]; n == nil || n.Fields["kids"].Items.Ref != "jsonschema.node" {
		t.Errorf("node = %+v, want kids as refs to itself", n)
	}
	if sh := doc.Types["jsonschema.shaped"]; sh == nil || !sh.Custom || sh.Fields["public"] == nil || sh.Fields["Secret"] != nil {
		t.Errorf("shaped = %+v, want its JSONShape's fields, marked custom", sh)
	}
	enums := doc.Enums()
	if got := strings.Join(enums["jsonschema.color"], ","); got != "dark_blue,red" {
		t.Errorf("Enums() = %v, want jsonschema.color's codes", enums)
	}
}

func TestDescribeRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		path string
	}{
		{"channel", struct {
			C chan int `json:"c"`
		}{}, "$.c"},
		{"function in a slice", struct {
			F []func() `json:"f"`
		}{}, "$.f[]"},
		{"struct map key", map[struct{ A int }]int{}, "$"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Describe(reflect.TypeOf(c.v))
			if err == nil || !strings.HasPrefix(err.Error(), c.path+":") {
				t.Errorf("err = %v, want one naming %s", err, c.path)
			}
		})
	}
}

func keys(m map[string]*Field) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
