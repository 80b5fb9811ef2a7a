package reqtrace

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// profiledApp is the reference app with its profiling pages, in a
// process of its own, its statements through the proxy.
type profiledApp struct {
	url string
	pid int
	tap *Tap
}

func startProfiledApp(t *testing.T) profiledApp {
	t.Helper()
	ctx := context.Background()
	db := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if _, err := db.DB().ExecContext(ctx, "CREATE DATABASE refapp"); err != nil {
		t.Fatal(err)
	}
	tap := NewTap()
	proxy, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Network: "unix", Address: db.Socket(), OnStatement: tap.Statement})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	dsn, err := proxy.DSN(db.DSN("refapp"))
	if err != nil {
		t.Fatal(err)
	}
	url, pid := refapptest.StartProcess(t, refapp.Config{DSN: dsn, Profiling: true})
	return profiledApp{url: url, pid: pid, tap: tap}
}

// workScenario alternates the page that burns CPU and the page that
// waits on SQL.
func workScenario(t *testing.T, base string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "work.yaml")
	sc := "name: work\nbase_url: " + base + "\nsteps:\n  - name: burn\n    url: /work/burn\n    expect: {status: 200}\n  - name: wait\n    url: /work/wait\n    expect: {status: 200}\n"
	if err := os.WriteFile(p, []byte(sc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// selfReport is the app's own measure of its pages.
func selfReport(t *testing.T, base string) refapp.SelfReport {
	t.Helper()
	resp, err := http.Get(base + "/work/self")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r refapp.SelfReport
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestProfileRefapp is the profiled trace run on the reference app (Go)
// with each sampler: the page that burns CPU names burnCPU with more
// than half of its app CPU, and its app CPU per request is within 20% of
// what the app measures itself; the page that waits on SQL has its time
// in DB time, within 20% of what the app measures around its statement.
func TestProfileRefapp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sampler func(a profiledApp) appcpu.Sampler
		symbols string
	}{
		{"perf", func(a profiledApp) appcpu.Sampler { return appcpu.NewPerf(appcpu.PerfOptions{PIDs: []int{a.pid}}) }, appcpu.SymbolsNative},
		{"pprof labels", func(a profiledApp) appcpu.Sampler { return &appcpu.PProf{URL: a.url + "/debug/pprof/profile"} }, appcpu.SymbolsGo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "perf" {
				if _, err := exec.LookPath("perf"); err != nil {
					t.Skip("perf is not installed")
				}
			}
			a := startProfiledApp(t)
			rep, _, err := Trace(context.Background(), TraceOptions{
				Bench: benchrun.Options{Scenario: workScenario(t, a.url),
					Load: loadgen.Options{Duration: 4 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
				Tap:     a.tap,
				Sampler: tc.sampler(a),
			})
			if err != nil {
				t.Fatal(err)
			}
			self := selfReport(t, a.url)
			if rep.Profile == nil || rep.Profile.Symbols != tc.symbols || rep.Profile.Attributed == 0 {
				t.Fatalf("profile %+v", rep.Profile)
			}
			eps := map[string]Endpoint{}
			for _, e := range rep.Endpoints {
				eps[e.Endpoint] = e
				if e.Usage != nil {
					t.Logf("%s: %d requests, %.2f ms wall, app CPU %.2f ms, DB %.2f ms, other %.2f ms; top %v", e.Endpoint, e.ProfiledRequests,
						e.RequestMsPerRequest, e.AppCPUMsPerRequest, e.DBMsPerRequest, e.OtherMsPerRequest, e.TopFunctions[:min(3, len(e.TopFunctions))])
				}
			}
			burn, wait := eps["GET /work/burn"], eps["GET /work/wait"]
			if burn.Usage == nil || wait.Usage == nil {
				t.Fatalf("endpoints %v", rep.Endpoints)
			}
			sb, sw := self["GET /work/burn"], self["GET /work/wait"]
			t.Logf("the app's own measure: burn %.2f ms CPU, wait %.2f ms DB, %.2f ms CPU per request", sb.CPUMs/float64(sb.Requests), sw.DBMs/float64(sw.Requests), sw.CPUMs/float64(sw.Requests))
			if top := burn.TopFunctions; len(top) == 0 || !strings.HasSuffix(top[0].Name, "refapp.burnCPU") || top[0].Share <= 0.5 {
				t.Errorf("burn page's top functions %+v: want refapp.burnCPU over half", top)
			}
			within(t, "burn page's app CPU per request", burn.AppCPUMsPerRequest, sb.CPUMs/float64(sb.Requests))
			within(t, "wait page's DB time per request", wait.DBMsPerRequest, sw.DBMs/float64(sw.Requests))
			if wait.AppCPUMsPerRequest > 0.2*wait.DBMsPerRequest || burn.DBMsPerRequest != 0 {
				t.Errorf("wait page: app CPU %.2f ms for %.2f ms of DB; burn page DB %.2f ms", wait.AppCPUMsPerRequest, wait.DBMsPerRequest, burn.DBMsPerRequest)
			}
		})
	}
}

func within(t *testing.T, what string, got, want float64) {
	t.Helper()
	if want <= 0 || math.Abs(got-want) > 0.2*want {
		t.Errorf("%s: %.2f ms, the app measured %.2f ms (more than 20%% apart)", what, got, want)
	}
}
