package httpprof

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/accesslog"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func rec(method, uri string, status int, reqTime float64, at time.Time) accesslog.Record {
	return accesslog.Record{Time: at, Method: []byte(method), URI: []byte(uri), Status: status, BodyBytes: 100,
		RequestTime: reqTime, Has: accesslog.HasTime | accesslog.HasStatus | accesslog.HasBytes | accesslog.HasRequestTime}
}

// isuconLog is a synthetic ISUCON5-like request stream: a dozen routes, user
// names and numeric ids in paths, static files.
func isuconLog(n int) []accesslog.Record {
	rng := rand.New(rand.NewPCG(3, 4))
	var out []accesslog.Record
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		user := fmt.Sprintf("user%03d", rng.IntN(300))
		var r accesslog.Record
		switch rng.IntN(10) {
		case 0:
			r = rec("GET", "/", 200, 0.200, at)
		case 1:
			r = rec("GET", "/profile/"+user, 200, 0.050, at)
		case 2:
			r = rec("GET", "/diary/entries/"+user, 200, 0.040, at)
		case 3:
			r = rec("GET", fmt.Sprintf("/diary/entry/%d", rng.IntN(50000)), 200, 0.010, at)
		case 4:
			r = rec("POST", fmt.Sprintf("/diary/comment/%d", rng.IntN(50000)), 302, 0.020, at)
		case 5:
			r = rec("GET", "/friends", 200, 0.300, at)
		case 6:
			r = rec("GET", "/footprints", 200, 0.030, at)
		case 7:
			r = rec("GET", "/css/bootstrap.min.css", 200, 0.001, at)
		case 8:
			r = rec("POST", "/login", 302, 0.005, at)
		default:
			r = rec("GET", "/friends/"+user, 200, 0.015, at)
		}
		r.Offset = int64(i * 100)
		out = append(out, r)
	}
	return out
}

func profileOf(t *testing.T, recs []accesslog.Record, opt Options) *Report {
	t.Helper()
	p := NewProfiler(opt)
	for i := range recs {
		p.Add(&recs[i])
	}
	r, err := p.Report(ReportOptions{Sort: "path"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func keys(r *Report) []string {
	var out []string
	for _, e := range r.Endpoints {
		out = append(out, e.Method+" "+e.Path)
	}
	sort.Strings(out)
	return out
}

func TestGroupingLearnsEndpoints(t *testing.T) {
	r := profileOf(t, isuconLog(20000), Options{})
	want := []string{
		"GET /", "GET /css/bootstrap.min.css", "GET /diary/entries/:name", "GET /diary/entry/:num",
		"GET /footprints", "GET /friends", "GET /friends/:name", "GET /profile/:name", "POST /diary/comment/:num", "POST /login",
	}
	if got := keys(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("endpoints:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var learned []string
	for _, g := range r.GroupsLearned {
		learned = append(learned, g.Pattern)
		if g.Distinct <= DefaultGroupThreshold || len(g.Examples) == 0 {
			t.Errorf("group %s: distinct %d examples %v", g.Pattern, g.Distinct, g.Examples)
		}
	}
	sort.Strings(learned)
	if strings.Join(learned, " ") != "/diary/entries/:name /friends/:name /profile/:name" {
		t.Errorf("learned %v", learned)
	}
	var total int64
	for _, e := range r.Endpoints {
		total += e.Count
	}
	if total != 20000 || r.Overall.Requests != 20000 {
		t.Errorf("requests %d / %d, want 20000: a collapse lost counts", total, r.Overall.Requests)
	}
	if r.Overall.Static.Requests == 0 || r.Overall.Static.RequestShare > 0.2 {
		t.Errorf("static share %+v", r.Overall.Static)
	}
}

func TestSegmentClassification(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"/users/12345", "/users/:num"},
		{"/orders/550e8400-e29b-41d4-a716-446655440000/items", "/orders/:uuid/items"},
		{"/avatar/d41d8cd98f00b204e9800998ecf8427e.png", "/avatar/d41d8cd98f00b204e9800998ecf8427e.png"},
		{"/blob/d41d8cd98f00b204e9800998ecf8427e", "/blob/:hash"},
		{"/archive/2024-05-01", "/archive/:date"},
		{"/archive/20240501", "/archive/:date"},
		{"/archive/99999999", "/archive/:num"},
		{"/a/", "/a/"},
		{"/", "/"},
		{"", "/"},
		{"/search?q=x&page=2", "/search"},
		{"http://example.com/x/1?y", "/x/:num"},
		{"/" + strings.Repeat("z", 100), "/:long"},
		{"/deep" + strings.Repeat("/d", 40), "/deep" + strings.Repeat("/d", MaxDepth-1) + "/..."},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			r := profileOf(t, []accesslog.Record{rec("GET", tc.uri, 200, 0.1, t0)}, Options{})
			if len(r.Endpoints) != 1 || r.Endpoints[0].Path != tc.want {
				t.Errorf("got %v, want %s", keys(r), tc.want)
			}
		})
	}
}

func TestQueryKeysAndUserGroups(t *testing.T) {
	recs := []accesslog.Record{
		rec("GET", "/search?q=a&page=2", 200, 0.1, t0),
		rec("GET", "/search?page=3&q=b", 200, 0.1, t0),
		rec("GET", "/search?q=c", 200, 0.1, t0),
		rec("GET", "/api/items/abc/detail", 200, 0.1, t0),
		rec("GET", "/api/items/xyz/detail", 200, 0.1, t0),
	}
	groups, err := CompileGroups([]string{`^/api/items/[^/]+/detail$`})
	if err != nil {
		t.Fatal(err)
	}
	r := profileOf(t, recs, Options{QueryKeys: true, Groups: groups})
	want := "GET /search?page&q GET /search?q GET ^/api/items/[^/]+/detail$"
	if got := strings.Join(keys(r), " "); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := CompileGroups([]string{"("}); err == nil || !strings.Contains(err.Error(), `"("`) {
		t.Errorf("bad pattern error %v", err)
	}
}

// TestMergeIsOrderIndependent splits a stream across workers in different
// ways: the merged report must equal the single-profiler one.
func TestMergeIsOrderIndependent(t *testing.T) {
	recs := isuconLog(5000)
	want, _ := json.Marshal(profileOf(t, recs, Options{}))
	for _, workers := range []int{2, 3, 7} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			ps := make([]*Profiler, workers)
			for i := range ps {
				ps[i] = NewProfiler(Options{})
			}
			// Chunks of 100 records dealt round-robin, as FromLogs does.
			for i := range recs {
				ps[(i/100)%workers].Add(&recs[i])
			}
			for i := 1; i < workers; i++ {
				ps[0].Merge(ps[i])
			}
			r, err := ps[0].Report(ReportOptions{Sort: "path"})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(r); string(got) != string(want) {
				t.Errorf("merged report differs from the single-profiler report")
			}
		})
	}
}

func TestFiltersBoundsAndSlowest(t *testing.T) {
	recs := isuconLog(1000)
	t.Run("since and until", func(t *testing.T) {
		r := profileOf(t, recs, Options{Since: t0.Add(2 * time.Second), Until: t0.Add(4 * time.Second)})
		if r.Overall.Requests != 200 || r.Overall.Filtered != 800 {
			t.Errorf("kept %d filtered %d", r.Overall.Requests, r.Overall.Filtered)
		}
	})
	t.Run("endpoint bound", func(t *testing.T) {
		r := profileOf(t, recs, Options{MaxEndpoints: 3})
		var other *Endpoint
		for i := range r.Endpoints {
			if r.Endpoints[i].Path == "(other)" {
				other = &r.Endpoints[i]
			}
		}
		if len(r.Endpoints) != 4 || other == nil || other.Count == 0 || len(r.Notes) == 0 {
			t.Errorf("endpoints %v notes %v", keys(r), r.Notes)
		}
	})
	t.Run("slowest", func(t *testing.T) {
		r := profileOf(t, append(recs, rec("GET", "/very/slow?id=7", 500, 9.5, t0)), Options{Slowest: 3})
		if len(r.Slowest) != 3 || r.Slowest[0].URI != "/very/slow?id=7" || r.Slowest[0].RequestTime != 9.5 {
			t.Errorf("slowest %+v", r.Slowest)
		}
		for i := 1; i < len(r.Slowest); i++ {
			if r.Slowest[i].RequestTime > r.Slowest[i-1].RequestTime {
				t.Errorf("slowest not ordered: %+v", r.Slowest)
			}
		}
	})
	t.Run("percentiles", func(t *testing.T) {
		var rs []accesslog.Record
		for i := 1; i <= 1000; i++ {
			rs = append(rs, rec("GET", "/p", 200, float64(i)/1000, t0))
		}
		e := profileOf(t, rs, Options{}).Endpoints[0]
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"p50", e.TimeP50, 0.5}, {"p90", e.TimeP90, 0.9}, {"p99", e.TimeP99, 0.99}, {"max", e.TimeMax, 1}, {"min", e.TimeMin, 0.001}, {"avg", e.TimeAvg, 0.5005}} {
			if c.got < c.want*0.965 || c.got > c.want*1.035 {
				t.Errorf("%s = %v, want %v within 3.5%%", c.name, c.got, c.want)
			}
		}
	})
}

func TestDiffWithSharedGrouping(t *testing.T) {
	before := isuconLog(4000)
	after := isuconLog(4000)
	for i := range after {
		if string(after[i].URI) == "/friends" {
			after[i].RequestTime = 0.030 // the fix
		}
	}
	// B sees only a few profiles, so alone it would not learn /profile/:name.
	var fewer []accesslog.Record
	for _, r := range after {
		if !strings.HasPrefix(string(r.URI), "/profile/") || strings.HasSuffix(string(r.URI), "0") {
			fewer = append(fewer, r)
		}
	}
	a := profileOf(t, before, Options{})
	b := profileOf(t, fewer[:800], Options{Collapse: a.LearnedPatterns()})
	d := Diff(a, b)
	rows := map[string]DiffRow{}
	for _, r := range d.Endpoints {
		rows[r.Method+" "+r.Path] = r
	}
	f := rows["GET /friends"]
	if f.Status != "both" || f.P99Ratio > 0.2 || f.TimeTotalChange >= 0 {
		t.Errorf("/friends row %+v", f)
	}
	if p := rows["GET /profile/:name"]; p.Status != "both" {
		t.Errorf("/profile/:name row %+v: seeding did not share the grouping", p)
	}
	if d.Endpoints[0].Path != "/friends" && d.Endpoints[0].Path != "/" {
		t.Errorf("largest change first: got %s", d.Endpoints[0].Path)
	}
}

func TestReportOptionsValidate(t *testing.T) {
	for _, o := range []ReportOptions{{Sort: "speed"}, {Limit: -2}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestStaticShareSurvivesGrouping checks static files are counted per
// request, so a learned /static/:name still counts as static.
func TestStaticShareSurvivesGrouping(t *testing.T) {
	var recs []accesslog.Record
	for i := 0; i < 100; i++ {
		recs = append(recs, rec("GET", fmt.Sprintf("/static/app.%d.JS", i), 200, 0.001, t0))
		recs = append(recs, rec("GET", "/api/items", 200, 0.099, t0))
	}
	r := profileOf(t, recs, Options{})
	o := r.Overall
	if o.Static.Requests != 100 || o.Dynamic.Requests != 100 || o.Static.RequestShare != 0.5 {
		t.Errorf("static %+v dynamic %+v", o.Static, o.Dynamic)
	}
	if o.Static.TimeShare < 0.009 || o.Static.TimeShare > 0.011 {
		t.Errorf("static time share %v, want 0.01", o.Static.TimeShare)
	}
	for _, e := range r.Endpoints {
		if e.Path == "/static/:name" && !e.Static {
			t.Errorf("learned static endpoint not marked static: %+v", e)
		}
	}
}

// TestValues: a position the scenario fills with values groups at its
// first literal, however few values a run sees; numbers there keep their
// type; the group is reported like a learned one, so the next profile
// (the trace run's) names it the same.
func TestValues(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		name   string
		uris   []string
		values []string
		want   []string
	}{
		{"two accounts, no seed", []string{"/diary/alice", "/diary/bob"}, nil, []string{"GET /diary/alice", "GET /diary/bob"}},
		{"two accounts, seeded", []string{"/diary/alice", "/diary/bob"}, []string{"/diary/:name"}, []string{"GET /diary/:name"}},
		{"numbers keep their type", []string{"/entry/3", "/entry/4"}, []string{"/entry/:name"}, []string{"GET /entry/:num"}},
		{"a value under a value", []string{"/a/x/b/y", "/a/z/b/w"}, ShapePatterns([][]string{{"a", "", "b", ""}}), []string{"GET /a/:name/b/:name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []accesslog.Record
			for _, u := range tc.uris {
				recs = append(recs, rec("GET", u, 200, 0.1, t0))
			}
			r := profileOf(t, recs, Options{Values: tc.values})
			if got := keys(r); !slices.Equal(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			if tc.values != nil && tc.want[0] != "GET /entry/:num" && len(r.LearnedPatterns()) == 0 {
				t.Errorf("the seeded group is not reported as learned")
			}
		})
	}
}
