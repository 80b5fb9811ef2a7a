package diagnose

import (
	"context"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/fixplan"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// refStack is the reference app on a sandbox MariaDB (its compiled-in
// defaults: the capture changes the slow-log variables), restartable on
// one address, connected through a proxy or not.
type refStack struct {
	db   *sandbox.MariaDB
	root *sql.DB
	cfg  refapp.Config
	mu   sync.Mutex
	app  *refapp.Server
	tap  *reqtrace.Tap
}

func startRefStack(t *testing.T, proxy, tags bool) *refStack {
	t.Helper()
	ctx := context.Background()
	s := &refStack{db: sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ServerDefaults: true})}
	s.root = refapptest.Load(t, s.db, 0)
	dsn := s.db.DSN("refapp")
	if proxy {
		s.tap = reqtrace.NewTap()
		p, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Network: "unix", Address: s.db.Socket(), OnStatement: s.tap.Statement})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		dsn, _ = p.DSN(dsn)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = refapp.Config{DSN: dsn, Listen: ln.Addr().String()}
	ln.Close()
	if tags {
		s.cfg.SQLTags = true
	}
	if err := s.restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.app.Close()
	})
	return s
}

// restart starts the app again on its address: new connections.
func (s *refStack) restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.app != nil {
		s.app.Close()
	}
	var err error
	s.app, err = refapp.Start(context.Background(), s.cfg)
	return err
}

func (s *refStack) url() string { return "http://" + s.cfg.Listen }

// checkMeasuredHome checks a diagnosis's home page: the friend check n
// times in every request, measured, flagged as an N+1 with its rewrite,
// in the audit too.
func checkMeasuredHome(t *testing.T, res *Result, endpoint string, n int) {
	t.Helper()
	rep := res.Requests
	if rep == nil {
		t.Fatalf("no per-request view; notes %q", res.Notes)
	}
	found := false
	for _, e := range rep.Endpoints {
		if e.Endpoint != endpoint {
			continue
		}
		for _, c := range e.Classes {
			if c.ID == refapptest.IsFriendID {
				found = true
				if e.Requests < 2 || c.Mean != float64(n) || c.Max != int64(n) {
					t.Errorf("%s: %d requests, the friend check %v per request (max %d), want %d", endpoint, e.Requests, c.Mean, c.Max, n)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no friend check under %s: %+v", endpoint, rep.Endpoints)
	}
	var n1 *nplusone.Pattern
	for i := range res.NPlusOne {
		if res.NPlusOne[i].Endpoint == endpoint && strings.Contains(res.NPlusOne[i].Fingerprint, "from relations where (one = ? and another = ?)") {
			n1 = &res.NPlusOne[i]
		}
	}
	if n1 == nil || n1.Source != EndpointMeasured || n1.PerRequest != float64(n) || n1.Max != int64(n) || n1.Rewrite == "" ||
		n1.EndpointShare < 0.5 || n1.Calls == 0 || !strings.Contains(n1.Problem, "Rewrite: load the set once per request") {
		t.Errorf("N+1 of %s: %+v", endpoint, n1)
	}
	audited := false
	for _, f := range res.Audit.Findings {
		if f.ID == "app-n-plus-one" && strings.Contains(f.Title, endpoint) && strings.Contains(f.Title, "relations") {
			audited = true
		}
	}
	if !audited {
		t.Errorf("the audit has no app-n-plus-one finding for %s", endpoint)
	}
	for _, c := range res.Classes {
		if strings.Contains(c.Fingerprint, "from relations where (one = ? and another = ?)") && (c.Endpoint != endpoint || c.EndpointSource != EndpointMeasured || c.CallsPerRequest != float64(n)) {
			t.Errorf("the friend check's class: %+v", c)
		}
	}
}

// TestDiagnoseTraceRefapp is `stacktune diagnose` with a trace run
// through the proxy on the reference app: after the diagnosis run, the
// scenario's requests one at a time; the home page's per-row friend check
// is reported as N per request, N the checks of the page the app renders.
func TestDiagnoseTraceRefapp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and the reference app, and a throwaway MariaDB for the proof")
	}
	s := startRefStack(t, true, false)
	const me = 9
	var sampler appcpu.Sampler
	if _, err := exec.LookPath("perf"); err == nil {
		sampler = appcpu.NewPerf(appcpu.PerfOptions{PIDs: []int{os.Getpid()}})
	}
	n := refapptest.ExpectedChecks(t, s.root, s.url(), me)
	before := globals(t, s.db.DB())
	res, err := Run(context.Background(), Options{
		DSN: s.db.DSN("refapp"),
		Bench: benchrun.Options{Scenario: refapptest.Scenario(t, s.url(), []int{me}, true),
			Load: loadgen.Options{Connections: 2, Duration: 3 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		AppRestart: s.restart, AppRestartName: "restart the app",
		Database: "refapp", ProofRuns: 1, IndexClasses: 1,
		Requests: RequestOptions{Trace: TraceProxy, Tap: s.tap, TraceDuration: 3 * time.Second, Sampler: sampler},
		Progress: func(l string) { t.Log(l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	sameGlobals(t, before, globals(t, s.db.DB()))
	if res.Requests == nil || res.Requests.Source != reqtrace.SourceProxy || res.Requests.Concurrency != 1 {
		t.Fatalf("per-request view %+v", res.Requests)
	}
	checkMeasuredHome(t, res, "GET /", n)
	// diagnose --profile: the trace run sampled (perf on this process,
	// where the app runs), the home page's CPU beside its SQL.
	if sampler != nil {
		p := res.Requests.Profile
		if p == nil || p.Sampler != "perf" || p.Attributed == 0 {
			t.Fatalf("profile %+v", p)
		}
		for _, e := range res.Requests.Endpoints {
			if e.Endpoint == "GET /" && (e.Usage == nil || e.AppCPUMsPerRequest <= 0 || e.DBMsPerRequest <= 0 || len(e.TopFunctions) == 0) {
				t.Errorf("GET /: %+v", e.Usage)
			}
		}
	}
}

// TestDiagnoseTagsRefapp: the app tags its statements (sqlcommenter);
// the diagnosis run, eight connections at once, is read back by tags from
// the slow log it captured, with no trace run.
func TestDiagnoseTagsRefapp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and the reference app, and a throwaway MariaDB for the proof")
	}
	s := startRefStack(t, false, true)
	const me = 23
	n := refapptest.ExpectedChecks(t, s.root, s.url(), me)
	var mu sync.Mutex
	homes := 0
	res, err := Run(context.Background(), Options{
		DSN: s.db.DSN("refapp"),
		Bench: benchrun.Options{Scenario: refapptest.Scenario(t, s.url(), []int{me}, true),
			Load: loadgen.Options{Connections: 8, Duration: 3 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		AppRestart: s.restart, AppRestartName: "restart the app",
		Database: "refapp", ProofRuns: 1, IndexClasses: 1,
		Requests: RequestOptions{OnRequest: func(rc reqtrace.RequestCalls) {
			if rc.Endpoint != "GET /{$}" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			homes++
			if rc.Calls[refapptest.IsFriendID] != int64(n) {
				t.Errorf("request %s: %d friend checks, want %d", rc.Request, rc.Calls[refapptest.IsFriendID], n)
			}
		}},
		Progress: func(l string) { t.Log(l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == nil || res.Requests.Source != reqtrace.SourceSlowLogTags || res.Bench.Connections != 8 {
		t.Fatalf("per-request view %+v", res.Requests)
	}
	if homes < 8 {
		t.Errorf("%d home pages", homes)
	}
	checkMeasuredHome(t, res, "GET /{$}", n)
	// The home page's friend check per row: the one query that replaces
	// it, read from one request's calls in the captured slow log before
	// it was trimmed, answers every call the same on the server.
	fp := strings.TrimSpace(fingerprint.Fingerprint(refapptest.QIsFriend))
	var rw *fixplan.Rewrite
	for k, v := range res.Rewrites {
		if strings.TrimSpace(k) == fp {
			rw = v
		}
	}
	if rw == nil || rw.Check != fixplan.CheckSameRows || rw.Calls != n || !strings.HasPrefix(rw.Query, "SELECT one, another FROM relations WHERE (one = 23 AND another IN (") {
		t.Errorf("the friend check's one query: %+v (rewrites %v)", rw, res.Rewrites)
	}
}
