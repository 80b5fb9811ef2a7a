package reqtrace

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/httpprof"

	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/input"
)

// TestFromSlowLogFixtures reads the captured tagged slow logs and checks
// each request's statements against a count of the log's lines made
// apart (a regular expression over the query lines).
func TestFromSlowLogFixtures(t *testing.T) {
	reKey := regexp.MustCompile(`traceparent='00-([0-9a-f]{32})-|request_id:([^,*]+)`)
	for _, c := range []struct {
		file, endpoint, n1 string
	}{
		{"../testdata/slowlogs/mariadb1011-sqlcommenter.log", "GET /diary/entries/{account_name}", "SELECT COUNT(*) FROM comments WHERE entry_id = ?"},
		{"../testdata/slowlogs/mariadb1011-marginalia.log", "authors#show", "SELECT AVG(rating) FROM reviews WHERE book_id = ?"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{}
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				l := sc.Text()
				if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "SET timestamp") || !strings.HasSuffix(l, ";") {
					continue
				}
				if m := reKey.FindStringSubmatch(l); m != nil {
					if m[1] != "" {
						want["trace:"+m[1]]++
					} else {
						want["request:"+m[2]]++
					}
				}
			}
			got := map[string]int64{}
			n1 := fingerprint.MergedID(fingerprint.Fingerprint(c.n1))
			var n1Max int64
			f, _ := os.Open(c.file)
			defer f.Close()
			rep, err := FromSlowLog(context.Background(), []input.Input{{Name: c.file, R: f}}, Options{NPlusOne: 2, OnRequest: func(rc RequestCalls) {
				got[rc.Request] = rc.Statements
				if rc.Endpoint == c.endpoint {
					n1Max = max(n1Max, rc.Calls[n1])
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 2 || len(got) != len(want) {
				t.Fatalf("%d requests, the log has %d", len(got), len(want))
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: %d statements, the log has %d", k, got[k], n)
				}
			}
			if rep.Unattributed != 0 || rep.Requests != int64(len(want)) {
				t.Errorf("%d unattributed, %d requests", rep.Unattributed, rep.Requests)
			}
			np, ok := findNPlusOne(rep, c.endpoint, n1)
			if !ok || np.Max != n1Max || n1Max < 2 {
				t.Errorf("N+1 %+v, the most in one request %d", np, n1Max)
			}
			// The digest's classes: every merged class lists pt-query-digest
			// IDs, and a tagged statement's ID is its own (trailing space).
			for _, cl := range rep.Classes {
				if len(cl.IDs) == 0 || cl.IDs[0] != fingerprint.ID(fingerprint.Fingerprint(cl.Sample)) {
					t.Errorf("class %s: IDs %v, sample %q", cl.Fingerprint, cl.IDs, cl.Sample)
				}
			}
		})
	}
}

// at is a time in milliseconds since a fixed start.
func at(ms float64) time.Time {
	return time.Unix(1000, 0).Add(time.Duration(ms * float64(time.Millisecond)))
}

func ts(b *builder, conn uint64, from, to float64, text string) traceStmt {
	return traceStmt{conn: conn, start: at(from).UnixNano(), end: at(to).UnixNano(), class: b.classes.of([]byte(text))}
}

// TestJoin ties statements to requests by time on made-up runs: one at a
// time, two at a time (told apart by connection, or ambiguous), a
// background statement and a request the client cut.
func TestJoin(t *testing.T) {
	b := newBuilder(Options{NPlusOne: 3})
	reqs := []Request{
		{Method: "GET", Path: "/a", Endpoint: "GET /a", Start: at(0), End: at(10)},
		{Method: "GET", Path: "/b", Endpoint: "GET /b", Start: at(5), End: at(20)},
		{Method: "GET", Path: "/a", Endpoint: "GET /a", Start: at(30), End: at(40), Cut: true},
	}
	sts := []traceStmt{
		ts(b, 1, 1, 2, "SELECT * FROM items WHERE id = 1"),         // only /a open
		ts(b, 1, 2, 3, "SELECT * FROM items WHERE id=2"),           // only /a open: the same merged class
		ts(b, 1, 3, 4, "SELECT * FROM items WHERE id = 3"),         // only /a open
		ts(b, 2, 6, 7, "SELECT name FROM users WHERE id = 1"),      // /a and /b open, connection 2 new: ambiguous
		ts(b, 1, 7, 8, "SELECT * FROM items WHERE id = 4"),         // /a and /b open, connection 1 served /a
		ts(b, 3, 12, 13, "SELECT 1"),                               // only /b
		ts(b, 3, 14, 15, "SELECT name FROM users WHERE id = 2"),    // connection 3 served /b
		ts(b, 4, 25, 26, "DELETE FROM sessions WHERE expired = 1"), // no request: background
		ts(b, 5, 31, 32, "SELECT * FROM items WHERE id = 5"),       // a cut request's
		ts(b, 5, 40.5, 41, "SELECT * FROM items WHERE id = 6"),     // after the cut, still the app's work for it
	}
	sts = append(sts, traceStmt{conn: 1, start: at(8).UnixNano(), end: at(9).UnixNano(), class: -1}) // a prepare: DB time only
	b.join(reqs, sts, 0)
	rep := b.report(SourceProxy, "")
	if rep.Requests != 2 || rep.Statements != 10 || rep.Attributed != 6 || rep.Ambiguous != 1 || rep.Unattributed != 4 {
		t.Fatalf("requests %d statements %d attributed %d ambiguous %d unattributed %d", rep.Requests, rep.Statements, rep.Attributed, rep.Ambiguous, rep.Unattributed)
	}
	if rep.Skipped["requests_cut_by_end"] != 1 || rep.Skipped["statements_of_cut_requests"] != 2 {
		t.Errorf("skipped %v", rep.Skipped)
	}
	items := fingerprint.MergedID(fingerprint.Fingerprint("SELECT * FROM items WHERE id = 1"))
	ep, c, ok := endpointClass(rep, "GET /a", items)
	if !ok || c.Mean != 4 || c.Max != 4 || ep.QueriesMean != 4 || ep.Requests != 1 {
		t.Errorf("GET /a: %+v %+v", ep, c)
	}
	if d := ep.DBTimeS; d < 0.0049 || d > 0.0051 { // four statements of 1 ms and the prepare
		t.Errorf("GET /a: DB time %v", d)
	}
	if ep.RequestTimeS != 0.01 || ep.DBShare != 0.5 {
		t.Errorf("GET /a: request %v, share %v", ep.RequestTimeS, ep.DBShare)
	}
	if np, ok := findNPlusOne(rep, "GET /a", items); !ok || np.Flagged != 1 || np.Worst != "GET /a" || !strings.Contains(np.Rewrite, "WHERE id IN (...)") {
		t.Errorf("N+1: %+v", np)
	}
	for _, cl := range rep.Classes {
		if cl.ID == items && (cl.Calls != 6 || len(cl.IDs) != 2 || len(cl.Endpoints) != 1 || cl.Endpoints[0].Calls != 4 || cl.Unattributed != 2) {
			t.Errorf("items class: %+v", cl)
		}
		if cl.ID == items && (len(cl.CutEndpoints) != 1 || cl.CutEndpoints[0] != CutEndpoint{Endpoint: "GET /a", Calls: 2, CutRequests: 1, PerRequestMin: 2, Share: 0.3333}) {
			t.Errorf("items class: the cut request's calls %+v", cl.CutEndpoints)
		}
	}
	if rep.Endpoints[0].Endpoint != "GET /a" {
		t.Errorf("worst endpoint %s", rep.Endpoints[0].Endpoint)
	}
}

// TestJoinSlack: a source whose clock is the server's (slack > 0) keeps a
// statement in the request that holds its start without the slack.
func TestJoinSlack(t *testing.T) {
	b := newBuilder(Options{})
	reqs := []Request{{Endpoint: "GET /a", Start: at(0), End: at(10)}, {Endpoint: "GET /b", Start: at(10.1), End: at(20)}}
	sts := []traceStmt{ts(b, 1, 9.95, 10.4, "SELECT 1"), ts(b, 1, 10.15, 11, "SELECT 2"), ts(b, 1, -0.1, 0.5, "SELECT 3")}
	b.join(reqs, sts, 200*time.Microsecond)
	rep := b.report(SourcePFSHistory, "")
	if rep.Attributed != 3 || rep.Ambiguous != 0 {
		t.Fatalf("%+v", rep)
	}
	for _, e := range rep.Endpoints {
		if e.QueriesMean != map[string]float64{"GET /a": 2, "GET /b": 1}[e.Endpoint] {
			t.Errorf("%s: %v queries", e.Endpoint, e.QueriesMean)
		}
	}
}

// TestUntiedTags: tags that name an endpoint but no request are counted
// per request of the access log's endpoint the route matches.
func TestUntiedTags(t *testing.T) {
	b := newBuilder(Options{RequestTimes: []RequestTime{{Method: "GET", Path: "/books/:num", Count: 4, TimeTotalS: 0.4}}})
	ts := newTagSink(b)
	for i := range 20 {
		ts.statement(rawStmt{start: at(float64(i)), end: at(float64(i) + 1), text: []byte("SELECT AVG(rating) FROM reviews WHERE book_id = 1 /*route='%2Fbooks%2F%7Bid%7D'*/"), rowsEx: 100, exKnown: true})
	}
	ts.statement(rawStmt{start: at(30), end: at(31), text: []byte("SELECT 1")})
	ts.close()
	rep := b.report(SourceSlowLogTags, tagMethod)
	if len(rep.Endpoints) != 1 || rep.Endpoints[0].Requests != 4 || rep.Endpoints[0].QueriesMean != 5 || rep.Endpoints[0].RequestTimeS != 0.1 {
		t.Fatalf("%+v", rep.Endpoints)
	}
	if len(rep.NPlusOne) != 0 {
		t.Errorf("5 per request is under N: %+v", rep.NPlusOne)
	}
	if len(rep.Notes) < 2 {
		t.Errorf("notes %q", rep.Notes)
	}
	b2 := newBuilder(Options{NPlusOne: 5, RequestTimes: []RequestTime{{Method: "GET", Path: "/books/:num", Count: 4, TimeTotalS: 0.4}}})
	ts2 := newTagSink(b2)
	for i := range 20 {
		ts2.statement(rawStmt{start: at(float64(i)), end: at(float64(i) + 1), text: []byte("SELECT AVG(rating) FROM reviews WHERE book_id = 1 /*route='%2Fbooks%2F%7Bid%7D'*/")})
	}
	ts2.close()
	rep = b2.report(SourceSlowLogTags, tagMethod)
	if len(rep.NPlusOne) != 1 || rep.NPlusOne[0].Max != -1 || rep.NPlusOne[0].PerRequest != 5 || rep.NPlusOne[0].RequestShare != 0.05 {
		t.Errorf("N+1 per request over the access log's count: %+v", rep.NPlusOne)
	}
	if p := rep.NPlusOne[0].Problem; !strings.Contains(p, "5.0 times per request") || strings.Contains(p, "up to") {
		t.Errorf("problem %q", p)
	}
}

func TestRewrite(t *testing.T) {
	cases := []struct{ q, want string }{
		{"SELECT COUNT(1) FROM relations WHERE (one = 1 AND another = 2) OR (one = 2 AND another = 1)", "load the set once per request"},
		{"SELECT COUNT(*) FROM comments WHERE entry_id = 5", "SELECT entry_id, count(*) FROM comments WHERE entry_id IN (...) GROUP BY entry_id"},
		{"SELECT AVG(rating) FROM reviews WHERE book_id = 7 /*controller:authors*/", "GROUP BY book_id"},
		{"SELECT id, name FROM users WHERE id=5", "SELECT id, name FROM users WHERE id IN (...)"},
		{"SELECT * FROM entries WHERE id = 5 LIMIT 1", "WHERE id IN (...)"},
		{"SELECT * FROM t WHERE a = 1 AND b = 2", "one query for all the rows (the changing key"},
		{"INSERT INTO footprints (user_id, owner_id) VALUES (1, 2)", "one multi-row INSERT INTO footprints"},
		{"UPDATE items SET stock = stock - 1 WHERE id = 4", "WHERE id IN (...)"},
		{"DELETE FROM carts WHERE id = 4", "carts ... WHERE id IN (...)"},
		{"SELECT c.id FROM comments c JOIN entries e ON c.entry_id = e.id WHERE e.user_id = 1", "load the rows in one query"},
	}
	for _, c := range cases {
		if got := Rewrite(fingerprint.Fingerprint(c.q), c.q); !strings.Contains(got, c.want) {
			t.Errorf("Rewrite(%q) = %q, want it to say %q", c.q, got, c.want)
		}
	}
}

// TestNameEndpoints groups a trace run's paths as the access log's
// profile does, seeded with its learned groups.
func TestNameEndpoints(t *testing.T) {
	reqs := []Request{{Method: "GET", Path: "/"}, {Method: "GET", Path: "/items/12"}, {Method: "GET", Path: "/items/13"},
		{Method: "GET", Path: "/profile/alice"}, {Method: "POST", Path: "/profile/bob"}}
	if err := nameEndpoints(reqs, []string{"/profile/:name"}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /", "GET /items/:num", "GET /items/:num", "GET /profile/:name", "POST /profile/:name"}
	for i, r := range reqs {
		if r.Endpoint != want[i] {
			t.Errorf("%s %s: %q, want %q", r.Method, r.Path, r.Endpoint, want[i])
		}
	}
}

// TestNameEndpointsFromShapes: a short trace run sees a few accounts on
// a page; the scenario's paths say the segment is a value, so they are
// one endpoint, not one row per account.
func TestNameEndpointsFromShapes(t *testing.T) {
	reqs := []Request{{Method: "GET", Path: "/diary/entries/alice"}, {Method: "GET", Path: "/diary/entries/bob"},
		{Method: "GET", Path: "/diary/entries/carol"}, {Method: "GET", Path: "/diary/entry/3/comments"}, {Method: "GET", Path: "/friends"}}
	shapes := [][]string{{"diary", "entries", ""}, {"diary", "entry", "", "comments"}}
	if err := nameEndpoints(reqs, nil, httpprof.ShapePatterns(shapes)); err != nil {
		t.Fatal(err)
	}
	// Numbers keep their type, as the access log's profile names them.
	want := []string{"GET /diary/entries/:name", "GET /diary/entries/:name", "GET /diary/entries/:name", "GET /diary/entry/:num/comments", "GET /friends"}
	for i, r := range reqs {
		if r.Endpoint != want[i] {
			t.Errorf("%s %s: %q, want %q", r.Method, r.Path, r.Endpoint, want[i])
		}
	}
}
