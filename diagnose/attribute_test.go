package diagnose

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stacktune/stacktune/digest"
)

func TestNNLS(t *testing.T) {
	cases := []struct {
		name string
		cols [][]float64
		y    []float64
		want []float64
	}{
		{"exact", [][]float64{{1, 2, 3, 4}, {4, 1, 0, 2}}, []float64{1*2 + 4*3, 2*2 + 1*3, 3 * 2, 4*2 + 2*3}, []float64{2, 3}},
		{"negative clamped to zero", [][]float64{{1, 2, 3, 4}, {1, 1, 1, 1}}, []float64{4, 3, 2, 1}, []float64{0, 2.5}},
		{"zero column", [][]float64{{0, 0, 0}, {1, 2, 3}}, []float64{2, 4, 6}, []float64{0, 2}},
	}
	for _, c := range cases {
		got := nnls(c.cols, c.y)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-6 {
				t.Errorf("%s: nnls = %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestAttribute: three endpoints picked at random each second, one
// running a class 30 times per request, one once, one never, plus a
// steady background: the fit finds each endpoint's calls per request.
func TestAttribute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 30
	w := window{since: time.Unix(1000, 0), step: time.Second, n: n}
	w.until = w.since.Add(n * time.Second)
	reqs := &requestSeries{counts: map[string][]float64{"GET /friends": make([]float64, n), "GET /item": make([]float64, n), "GET /home": make([]float64, n)}}
	nplus1, scan := make([]float64, n), make([]float64, n)
	for i := range n {
		for range 60 { // 60 requests a second, pages by weight
			switch r := rng.IntN(7); {
			case r < 2:
				reqs.counts["GET /friends"][i]++
				nplus1[i] += 30
			case r < 4:
				reqs.counts["GET /item"][i]++
				scan[i]++
			default:
				reqs.counts["GET /home"][i]++
			}
		}
		nplus1[i] += 5 // a background job
	}
	classes := []digest.Class{{ID: "N1", Fingerprint: "select * from users where id = ?", TimeAvg: 0.0001}, {ID: "SCAN", Fingerprint: "select * from items where code = ?", TimeAvg: 0.01}}
	a := attribute(classes, map[string][]float64{"N1": nplus1, "SCAN": scan}, reqs, w)
	if len(a.Classes) != 2 || a.Buckets != n {
		t.Fatalf("attribution %+v", a)
	}
	n1 := a.Classes[0]
	if len(n1.Endpoints) != 1 || n1.Endpoints[0].Endpoint != "GET /friends" || math.Abs(n1.Endpoints[0].CallsPerRequest-30) > 0.5 || n1.R2 < 0.99 {
		t.Errorf("N+1 class: %+v", n1)
	}
	if math.Abs(n1.Background-5*n/sum(nplus1)) > 0.01 {
		t.Errorf("N+1 background %v, want %v", n1.Background, 5*n/sum(nplus1))
	}
	sc := a.Classes[1]
	if len(sc.Endpoints) != 1 || sc.Endpoints[0].Endpoint != "GET /item" || math.Abs(sc.Endpoints[0].Share-1) > 0.02 {
		t.Errorf("scan class: %+v", sc)
	}
	if math.Abs(sc.Endpoints[0].TimeS-0.01*sum(scan)) > 0.01*0.02*sum(scan) {
		t.Errorf("scan class time %v, want about %v", sc.Endpoints[0].TimeS, 0.01*sum(scan))
	}
}

func TestAttributeTooFewSteps(t *testing.T) {
	w := window{since: time.Unix(1000, 0), step: time.Second, n: 2}
	reqs := &requestSeries{counts: map[string][]float64{"GET /": {3, 4}}}
	a := attribute([]digest.Class{{ID: "A"}}, map[string][]float64{"A": {1, 2}}, reqs, w)
	if a.Classes[0].Note == "" || len(a.Classes[0].Endpoints) != 0 {
		t.Errorf("%+v", a.Classes[0])
	}
}

func TestWindow(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 600e6, time.UTC)
	w := newWindow(start, start.Add(2500*time.Millisecond), time.Second)
	if w.n != 4 || !w.since.Equal(start.Truncate(time.Second)) {
		t.Fatalf("%+v", w)
	}
	for _, c := range []struct {
		at   time.Time
		want int
	}{{start.Truncate(time.Second), 0}, {start.Add(time.Second), 1}, {start.Add(-time.Second), -1}, {w.until, -1}, {w.until.Add(-time.Nanosecond), 3}} {
		if got := w.index(c.at); got != c.want {
			t.Errorf("index(%v) = %d, want %d", c.at, got, c.want)
		}
	}
}

func TestCapturePlan(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		want []setting
	}{
		{"MariaDB defaults", map[string]string{"slow_query_log": "OFF", "long_query_time": "10.000000", "log_slow_verbosity": "", "log_output": "FILE",
			"log_slow_rate_limit": "1", "min_examined_row_limit": "0", "log_slow_filter": "admin,filesort,filesort_on_disk,filesort_priority_queue,full_join,full_scan,query_cache,query_cache_miss,tmp_table,tmp_table_on_disk"},
			[]setting{{"long_query_time", "0.000000"}, {"log_slow_verbosity", "query_plan"}, {"slow_query_log", "ON"}}},
		{"MariaDB tuned down", map[string]string{"slow_query_log": "ON", "long_query_time": "2.000000", "log_slow_verbosity": "innodb", "log_output": "TABLE",
			"log_slow_rate_limit": "10", "min_examined_row_limit": "100", "log_slow_filter": "filesort"},
			[]setting{{"log_output", "TABLE,FILE"}, {"long_query_time", "0.000000"}, {"log_slow_verbosity", "innodb,query_plan"}, {"log_slow_rate_limit", "1"},
				{"min_examined_row_limit", "0"}, {"log_slow_filter", "DEFAULT"}}},
		{"MySQL 8", map[string]string{"slow_query_log": "OFF", "long_query_time": "10.000000", "log_output": "NONE", "log_slow_extra": "OFF", "min_examined_row_limit": "0"},
			[]setting{{"log_output", "FILE"}, {"long_query_time", "0.000000"}, {"log_slow_extra", "ON"}, {"slow_query_log", "ON"}}},
		{"already capturing", map[string]string{"slow_query_log": "ON", "long_query_time": "0.000000", "log_output": "FILE,TABLE", "log_slow_verbosity": "query_plan,explain"}, nil},
	}
	for _, c := range cases {
		if got := capturePlan(c.vars); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: plan %v, want %v", c.name, got, c.want)
		}
	}
}

func TestConnGroups(t *testing.T) {
	cs := []Conn{{ID: 3, User: "app", Host: "10.0.0.5", AgeAtLeastS: 30}, {ID: 4, User: "web", Host: "localhost"}, {ID: 7, User: "app", Host: "10.0.0.5", AgeAtLeastS: 50}}
	got := groupConns(cs)
	want := []ConnGroup{{User: "app", Host: "10.0.0.5", Count: 2, IDs: []int64{3, 7}, AgeAtLeastS: 50}, {User: "web", Host: "localhost", Count: 1, IDs: []int64{4}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %+v", got)
	}
	if hostOnly("10.0.0.5:51234") != "10.0.0.5" || hostOnly("localhost") != "localhost" || hostOnly("[::1]:3306") != "::1" {
		t.Error("hostOnly")
	}
	for _, r := range []procRow{{Conn: Conn{User: "system user"}}, {Conn: Conn{User: "event_scheduler", Command: "Daemon"}}, {Conn: Conn{User: "repl", Command: "Binlog Dump GTID"}}} {
		if !serverThread(r) {
			t.Errorf("%+v is the server's", r)
		}
	}
	if serverThread(procRow{Conn: Conn{User: "app", Command: "Sleep"}}) {
		t.Error("an app's idle connection is not the server's")
	}
}
