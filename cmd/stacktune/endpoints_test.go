package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

const taggedLog = "../../testdata/slowlogs/mariadb1011-marginalia.log"

// TestEndpointsSlowLog: the bookshop's tagged slow log, read by tags, in
// every format; JSON is the reqtrace.Report.
func TestEndpointsSlowLog(t *testing.T) {
	out, _, err := run(t, "", "endpoints", "--slow-log", taggedLog, "--n-plus-one", "5", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep reqtrace.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 2 || len(rep.NPlusOne) != 1 || rep.NPlusOne[0].Endpoint != "authors#show" || rep.NPlusOne[0].Max != 10 || rep.NPlusOneMin != 5 {
		t.Errorf("%+v", rep)
	}
	// The same from standard input, as Markdown into a file.
	data, _ := os.ReadFile(taggedLog)
	path := filepath.Join(t.TempDir(), "endpoints.md")
	if _, stderr, err := run(t, string(data), "endpoints", "--slow-log", "-", "--format", "markdown", "-o", path); err != nil || !strings.Contains(stderr, "written to") {
		t.Fatal(err, stderr)
	}
	md, _ := os.ReadFile(path)
	if !strings.Contains(string(md), "# Which endpoint runs which SQL (tags: slow log)") || !strings.Contains(string(md), "authors#show runs select avg(rating) from reviews where book\\_id = ? 10.0 times per request") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestEndpointsFlags(t *testing.T) {
	cases := []struct {
		name, want string
		args       []string
	}{
		{"no mode", "give one of", nil},
		{"two modes", "give one of", []string{"--slow-log", taggedLog, "--trace", "pfs"}},
		{"slow log with a URL", "takes no URL", []string{"--slow-log", taggedLog, "http://127.0.0.1/"}},
		{"format", "unknown format", []string{"--slow-log", taggedLog, "--format", "csv"}},
		{"n", "--n-plus-one 0", []string{"--slow-log", taggedLog, "--n-plus-one", "0"}},
		{"missing log", "no such file", []string{"--slow-log", "/nonexistent/slow.log"}},
		{"unknown access-log format", "unknown --access-log-format \"nginx\": use auto, combined,", []string{"--slow-log", taggedLog, "--access-log", logs + "ltsv.log", "--access-log-format", "nginx"}},
		{"undetected access log", "name its format with --access-log-format (combined, common,", []string{"--slow-log", taggedLog, "--access-log", logs + "nginx-upstream-time.log"}},
		{"trace without server", "--dsn", []string{"--trace", "pfs", "http://127.0.0.1/"}},
		{"trace without load", "nothing to load", []string{"--trace", "pfs", "--dsn", "root@unix(/x)/"}},
		{"proxy without listen", "--listen", []string{"--trace", "proxy", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
		{"unknown trace", "use proxy or pfs", []string{"--trace", "general", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
		{"pfs tags with a proxy", "no trace run", []string{"--pfs-tags", "--listen", ":3307", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
		{"profile without a trace run", "give --trace proxy or pfs", []string{"--slow-log", taggedLog, "--profile"}},
		{"pprof without profile", "go with --profile", []string{"--trace", "pfs", "--dsn", "root@unix(/x)/", "--pprof", "http://127.0.0.1:6060/debug/pprof/profile", "http://127.0.0.1/"}},
		{"profile with pprof and pids", "not both", []string{"--trace", "pfs", "--dsn", "root@unix(/x)/", "--profile", "--pprof", "http://127.0.0.1:6060/debug/pprof/profile", "--app-pid", "1", "http://127.0.0.1/"}},
		{"diff of a missing file", "no such file", []string{"diff", "/nonexistent/a.json", "/nonexistent/b.json"}},
		{"diff of an unprofiled report", "no profile in it", []string{"diff", "../../report/testdata/requests/trace.json", "../../report/testdata/requests/trace.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, "", append([]string{"endpoints"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEndpointsTracePFS runs `stacktune endpoints --trace pfs` on the
// reference app: the home page's friend check per request, as its page
// renders it.
func TestEndpointsTracePFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and the reference app")
	}
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON", "performance_schema_events_statements_history_long_size": "20000"}})
	ctx := context.Background()
	db := refapptest.Load(t, m, 0)
	app, err := refapp.Start(ctx, refapp.Config{DSN: m.DSN("refapp") + "?interpolateParams=true"})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	const me = 31
	n := refapptest.ExpectedChecks(t, db, app.URL(), me)
	out, stderr, err := run(t, "", "endpoints", "--trace", "pfs", "--dsn", m.DSN(""), "--scenario", refapptest.Scenario(t, app.URL(), []int{me}, false),
		"-d", "2s", "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rep reqtrace.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, np := range rep.NPlusOne {
		if np.Endpoint == "GET /" && np.ID == refapptest.IsFriendID {
			found = true
			if np.PerRequest != float64(n) || np.Max != int64(n) {
				t.Errorf("friend check %v per request (max %d), want %d; skipped %v; notes %q", np.PerRequest, np.Max, n, rep.Skipped, rep.Notes)
			}
		}
	}
	if !found || !strings.Contains(stderr, "turning on the performance_schema consumers") {
		t.Errorf("no friend check N+1: %+v\n%s", rep.NPlusOne, stderr)
	}
}

// TestEndpointsProfile runs `stacktune endpoints --trace pfs --profile`
// on the reference app in a process of its own, found from the port of
// the URL: per endpoint its app CPU, DB and other time, burnCPU on top of
// the page that burns CPU, the flame graphs written; then the same after
// a change of code (burnCPU does half the work) and `endpoints diff`
// shows burnCPU shrank by about half.
func TestEndpointsProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and the reference app")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not installed")
	}
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON", "performance_schema_events_statements_history_long_size": "20000"}})
	if _, err := m.DB().ExecContext(context.Background(), "CREATE DATABASE refapp"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	profiled := func(name string, rounds int) reqtrace.Report {
		url, _ := refapptest.StartProcess(t, refapp.Config{DSN: m.DSN("refapp"), Profiling: true, BurnRounds: rounds})
		sc := filepath.Join(dir, name+".yaml")
		os.WriteFile(sc, []byte("name: work\nbase_url: "+url+"\nsteps:\n  - {name: burn, url: /work/burn}\n  - {name: wait, url: /work/wait}\n"), 0o600)
		out := filepath.Join(dir, name+".json")
		_, stderr, err := run(t, "", "endpoints", "--trace", "pfs", "--dsn", m.DSN(""), "--scenario", sc, "-d", "3s", "--profile", "--format", "json", "-o", out)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if !strings.Contains(stderr, "perf on the app's processes") || !strings.Contains(stderr, "flame graph(s) written to "+filepath.Join(dir, name+".flame")) {
			t.Errorf("stderr:\n%s", stderr)
		}
		b, _ := os.ReadFile(out)
		var rep reqtrace.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"app_cpu_ms_per_request"`, `"db_ms_per_request"`, `"other_ms_per_request"`, `"top_functions"`, `"flame_graph"`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("%s: no %s in the JSON", name, key)
			}
		}
		return rep
	}
	burnOf := func(rep reqtrace.Report) reqtrace.Endpoint {
		for _, e := range rep.Endpoints {
			if e.Endpoint == "GET /work/burn" && e.Usage != nil {
				return e
			}
		}
		t.Fatalf("no profiled GET /work/burn: %+v", rep.Endpoints)
		return reqtrace.Endpoint{}
	}
	before := burnOf(profiled("before", refapp.BurnRounds))
	if len(before.TopFunctions) == 0 || !strings.HasSuffix(before.TopFunctions[0].Name, "refapp.burnCPU") || before.TopFunctions[0].Share <= 0.5 {
		t.Errorf("top functions %+v", before.TopFunctions)
	}
	if svg, err := os.ReadFile(before.FlameGraph); err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "refapp.burnCPU") {
		t.Errorf("flame graph %s: %v", before.FlameGraph, err)
	}
	profiled("after", refapp.BurnRounds/2)
	out, stderr, err := run(t, "", "endpoints", "diff", filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json"), "--format", "json", "--flame-dir", filepath.Join(dir, "diff"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var v report.EndpointsDiffView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, d := range v.Endpoints {
		if d.Endpoint != "GET /work/burn" {
			continue
		}
		f := d.Functions[0]
		t.Logf("burnCPU: %.2f → %.2f ms per request", f.BeforeMs, f.AfterMs)
		if !strings.HasSuffix(f.Name, "refapp.burnCPU") || f.AfterMs > 0.7*f.BeforeMs || f.AfterMs < 0.3*f.BeforeMs {
			t.Errorf("the largest change %+v: want burnCPU about halved", f)
		}
		if _, err := os.Stat(v.FlameGraphs[d.Endpoint]); err != nil {
			t.Errorf("differential flame graph: %v", err)
		}
		return
	}
	t.Errorf("no GET /work/burn in the diff: %+v", v.Endpoints)
}

// TestEndpointsAccessLogFormat: a format named from the registry is
// taken and the access log read with it (the errors are TestEndpointsFlags').
func TestEndpointsAccessLogFormat(t *testing.T) {
	out, _, err := run(t, "", "endpoints", "--slow-log", taggedLog, "--access-log", logs+"ltsv.log", "--access-log-format", "ltsv", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"endpoints"`) {
		t.Errorf("no endpoints in:\n%s", out)
	}
}
