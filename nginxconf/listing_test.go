package nginxconf

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestListingJSON: a Listing written as JSON reads back as the same
// tree, contexts and parents included, the types {} entries left out.
func TestListingJSON(t *testing.T) {
	c, err := Parse("/etc/nginx/nginx.conf", []byte("pid /run/n.pid;\nhttp {\n types { text/html html; }\n server { listen 80; location /a { if ($x = \"<&>\") { return 204; } } }\n server { listen 81; }\n}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Listing()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"pid","args":["/run/n.pid"],"context":"","file":"/etc/nginx/nginx.conf","line":1,"parent":-1},` +
		`{"name":"http","args":[],"context":"","file":"/etc/nginx/nginx.conf","line":2,"block":true,"parent":-1},` +
		`{"name":"types","args":[],"context":"http","file":"/etc/nginx/nginx.conf","line":3,"block":true,"parent":1},` +
		`{"name":"server","args":[],"context":"http","file":"/etc/nginx/nginx.conf","line":4,"block":true,"parent":1},` +
		`{"name":"listen","args":["80"],"context":"http\u003eserver","file":"/etc/nginx/nginx.conf","line":4,"parent":3},` +
		`{"name":"location","args":["/a"],"context":"http\u003eserver","file":"/etc/nginx/nginx.conf","line":4,"block":true,"parent":3},` +
		`{"name":"if","args":["($x","=","\u003c\u0026\u003e",")"],"context":"http\u003eserver\u003elocation /a","file":"/etc/nginx/nginx.conf","line":4,"block":true,"parent":5},` +
		`{"name":"return","args":["204"],"context":"http\u003eserver\u003elocation /a\u003eif ($x = \u003c\u0026\u003e )","file":"/etc/nginx/nginx.conf","line":4,"parent":6},` +
		`{"name":"server","args":[],"context":"http","file":"/etc/nginx/nginx.conf","line":5,"block":true,"parent":1},` +
		`{"name":"listen","args":["81"],"context":"http\u003eserver","file":"/etc/nginx/nginx.conf","line":5,"parent":8}]`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	// An encoder that does not escape HTML gets the characters as they
	// are: the escaping is the caller's.
	var raw strings.Builder
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw.String(), `"args":["($x","=","<&>",")"]`) {
		t.Errorf("unescaped JSON %s", raw.String())
	}
	var back Listing
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b) {
		t.Errorf("read back and written again:\n%s\nwant\n%s", again, b)
	}
	// The tree answers as the Config's: two servers apart, Enclosing,
	// Within.
	ret := back[7]
	if ret.Name() != "return" || ret.Enclosing("server") != back[3] || !ret.Within(back[1]) || ret.Within(back[8]) {
		t.Errorf("return's place: %s in %s", ret.Name(), ret.Parent().Path())
	}
	if got := back[1].ChildrenNamed("server"); len(got) != 2 || got[1] != back[8] {
		t.Errorf("http's servers %v", got)
	}
	if back[0].Parent().Parent() != nil {
		t.Error("pid is not at the top level")
	}
	// A listing of nothing is null, as a nil slice was.
	if b, _ := json.Marshal(Listing(nil)); string(b) != "null" {
		t.Errorf("nil listing %s", b)
	}
}

// TestListingJSONErrors: parents that do not make a tree are refused,
// when read and when written.
func TestListingJSONErrors(t *testing.T) {
	cases := []struct {
		name, json, err string
	}{
		{"parent after the directive", `[{"name":"listen","parent":1},{"name":"server","block":true,"parent":-1}]`, "parent 1 is not a block listed before it"},
		{"parent not a block", `[{"name":"pid","parent":-1},{"name":"listen","parent":0}]`, "parent 0 is not a block"},
		{"parent itself", `[{"name":"server","block":true,"parent":0}]`, "parent 0 is not a block listed before it"},
		{"negative parent", `[{"name":"pid","parent":-2}]`, "parent -2 is not an index"},
		{"not an array", `{"name":"pid"}`, "cannot unmarshal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l Listing
			if err := json.Unmarshal([]byte(tc.json), &l); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want an error with %q", err, tc.err)
			}
		})
	}
	c, err := Parse("nginx.conf", []byte("http { server { listen 80; } }"), false)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Listing()
	if _, err := json.Marshal(Listing{l[2]}); err == nil || !strings.Contains(err.Error(), "its block is not listed before it") {
		t.Errorf("a directive without its block: %v", err)
	}
}
