package diagnose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/reqtrace"
)

// fixtureEnv names a file TestDiagnoseStack writes its result to as JSON:
// report's fixture is refreshed with
//
//	STACKTUNE_DIAGNOSE_FIXTURE=$PWD/report/testdata/diagnose/result.json go test ./diagnose -run TestDiagnoseStack
//
// (then go test ./report -run Diagnose -update, and review the goldens).
const fixtureEnv = "STACKTUNE_DIAGNOSE_FIXTURE"

// TestDiagnoseStack diagnoses the test stack (MariaDB, the test app
// behind nginx) during one scenario run and checks what the report ranks:
// the page with the scan first, its class first with the index proven for
// it, the N+1 class with its page, the connection held open from before
// the change listed as not captured (the app's own were reopened by
// AppRestart), and every global variable as it was.
func TestDiagnoseStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, nginx and a throwaway MariaDB for the proof")
	}
	s := startTestStack(t, nil)
	ctx := context.Background()
	held, err := openOwn(ctx, fmt.Sprintf("held:held@tcp(127.0.0.1:%d)/shop", s.db.Port()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	hold, err := held.Conn(ctx) // a pooled connection opened before the change, kept open
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	// The app talks to the server through the trace run's proxy.
	tap := reqtrace.NewTap()
	proxy, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Network: "tcp", Address: fmt.Sprintf("127.0.0.1:%d", s.db.Port()), OnStatement: tap.Statement})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	if s.app.dsn, err = proxy.DSN(s.app.dsn); err != nil {
		t.Fatal(err)
	}
	if err := s.app.restart(ctx); err != nil {
		t.Fatal(err)
	}
	before := globals(t, s.db.DB())

	res, err := Run(ctx, Options{
		DSN:        s.db.DSN(""),
		Bench:      benchrun.Options{Scenario: s.scenario, Load: loadgen.Options{Connections: 4, Duration: 8 * time.Second, KeepAlive: true, Timeout: 10 * time.Second}},
		Collect:    collect.Config{Values: map[string]string{"nginx-conf": s.nginx.ConfigPath()}},
		AppRestart: s.app.restart, AppRestartName: "the test app's restart",
		Database: "shop", ProofRuns: 3,
		Requests: RequestOptions{Trace: TraceProxy, Tap: tap, TraceDuration: 3 * time.Second},
		Progress: func(l string) { t.Log(l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(fixtureEnv) != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		os.WriteFile(os.Getenv(fixtureEnv), b, 0o644)
	}
	sameGlobals(t, before, globals(t, s.db.DB()))
	if !res.Capture.Restored || len(res.Capture.Changed) == 0 {
		t.Errorf("capture %+v", res.Capture)
	}
	if res.Bench == nil || !res.Bench.Passed || res.CapacityS <= 0 {
		t.Fatalf("bench %+v", res.Bench)
	}

	if len(res.Endpoints) < 3 || res.Endpoints[0].Path != "/item" || res.Endpoints[0].TimeS <= 0 {
		t.Errorf("endpoints: %+v", res.Endpoints)
	}
	if len(res.Classes) == 0 || !strings.Contains(res.Classes[0].Fingerprint, "from items where code = ?") {
		t.Fatalf("classes: %+v", res.Classes)
	}
	top := res.Classes[0]
	if top.CapacityShare <= 0 || top.CapacityShare > 1 {
		t.Errorf("the scan's share of wall time × connections: %v", top.CapacityShare)
	}
	if len(top.Indexes) == 0 || !strings.Contains(top.Indexes[0], "`code`") {
		t.Errorf("no proven index on items.code: %+v (proposals %+v, error %q)", top, res.Indexes.Proposals, res.IndexError)
	}
	if top.Endpoint != "GET /item" || top.EndpointSource != EndpointMeasured || top.CallsPerRequest != 1 {
		t.Errorf("the scan's endpoint is %q (%s, %v per request), want GET /item, measured, 1 (%+v)", top.Endpoint, top.EndpointSource, top.CallsPerRequest, res.Requests)
	}
	if res.Attribution == nil || !strings.HasPrefix(res.Attribution.Method, "fallback") {
		t.Errorf("the estimate is not labelled as the fallback: %+v", res.Attribution)
	}
	if len(res.Hotspots) == 0 || res.Hotspots[0].What != "GET /item" {
		t.Errorf("hotspots %+v", res.Hotspots)
	}

	var n1 *nplusone.Pattern
	for i := range res.NPlusOne {
		if strings.Contains(res.NPlusOne[i].Fingerprint, "from users where id = ?") {
			n1 = &res.NPlusOne[i]
		}
	}
	switch {
	case n1 == nil:
		t.Errorf("no N+1 pattern on users: %+v", res.NPlusOne)
	case n1.Endpoint != "GET /friends" || n1.PerRequest != friendsShown || n1.Max != friendsShown || n1.Source != EndpointMeasured || n1.Rewrite == "":
		t.Errorf("N+1 %+v: want GET /friends, %d calls in every request, measured", n1, friendsShown)
	}
	for _, n := range res.NPlusOne {
		if n.Endpoint != "GET /friends" {
			t.Errorf("an N+1 outside /friends: %+v", n)
		}
	}

	cc := res.ConnCheck
	if cc == nil {
		t.Fatal("no connection check")
	}
	var heldSeen, appSeen bool
	for _, c := range cc.Uncaptured {
		heldSeen = heldSeen || c.User == "held"
		appSeen = appSeen || c.User == "app"
	}
	if !heldSeen || appSeen || cc.Restart == "" || cc.BeforeRestart <= len(cc.Uncaptured) || !strings.Contains(cc.Fix, "connection(s)") {
		t.Errorf("connection check %+v", cc)
	}
	for _, g := range cc.Groups {
		if g.User == "held" && (g.Host != "127.0.0.1" || g.Count != 1) {
			t.Errorf("group %+v", g)
		}
	}
	if res.Audit == nil || res.Snapshot == nil || res.Snapshot.MySQL == nil {
		t.Fatalf("audit %v snapshot %v", res.Audit, res.Snapshot)
	}
	if v := res.Snapshot.MySQL.Variables["long_query_time"]; v != "0.000000" {
		t.Errorf("the snapshot was taken during the capture: long_query_time %q", v)
	}
}

// TestRestoreOnFailure: whatever stops the run after the capture's change
// (a failure in the middle of the bench, Ctrl-C, the app's restart
// failing, a failure after the bench), every global variable reads as it
// did before. The server starts with the slow log on (to a table) and
// tuned down, so the capture changes five variables (slow_query_log is on
// already): log_output, long_query_time, log_slow_verbosity,
// log_slow_rate_limit and min_examined_row_limit.
func TestRestoreOnFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB")
	}
	s := startTestStack(t, map[string]string{"slow_query_log": "ON", "long_query_time": "2.5", "log_slow_verbosity": "innodb",
		"log_slow_rate_limit": "3", "min_examined_row_limit": "5", "log_output": "TABLE"})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	defer web.Close()
	boom := errors.New("injected failure")
	cases := []struct {
		name    string
		stage   string
		cancel  bool // Ctrl-C: the run's context is cancelled
		restart error
		want    string
	}{
		{name: "failure after the change", stage: stageChanged, want: boom.Error()},
		{name: "failure mid-run", stage: stageBench, want: boom.Error()},
		{name: "Ctrl-C mid-run", stage: stageBench, cancel: true, want: "context canceled"},
		{name: "app restart fails", restart: boom, want: ""},
		{name: "failure after the bench", stage: stageAnalyse, want: boom.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := globals(t, s.db.DB())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stages := []string{}
			opt := Options{
				DSN:        s.db.DSN(""),
				Bench:      benchrun.Options{URL: web.URL, Load: loadgen.Options{Connections: 2, Duration: 3 * time.Second, KeepAlive: true}},
				Collect:    collect.Config{Values: map[string]string{"no-linux": "true"}},
				AppRestart: func(context.Context) error { return c.restart },
				hook: func(stage string) error {
					stages = append(stages, stage)
					if stage != c.stage {
						return nil
					}
					if c.cancel {
						cancel()
						return nil
					}
					return boom
				},
			}
			if c.stage == "" {
				opt.hook = func(stage string) error {
					if stage == stageAnalyse {
						return boom // stop before the index proof: the restart's failure is a note
					}
					return nil
				}
			}
			res, err := Run(ctx, opt)
			switch {
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err = %v, want %q", err, c.want)
			case c.want == "" && c.restart != nil && (res == nil || res.ConnCheck == nil || !strings.Contains(res.ConnCheck.Error, boom.Error())):
				t.Errorf("the restart's failure is not said: %+v", res)
			}
			sameGlobals(t, before, globals(t, s.db.DB()))
			if res == nil || !res.Capture.Restored || len(res.Capture.Changed) != 5 || len(res.Capture.Leftovers) != 0 {
				t.Fatalf("capture %+v (stages %v)", res.Capture, stages)
			}
			for _, ch := range res.Capture.Changed {
				if ch.After != ch.Before || ch.During == ch.Before {
					t.Errorf("%+v", ch)
				}
			}
		})
	}
}

// TestRefusedBeforeChanging: what can be checked first is, and nothing
// changes on the server.
func TestRefusedBeforeChanging(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB")
	}
	s := startTestStack(t, nil)
	before := globals(t, s.db.DB())
	load := loadgen.Options{Connections: 2, Duration: 2 * time.Second}
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"no duration", Options{DSN: s.db.DSN(""), Bench: benchrun.Options{URL: "http://127.0.0.1:1/"}}, "duration"},
		{"slow log elsewhere", Options{DSN: s.db.DSN(""), SlowLog: "/nonexistent/dir/slow.log", Bench: benchrun.Options{URL: "http://127.0.0.1:1/", Load: load}}, "cannot be read here"},
		{"access log missing", Options{DSN: s.db.DSN(""), AccessLogs: []string{"/nonexistent/access.log"}, Bench: benchrun.Options{URL: "http://127.0.0.1:1/", Load: load}}, "access log"},
		{"performance_schema off", Options{DSN: s.db.DSN(""), Source: SourcePFS, Bench: benchrun.Options{URL: "http://127.0.0.1:1/", Load: load}}, "performance_schema"},
		{"bad scenario", Options{DSN: s.db.DSN(""), Bench: benchrun.Options{Scenario: "/nonexistent.yaml", Load: load}}, "nonexistent"},
	}
	for _, c := range cases {
		_, err := Run(context.Background(), c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	sameGlobals(t, before, globals(t, s.db.DB()))
}

// TestDiagnosePFS reads performance_schema's digests instead of the slow
// log: nothing is set on the server, no connection needs to reconnect,
// and the classes are still ranked (without endpoints: no per-query
// times).
func TestDiagnosePFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, nginx and a throwaway MariaDB for the proof")
	}
	s := startTestStack(t, map[string]string{"performance_schema": "ON"})
	before := globals(t, s.db.DB())
	res, err := Run(context.Background(), Options{
		DSN: s.db.DSN(""), Source: SourcePFS,
		Bench:    benchrun.Options{URL: s.nginx.URL() + "item?code=7", Load: loadgen.Options{Connections: 2, Duration: 3 * time.Second, KeepAlive: true}},
		Collect:  collect.Config{Values: map[string]string{"nginx-conf": s.nginx.ConfigPath(), "no-linux": "true"}},
		Database: "shop", IndexClasses: 1, ProofRuns: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	sameGlobals(t, before, globals(t, s.db.DB()))
	if len(res.Capture.Changed) != 0 || !res.Capture.Restored || res.ConnCheck != nil || res.Attribution != nil {
		t.Errorf("capture %+v, connections %+v, attribution %+v", res.Capture, res.ConnCheck, res.Attribution)
	}
	if res.Digest == nil || res.Digest.Source != "performance_schema" || len(res.Classes) == 0 || !strings.Contains(res.Classes[0].Fingerprint, "from `items` where `code` = ?") && !strings.Contains(res.Classes[0].Fingerprint, "from items where code = ?") {
		t.Fatalf("digest %+v classes %+v", res.Digest, res.Classes)
	}
	if len(res.Endpoints) != 1 || res.Endpoints[0].Path != "/item" {
		t.Errorf("endpoints %+v", res.Endpoints)
	}
}
