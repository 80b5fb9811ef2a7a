package reqtrace

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
)

// checkHome checks a report's home page against the replay: the friend
// check runs n times in every request, flagged as an N+1 with a rewrite.
func checkHome(t *testing.T, rep *Report, endpoint string, n int) {
	t.Helper()
	ep, c, ok := endpointClass(rep, endpoint, isFriendID)
	if !ok {
		t.Fatalf("no friend check under %q: %+v", endpoint, rep.Endpoints)
	}
	if ep.Requests < 2 || c.Mean != float64(n) || c.Max != int64(n) || c.Requests != ep.Requests {
		t.Errorf("%s: friend check %v per request (max %d, in %d of %d requests), want %d in every request", endpoint, c.Mean, c.Max, c.Requests, ep.Requests, n)
	}
	if ep.QueriesMean <= float64(n) || ep.DBTimeS <= 0 {
		t.Errorf("%s: %v queries, %v s of DB time per request", endpoint, ep.QueriesMean, ep.DBTimeS)
	}
	np, ok := findNPlusOne(rep, endpoint, isFriendID)
	if !ok || np.PerRequest != float64(n) || np.Max != int64(n) || np.Flagged != ep.Requests || np.Rewrite == "" || np.TimeS <= 0 {
		t.Errorf("N+1 of %s: %+v (found %v)", endpoint, np, ok)
	}
	if rep.NPlusOne[0].Endpoint != endpoint {
		t.Logf("the worst N+1 is %s %s", rep.NPlusOne[0].Endpoint, rep.NPlusOne[0].Fingerprint)
	}
}

// TestTraceRefappProxy is the trace run on the reference app through the
// proxy, one request at a time: the home page's per-row friend check is
// reported N times per request, N the friend checks of the page the app
// renders for that user, and every statement falls in a request.
func TestTraceRefappProxy(t *testing.T) {
	s := startRefStack(t, stackOptions{proxy: true})
	const me = 7
	n := expectedChecks(t, s, me)
	var mu sync.Mutex
	perRequest := map[string]int64{}
	rep, sum, err := Trace(context.Background(), TraceOptions{
		Bench: benchrun.Options{Scenario: scenarioFor(t, s.app.URL(), []int{me}, true),
			Load: loadgen.Options{Duration: 2 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		Tap: s.tap,
		Options: Options{OnRequest: func(rc RequestCalls) {
			if rc.Endpoint == "GET /" {
				mu.Lock()
				perRequest[rc.Request] = rc.Calls[isFriendID]
				mu.Unlock()
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d statements, %d attributed; run %.1f req/s", rep.Requests, rep.Statements, rep.Attributed, sum.RPS)
	checkHome(t, rep, "GET /", n)
	for r, k := range perRequest {
		if k != int64(n) {
			t.Errorf("%s: %d friend checks, want %d", r, k, n)
		}
	}
	if rep.Concurrency != 1 || rep.Source != SourceProxy || rep.Ambiguous != 0 {
		t.Errorf("report: %+v", rep)
	}
	// One at a time through the proxy: every statement is in a request
	// (those of the request the end of the run cut are not counted).
	cut := rep.Skipped["statements_of_cut_requests"]
	if rep.Unattributed != cut || rep.Attributed+cut != rep.Statements || rep.Statements == 0 {
		t.Errorf("%d statements, %d attributed, %d not (%d of cut requests)", rep.Statements, rep.Attributed, rep.Unattributed, cut)
	}
	for _, e := range rep.Endpoints {
		if e.RequestTimeS <= 0 || e.DBShare <= 0 || e.DBShare > 1.05 {
			t.Errorf("%s: request %v s, DB share %v", e.Endpoint, e.RequestTimeS, e.DBShare)
		}
	}
	if rep.RowsExamined != "" {
		t.Errorf("rows examined %q without the digest's averages", rep.RowsExamined)
	}
}

// TestTagsRefappSlowLog: the app tags its statements (sqlcommenter, with
// the traceparent of each request), eight users load their home pages at
// once, and the slow log at long_query_time=0 is read back by tags: every
// request's friend checks are its user's.
func TestTagsRefappSlowLog(t *testing.T) {
	s := startRefStack(t, stackOptions{tags: true, server: map[string]string{"slow_query_log": "ON", "long_query_time": "0"}})
	users := []int{1, 2, 3, 5, 8, 13, 21, 34}
	want := map[int]int{}
	for _, u := range users {
		want[u] = expectedChecks(t, s, u)
	}
	start, err := fileSize(s.db.SlowLogPath())
	if err != nil {
		t.Fatal(err)
	}
	traces := concurrentHomes(t, s.app.URL(), users, 3)
	end, _ := fileSize(s.db.SlowLogPath())
	checkTags(t, s, traces, want, func(opt Options) (*Report, error) {
		f, err := openFile(s.db.SlowLogPath())
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return FromSlowLog(context.Background(), []input.Input{{Name: "slow.log", R: ioSection(f, start, end)}}, opt)
	}, nil)
}

// concurrentHomes loads each user's home page rounds times, the users at
// once, each request with a traceparent of its own: trace ID → user.
func concurrentHomes(t *testing.T, base string, users []int, rounds int) map[string]int {
	t.Helper()
	traces := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				trace := fmt.Sprintf("%08x%024x", u, 1+i*100+r)
				homePage(t, base, u, trace)
				mu.Lock()
				traces[trace] = u
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return traces
}

// checkTags reads a tag report and checks every home page request of
// traces (or, when late is given, of what it returns after the read)
// against its user's friend checks.
func checkTags(t *testing.T, s *refStack, traces map[string]int, want map[int]int, read func(Options) (*Report, error), late func() map[string]int) {
	t.Helper()
	got := map[string]int64{}
	var mu sync.Mutex
	rep, err := read(Options{OnRequest: func(rc RequestCalls) {
		mu.Lock()
		defer mu.Unlock()
		if rc.Endpoint == "GET /{$}" {
			got[rc.Request] = rc.Calls[isFriendID]
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if late != nil {
		traces = late()
	}
	most, total := 0, 0
	for trace, u := range traces {
		if k, ok := got["trace:"+trace]; !ok || k != int64(want[u]) {
			t.Errorf("request %s of user %d: %d friend checks (found %v), want %d", trace, u, k, ok, want[u])
		}
		most = max(most, want[u])
		total += want[u]
	}
	ep, c, ok := endpointClass(rep, "GET /{$}", isFriendID)
	if !ok || ep.Requests != int64(len(traces)) || c.Max != int64(most) || c.Mean != round(float64(total)/float64(len(traces)), 2) {
		t.Errorf("GET /{$}: %d requests, friend check mean %v max %d; want %d, %v, %d", ep.Requests, c.Mean, c.Max, len(traces),
			round(float64(total)/float64(len(traces)), 2), most)
	}
	if np, ok := findNPlusOne(rep, "GET /{$}", isFriendID); !ok || np.Max != int64(most) || np.Flagged != int64(len(traces)) {
		t.Errorf("N+1: %+v", np)
	}
	if rep.RowsExamined != "measured" || ep.RowsExaminedMean <= 0 {
		t.Errorf("rows examined %q, %v per request", rep.RowsExamined, ep.RowsExaminedMean)
	}
	t.Logf("%d requests, %d statements (%d attributed); notes %v", rep.Requests, rep.Statements, rep.Attributed, rep.Notes)
}
