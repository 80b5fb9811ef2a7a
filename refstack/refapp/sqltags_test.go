package refapp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSQLComment serialises the sqlcommenter specification's example.
func TestSQLComment(t *testing.T) {
	got := sqlcomment(map[string]string{"action": "/param*d", "controller": "index", "framework": "spring",
		"traceparent": "00-5bd66ef5095369c7b0d1f8f4bd33716a-c532cb4098ac3dd2-01", "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"})
	want := "/*action='%2Fparam*d',controller='index',framework='spring',traceparent='00-5bd66ef5095369c7b0d1f8f4bd33716a-c532cb4098ac3dd2-01',tracestate='congo%3Dt61rcWkgMzE%2Crojo%3D00f067aa0ba902b7'*/"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := sqlcomment(map[string]string{"route": "it's /a b?"}); got != `/*route='it\'s%20%2Fa%20b%3F'*/` {
		t.Errorf("escaping: %s", got)
	}
}

// TestSQLTags: with tags on, a request's statements end with its tags,
// the request's traceparent kept when valid, a new one per request when
// not; with tags off, statements are as written.
func TestSQLTags(t *testing.T) {
	for _, c := range []struct {
		name, header string
		on           bool
		keep         bool
	}{{"off", "", false, false}, {"a valid traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true},
		{"none", "", true, false}, {"an invalid one", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			d := &taggedDB{tags: c.on}
			var q string
			h := d.handler("GET /profile/{account_name}", "profile", func(w http.ResponseWriter, r *http.Request) { q = d.tag(r.Context(), "SELECT 1") })
			req := httptest.NewRequest(http.MethodGet, "/profile/x", nil)
			if c.header != "" {
				req.Header.Set("traceparent", c.header)
			}
			h(httptest.NewRecorder(), req)
			switch {
			case !c.on:
				if q != "SELECT 1" {
					t.Errorf("%q", q)
				}
			case !strings.HasPrefix(q, "SELECT 1 /*action='profile',db_driver='go-sql-driver%2Fmysql',framework='net%2Fhttp',route='GET%20%2Fprofile%2F%7Baccount_name%7D',traceparent='00-") || !strings.HasSuffix(q, "-01'*/"):
				t.Errorf("%q", q)
			case c.header != "" && c.keep != strings.Contains(q, c.header):
				t.Errorf("traceparent kept %v: %q", !c.keep, q)
			}
		})
	}
}
