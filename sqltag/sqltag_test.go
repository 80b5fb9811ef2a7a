package sqltag

import (
	"reflect"
	"strings"
	"testing"
)

const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParse(t *testing.T) {
	cases := []struct {
		name     string
		q        string
		want     []Tag
		format   Format
		request  string
		endpoint string
	}{
		{"none", "SELECT 1", nil, None, "", ""},
		{"sqlcommenter spec example",
			"SELECT * FROM FOO /*action='%2Fparam*d',controller='index',framework='spring',traceparent='" + tp + "',tracestate='congo%3Dt61rcWkgMzE%2Crojo%3D00f067aa0ba902b7'*/",
			[]Tag{{"action", "/param*d"}, {"controller", "index"}, {"framework", "spring"}, {"traceparent", tp}, {"tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"}},
			SQLCommenter, "trace:4bf92f3577b34da6a3ce929d0e0e4736", "index#/param*d"},
		{"route with method from a Go mux pattern", "SELECT 1 /*route='GET%20%2Fitems%2F%7Bid%7D'*/", []Tag{{"route", "GET /items/{id}"}}, SQLCommenter, "", "GET /items/{id}"},
		{"route and method tag", "SELECT 1 /*http_method='get',route='%2Fitems'*/", []Tag{{"http_method", "get"}, {"route", "/items"}}, SQLCommenter, "", "GET /items"},
		{"escaped quote", `SELECT 1 /*action='it\'s',route='%2F'*/`, []Tag{{"action", "it's"}, {"route", "/"}}, SQLCommenter, "", "/"},
		{"marginalia", "SELECT `books`.* FROM `books` WHERE `books`.`id` = 7 /*application:Shop,controller:books,action:show,request_id:9f3e*/",
			[]Tag{{"action", "show"}, {"application", "Shop"}, {"controller", "books"}, {"request_id", "9f3e"}}, Marginalia, "request:9f3e", "books#show"},
		{"marginalia value with colons", "SELECT 1 /*controller:a,line:/app/x.rb:12:in `f'*/", []Tag{{"controller", "a"}, {"line", "/app/x.rb:12:in `f'"}}, Marginalia, "", "a"},
		{"plain with spaces, at the start", "/* route=/books, request_id=42 */ SELECT 1", []Tag{{"request_id", "42"}, {"route", "/books"}}, Plain, "request:42", "/books"},
		{"hint and version comments are not tags", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ /*!40001 SQL_NO_CACHE */ 1", nil, None, "", ""},
		{"prose comment is not tags", "SELECT 1 /* load the user's friends */", nil, None, "", ""},
		{"comment inside a string is not read", "SELECT '/*route=''x''*/' FROM t", nil, None, "", ""},
		{"comment after a string with an escaped quote", `SELECT 'a\'/*' /*route='%2Fok'*/`, []Tag{{"route", "/ok"}}, SQLCommenter, "", "/ok"},
		{"comment inside backquotes is not read", "SELECT `/*route='x'*/` FROM t", nil, None, "", ""},
		{"after a line comment", "SELECT 1 -- /*route='x'*/\n/*route='y'*/", []Tag{{"route", "y"}}, SQLCommenter, "", "y"},
		{"unterminated", "SELECT 1 /*route='x'", nil, None, "", ""},
		{"unterminated value", "SELECT 1 /*route='x,action='y*/", nil, None, "", ""},
		{"trailing comma", "SELECT 1 /*route='x',*/", nil, None, "", ""},
		{"later comment wins", "/*route='a',action='x'*/ SELECT 1 /*route='b'*/", []Tag{{"action", "x"}, {"route", "b"}}, SQLCommenter, "", "b"},
		{"invalid traceparent", "SELECT 1 /*traceparent='00-00000000000000000000000000000000-00f067aa0ba902b7-01'*/", []Tag{{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}, SQLCommenter, "", ""},
		{"bad percent kept", "SELECT 1 /*route='%zz'*/", []Tag{{"route", "%zz"}}, SQLCommenter, "", "%zz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Parse([]byte(c.q))
			if !reflect.DeepEqual(got.List, c.want) {
				t.Errorf("tags %q, want %q", got.List, c.want)
			}
			if got.Format != c.format {
				t.Errorf("format %v, want %v", got.Format, c.format)
			}
			if r := got.Request(); r != c.request {
				t.Errorf("request %q, want %q", r, c.request)
			}
			if e := got.Endpoint(); e != c.endpoint {
				t.Errorf("endpoint %q, want %q", e, c.endpoint)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("SELECT 1 /*")
	for i := range MaxTags + 5 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("='v'")
	}
	b.WriteString(",route='" + strings.Repeat("a", MaxValue+10) + "'*/")
	got := Parse([]byte(b.String()))
	if got.Len() != MaxTags || !got.Cut {
		t.Errorf("%d tags, cut %v", got.Len(), got.Cut)
	}
	got = Parse([]byte("SELECT 1 /*route='" + strings.Repeat("a", MaxValue+10) + "'*/"))
	if len(got.Get("route")) != MaxValue || !got.Cut {
		t.Errorf("route of %d bytes, cut %v", len(got.Get("route")), got.Cut)
	}
}

func TestTraceID(t *testing.T) {
	cases := map[string]bool{
		tp: true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra": false, // version 00 has no more fields
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra": true,  // a later version may
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":       false,
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01":       false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":       false,
		"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01":       false,
		"": false,
	}
	for in, want := range cases {
		if _, ok := TraceID(in); ok != want {
			t.Errorf("TraceID(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT 1 /*action='a',route='%2F',traceparent='" + tp + "'*/",
		"SELECT 1 /*controller:a,action:b*/",
		"/* a=b, c=d */ SELECT 'x/*' -- /*\n#/*\n/*k='\\''*/",
		"SELECT `/*` /*", "/**/", "/*=*/", "/*a:*/", "/*'*/",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		tags := Parse(q)
		if tags.Len() > MaxTags {
			t.Fatalf("%d tags", tags.Len())
		}
		for i, tg := range tags.List {
			if tg.Key == "" {
				t.Fatalf("empty key in %q", tags.List)
			}
			if i > 0 && tags.List[i-1].Key >= tg.Key {
				t.Fatalf("not sorted or not unique: %q", tags.List)
			}
			if len(tg.Value) > 3*MaxValue {
				t.Fatalf("value of %d bytes", len(tg.Value))
			}
		}
		if (tags.Len() == 0) != (tags.Format == None) {
			t.Fatalf("%d tags in format %v", tags.Len(), tags.Format)
		}
		_ = tags.Request()
		_ = tags.Endpoint()
	})
}

func TestMatchRoute(t *testing.T) {
	cases := []struct {
		route, method, path string
		want                bool
	}{
		{"GET /profile/{account_name}", "GET", "/profile/:name", true},
		{"GET /profile/{account_name}", "POST", "/profile/:name", false},
		{"/profile/{account_name}", "POST", "/profile/:name", true},
		{"GET /{$}", "GET", "/", true},
		{"GET /{$}", "GET", "/footprints", false},
		{"/books/:id", "GET", "/books/:num", true},
		{"/books/<int:id>", "GET", "/books/:num", true},
		{"/books/new", "GET", "/books/:num", false},
		{"/books/{id}", "GET", "/books/:num/reviews", false},
		{"books#show", "GET", "/books/:num", false},
		{"/a?x=1", "GET", "/a", true},
	}
	for _, c := range cases {
		if got := MatchRoute(c.route, c.method, c.path); got != c.want {
			t.Errorf("MatchRoute(%q, %q, %q) = %v", c.route, c.method, c.path, got)
		}
	}
}
