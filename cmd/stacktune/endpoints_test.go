package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/refapp"
	"github.com/stacktune/stacktune/internal/refapp/refapptest"
	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/reqtrace"
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
		{"trace without server", "--dsn", []string{"--trace", "pfs", "http://127.0.0.1/"}},
		{"trace without load", "nothing to load", []string{"--trace", "pfs", "--dsn", "root@unix(/x)/"}},
		{"proxy without listen", "--listen", []string{"--trace", "proxy", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
		{"unknown trace", "use proxy or pfs", []string{"--trace", "general", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
		{"pfs tags with a proxy", "no trace run", []string{"--pfs-tags", "--listen", ":3307", "--dsn", "root@unix(/x)/", "http://127.0.0.1/"}},
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
	if _, err := m.DB().ExecContext(ctx, "CREATE DATABASE refapp"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", m.DSN("refapp"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := refapp.GenerateSmall(ctx, db); err != nil {
		t.Fatal(err)
	}
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
			if np.Mean != float64(n) || np.Max != int64(n) {
				t.Errorf("friend check %v per request (max %d), want %d; skipped %v; notes %q", np.Mean, np.Max, n, rep.Skipped, rep.Notes)
			}
		}
	}
	if !found || !strings.Contains(stderr, "turning on the performance_schema consumers") {
		t.Errorf("no friend check N+1: %+v\n%s", rep.NPlusOne, stderr)
	}
}
