package jsonschema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Enum is implemented by a string type whose values are a closed set of
// codes: Codes lists them all.
type Enum interface {
	Codes() []string
}

// Shaper is implemented by a type that writes its own JSON
// (json.Marshaler) in another shape than its fields: JSONShape returns a
// value of the type whose fields it writes (its zero value is enough).
type Shaper interface {
	JSONShape() any
}

// Schema is the description of one JSON value.
type Schema struct {
	// Type is object, array, map, string, integer, number, boolean, any,
	// or ref (a named struct described once in Doc.Types).
	Type string `json:"type"`
	// Ref names the struct type of a ref ("abtest.Decision").
	Ref string `json:"ref,omitempty"`
	// Nullable: the value may be null (a pointer, a slice or a map).
	Nullable bool `json:"nullable,omitempty"`
	// Format refines a string: date-time (time.Time), text (a type that
	// marshals itself as text), base64 ([]byte).
	Format string `json:"format,omitempty"`
	// Enum is the codes of an enumeration, sorted.
	Enum []string `json:"enum,omitempty"`
	// EnumType names the enumeration's Go type.
	EnumType string `json:"enum_type,omitempty"`
	// Items is an array's element, Values a map's value (keys are
	// strings in JSON; KeyEnum names their enumeration when they have
	// one).
	Items   *Schema `json:"items,omitempty"`
	Values  *Schema `json:"values,omitempty"`
	KeyEnum string  `json:"key_enum,omitempty"`
	// Fields are an object's fields by JSON name.
	Fields map[string]*Field `json:"fields,omitempty"`
	// Custom marks a type that writes its own JSON (json.Marshaler): its
	// fields are those of its JSONShape (Shaper) when it has one, else
	// those of the struct it is, which its MarshalJSON must then keep.
	Custom bool `json:"custom_marshaler,omitempty"`
}

// Field is one field of an object.
type Field struct {
	*Schema
	// OmitEmpty: the field is left out when it is empty.
	OmitEmpty bool `json:"omitempty,omitempty"`
}

// Doc is the description of a root type with the named structs it
// reaches, each described once.
type Doc struct {
	Root  *Schema            `json:"root"`
	Types map[string]*Schema `json:"types,omitempty"`
}

// Enums lists every enumeration a Doc reaches, by type name, with its
// codes.
func (d *Doc) Enums() map[string][]string {
	out := map[string][]string{}
	var visit func(s *Schema)
	visit = func(s *Schema) {
		if s == nil {
			return
		}
		if s.EnumType != "" {
			out[s.EnumType] = s.Enum
		}
		visit(s.Items)
		visit(s.Values)
		for _, f := range s.Fields {
			visit(f.Schema)
		}
	}
	visit(d.Root)
	for _, s := range d.Types {
		visit(s)
	}
	return out
}

var (
	enumType      = reflect.TypeOf((*Enum)(nil)).Elem()
	shaperType    = reflect.TypeOf((*Shaper)(nil)).Elem()
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textType      = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	timeType      = reflect.TypeOf(time.Time{})
	rawType       = reflect.TypeOf(json.RawMessage{})
)

// Describe walks t (a value's type, or a pointer to it). It returns an
// error for what JSON cannot carry (channels, functions, complex
// numbers), naming the path to it.
func Describe(t reflect.Type) (*Doc, error) {
	w := &walker{doc: &Doc{Types: map[string]*Schema{}}, busy: map[reflect.Type]bool{}}
	root, err := w.schema(t, "$")
	if err != nil {
		return nil, err
	}
	w.doc.Root = root
	return w.doc, nil
}

type walker struct {
	doc  *Doc
	busy map[reflect.Type]bool
}

// typeName is pkg.Type, the package's last path element.
func typeName(t reflect.Type) string {
	p := t.PkgPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return t.String()
	}
	return p + "." + t.Name()
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

func codes(t reflect.Type) []string {
	v := reflect.New(t).Elem()
	var e Enum
	if t.Implements(enumType) {
		e = v.Interface().(Enum)
	} else {
		e = v.Addr().Interface().(Enum)
	}
	c := append([]string(nil), e.Codes()...)
	sort.Strings(c)
	return c
}

func (w *walker) schema(t reflect.Type, path string) (*Schema, error) {
	if t.Kind() == reflect.Pointer {
		s, err := w.schema(t.Elem(), path)
		if err != nil {
			return nil, err
		}
		c := *s
		c.Nullable = true
		return &c, nil
	}
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}, nil
	case t == rawType:
		return &Schema{Type: "any"}, nil
	case t.Kind() != reflect.Struct && implements(t, enumType):
		return &Schema{Type: "string", Enum: codes(t), EnumType: typeName(t)}, nil
	case t.Kind() != reflect.Struct && !implements(t, marshalerType) && implements(t, textType):
		return &Schema{Type: "string", Format: "text"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Interface:
		return &Schema{Type: "any"}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Type: "string", Format: "base64", Nullable: true}, nil
		}
		items, err := w.schema(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "array", Items: items, Nullable: t.Kind() == reflect.Slice}, nil
	case reflect.Map:
		k := t.Key()
		s := &Schema{Type: "map", Nullable: true}
		switch {
		case k.Kind() == reflect.String && implements(k, enumType):
			s.KeyEnum = typeName(k)
			w.enumKey(k)
		case k.Kind() == reflect.String, implements(k, textType):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uint64:
		default:
			return nil, fmt.Errorf("%s: map key %s cannot be a JSON object key", path, k)
		}
		v, err := w.schema(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		s.Values = v
		return s, nil
	case reflect.Struct:
		name := typeName(t)
		if t.Name() == "" {
			return w.object(t, path)
		}
		if _, done := w.doc.Types[name]; !done && !w.busy[t] {
			w.busy[t] = true
			shape := t
			if t.Implements(shaperType) {
				shape = reflect.TypeOf(reflect.New(t).Elem().Interface().(Shaper).JSONShape())
				for shape.Kind() == reflect.Pointer {
					shape = shape.Elem()
				}
			}
			s, err := w.object(shape, path)
			delete(w.busy, t)
			if err != nil {
				return nil, err
			}
			s.Custom = implements(t, marshalerType)
			w.doc.Types[name] = s
		}
		return &Schema{Type: "ref", Ref: name}, nil
	}
	return nil, fmt.Errorf("%s: %s cannot be written as JSON", path, t)
}

// enumKey records a map key's enumeration in Types, so its codes are
// listed.
func (w *walker) enumKey(k reflect.Type) {
	w.doc.Types[typeName(k)] = &Schema{Type: "string", Enum: codes(k), EnumType: typeName(k)}
}

// object describes a struct's fields as encoding/json writes them:
// exported fields by their json tag's name, "-" left out, embedded
// structs without a name inlined.
func (w *walker) object(t reflect.Type, path string) (*Schema, error) {
	s := &Schema{Type: "object", Fields: map[string]*Field{}}
	if err := w.fields(t, path, 0, s.Fields, map[string]int{}); err != nil {
		return nil, err
	}
	return s, nil
}

// fields adds t's fields at depth (0 for the struct's own) to out; depth
// keeps, for each name, the depth it was found at: the shallower field
// wins, as in encoding/json.
func (w *walker) fields(t reflect.Type, path string, depth int, out map[string]*Field, depths map[string]int) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct && !implements(et, marshalerType) {
				if err := w.fields(et, path, depth+1, out, depths); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if d, dup := depths[name]; dup && d <= depth {
			continue
		}
		fs, err := w.schema(ft, path+"."+name)
		if err != nil {
			return err
		}
		field := &Field{Schema: fs}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				field.OmitEmpty = true
			case "string":
				field.Schema = &Schema{Type: "string", Format: "quoted " + fs.Type}
			}
		}
		out[name], depths[name] = field, depth
	}
	return nil
}
