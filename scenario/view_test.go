package scenario

import (
	"slices"
	"strings"
	"testing"
)

// TestPathShapes: the steps' paths with the segments a template fills
// left blank; the query, fixed paths and a duplicate left out.
func TestPathShapes(t *testing.T) {
	src := `name: shapes
base_url: http://127.0.0.1:8080
data: {users: [alice, bob], ids: ["1", "2"]}
session:
  login: {url: /login, form: {u: "{{users}}"}, expect: {status: 302}}
steps:
  - {name: home, url: /}
  - {name: diary, url: "/diary/entries/{{user}}"}
  - {name: diary again, url: "/diary/entries/{{users}}?page={{ids}}"}
  - {name: entry, url: "/diary/entry/{{ids}}/comments"}
  - {name: json, url: "/items/{{rand 1 9}}.json"}
  - {name: two, url: "/a/{{ids}}/b/{{users}}"}
  - {name: absolute, url: "http://127.0.0.1:8080/p/{{ids}}"}
  - {name: query only, url: "/search?q={{users}}"}
`
	s, err := Parse("shapes.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sh := range s.PathShapes() {
		got = append(got, "/"+strings.Join(sh, "/"))
	}
	want := []string{"/diary/entries/", "/diary/entry//comments", "/items/", "/a//b/", "/p/"}
	if !slices.Equal(got, want) {
		t.Errorf("PathShapes = %q, want %q", got, want)
	}
}
