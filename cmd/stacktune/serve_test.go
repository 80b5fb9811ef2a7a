package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/browsertest"
	"github.com/stacktune/stacktune/ledger"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/serve"
)

// updateScreenshot rewrites the README's screenshot of serve (docs/serve.png).
var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/serve.png from TestServeInBrowser")

// TestServeNeedsToken: serve refuses an address that is not loopback
// unless the token's variable is set.
func TestServeNeedsToken(t *testing.T) {
	t.Setenv("STACKTUNE_SERVE_TOKEN", "")
	_, _, err := run(t, "", "serve", "--listen", "0.0.0.0:0", "--history", filepath.Join(t.TempDir(), "h.db"))
	if err == nil || !strings.Contains(err.Error(), "needs a token") || !strings.Contains(err.Error(), "STACKTUNE_SERVE_TOKEN") {
		t.Errorf("serve on every interface without a token: %v", err)
	}
	_, _, err = run(t, "", "serve", "--listen", "192.0.2.1:0", "--token-env", "NO_SUCH_TOKEN_VAR")
	if err == nil || !strings.Contains(err.Error(), "NO_SUCH_TOKEN_VAR") {
		t.Errorf("serve on another address without a token: %v", err)
	}
}

// TestServeInBrowser makes a history of real runs (stacktune bench of the
// reference app as first written, then with its home page's N+1 fixed,
// and a diagnosis of the fixed app),
// serves it, and uses it in headless Chromium with real clicks: the list
// (runs, score transitions), a run's page, the diagnosis's page, two runs checked and compared
// (the home page, whose time changed, on top), and a session followed
// live while a writer records its runs and ends it. Screenshots go to a
// temporary directory (logged); -update-screenshot rewrites docs/serve.png.
func TestServeInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, the reference app and Chromium")
	}
	b := browsertest.Start(t)
	ctx := context.Background()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	refapptest.Load(t, m, 0)
	hist := filepath.Join(t.TempDir(), "history.db")
	// A label with markup: it must show as text on every page.
	const diagLabel = "diagnosis <img src=x onerror=alert(1)>"
	// The same scenario (so the same hash) against the app as first
	// written, then with the friend set, on one address.
	var listen, sc string
	for i, fix := range []bool{false, true} {
		// The fixed app tags its SQL with its requests (sqlcommenter):
		// the diagnosis has the SQL of each request from its slow log.
		cfg := refapp.Config{DSN: m.DSN("refapp") + "?interpolateParams=true", FriendSet: fix, SQLTags: fix, Listen: listen}
		app, err := refapp.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			listen = strings.TrimPrefix(app.URL(), "http://")
			sc = refapptest.Scenario(t, app.URL(), []int{31, 32, 33, 34}, true)
		}
		label := []string{"first version", "friend set"}[i]
		_, stderr, err := run(t, "", "bench", "--scenario", sc, "-d", "2s", "-c", "4", "--label", label, "--history", hist, "--format", "json")
		if err == nil && i == 1 {
			// A diagnosis of the fixed app: a run with its digest,
			// snapshot and audit as artefacts.
			_, stderr, err = run(t, "", "diagnose", "--dsn", m.DSN(""), "--no-linux", "--scenario", sc, "-c", "2", "-d", "3s", "--db", "refapp",
				"--proof-runs", "1", "--label", diagLabel, "--history", hist, "--format", "json")
			label = diagLabel
		}
		app.Close()
		// A run that failed its thresholds (a request of the slow first
		// version still in flight at the end) is recorded all the same.
		if err != nil && !strings.Contains(err.Error(), "the run failed") {
			t.Fatalf("bench %s: %v\n%s", label, err, stderr)
		}
	}
	store, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := httptest.NewServer(serve.New(store, serve.Options{Poll: 100 * time.Millisecond}))
	defer srv.Close()
	// Screenshots are the test's artefacts: kept after it, in the
	// temporary directory.
	shots := filepath.Join(os.TempDir(), "stacktune-screens")
	shot := func(p *browsertest.Page, name string) {
		path := filepath.Join(shots, name+".png")
		p.Screenshot(t, path)
		t.Logf("screenshot: %s", path)
	}
	clean := func(p *browsertest.Page) {
		t.Helper()
		if got := p.Problems(); len(got) > 0 {
			t.Errorf("the page reported problems: %v", got)
		}
		for _, r := range p.Requests() {
			if !strings.HasPrefix(r, srv.URL+"/") {
				t.Errorf("a request outside the server: %s", r)
			}
		}
	}

	// The list: both runs, the transitions chart.
	p := b.OpenURL(t, srv.URL+"/")
	clean(p)
	if n := p.Count(t, "#runs tbody tr"); n != 3 {
		t.Fatalf("%d runs listed, want 3", n)
	}
	if n := p.Count(t, "img, script, [onerror]"); n != 0 {
		t.Errorf("%d elements from a label's markup", n)
	}
	if text := p.Text(t, "#runs"); !strings.Contains(text, diagLabel) {
		t.Errorf("the label is not shown as text: %q", text)
	}
	// The diagnosis is listed, but not a step of the transitions.
	if n := p.Count(t, "svg.chart rect.bar"); n != 2 {
		t.Errorf("%d bars in the transitions chart, want 2", n)
	}
	shot(p, "serve-runs")

	// A run's page, by its link.
	if u := p.ClickAndWait(t, "#runs tbody tr:last-child td:nth-child(2) a"); !strings.HasSuffix(u, "/runs/1") {
		t.Errorf("the run's link led to %s", u)
	}
	clean(p)
	if text := p.Text(t, "#endpoints"); !strings.Contains(text, "home") || !strings.Contains(text, "friends") {
		t.Errorf("the run's endpoints: %q", text)
	}
	if h := p.Text(t, "h1"); !strings.Contains(h, "first version") {
		t.Errorf("heading %q", h)
	}

	// The diagnosis's page: its query classes (the home page's friend
	// check among them), its audit, its artefacts.
	p.ClickAndWait(t, "#nav-runs")
	if u := p.ClickAndWait(t, "#runs tbody tr:first-child td:nth-child(2) a"); !strings.HasSuffix(u, "/runs/3") {
		t.Errorf("the diagnosis's link led to %s", u)
	}
	clean(p)
	if h := p.Text(t, "h1"); !strings.Contains(h, diagLabel) || p.Count(t, "img, [onerror]") != 0 {
		t.Errorf("the diagnosis's heading %q, or markup from its label", h)
	}
	if n := p.Count(t, "#classes tbody tr"); n == 0 {
		t.Error("the diagnosis shows no query class")
	}
	if text := p.Text(t, "#classes"); !strings.Contains(strings.ToLower(text), "from relations") {
		t.Errorf("the diagnosis's classes: %.500q", text)
	}
	if n := p.Count(t, "#findings tbody tr"); n == 0 {
		t.Error("the diagnosis shows no finding")
	}
	if text := p.Text(t, "#requests"); !strings.Contains(text, "GET /") {
		t.Errorf("the diagnosis's per-request SQL: %.300q", text)
	}
	if text := p.Text(t, "#artefacts-section"); !strings.Contains(text, "digest") || !strings.Contains(text, "snapshot") {
		t.Errorf("artefacts: %q", text)
	}
	shot(p, "serve-run")

	// Back to the list: check both runs, compare.
	p.ClickAndWait(t, "#nav-runs")
	p.Click(t, "#runs tbody tr:nth-child(2) input[type=checkbox]")
	p.Click(t, "#runs tbody tr:nth-child(3) input[type=checkbox]")
	if u := p.ClickAndWait(t, "#compare button"); !strings.HasSuffix(u, "/diff?a=1&b=2") {
		t.Errorf("compare led to %s", u)
	}
	clean(p)
	first := p.Text(t, "#endpoint-diff tbody tr:first-child")
	if !strings.Contains(first, "home") || !strings.Contains(first, "-") {
		t.Errorf("the first changed endpoint: %q, want home, less time", first)
	}
	runs, err := store.List(ctx, history.ListFilter{Command: history.CommandBench})
	if err != nil {
		t.Fatal(err)
	}
	verdict := p.Text(t, "#verdict")
	switch {
	case !strings.Contains(verdict, "no noise floor"):
		t.Errorf("verdict %q", verdict)
	case runs[0].Passed && runs[1].Passed && !strings.Contains(verdict, "These runs may be compared."):
		t.Errorf("two passed runs of one scenario: verdict %q", verdict)
	case !(runs[0].Passed && runs[1].Passed) && !strings.Contains(verdict, "may NOT be compared"):
		t.Errorf("a failed run: verdict %q", verdict)
	}
	shot(p, "serve-diff")
	if *updateScreenshot {
		p.Screenshot(t, filepath.Join("..", "..", "docs", "serve.png"))
	}

	// A session followed live to its end.
	id, err := store.StartSession(ctx, history.CommandTune, "live tune")
	if err != nil {
		t.Fatal(err)
	}
	lp := b.OpenURL(t, fmt.Sprintf("%s/sessions/%d", srv.URL, id))
	if s := lp.Text(t, "#live-status"); s != "running" {
		t.Errorf("status %q", s)
	}
	done := make(chan error, 1)
	go func() {
		for i := range 4 {
			time.Sleep(300 * time.Millisecond)
			r := history.Run{Label: []string{"baseline", "baseline", "indexes (before)", "indexes"}[i], Score: float64(1000 + 100*i),
				Passed: true, Command: history.CommandTune, Session: id, Arm: []string{"a", "b", "a", "b"}[i]}
			if _, err := store.Add(ctx, &r); err != nil {
				done <- err
				return
			}
		}
		if err := store.AddDecision(ctx, id, history.Decision{LabelA: "indexes (before)", LabelB: "indexes", Outcome: "better", Ratio: 1.1, Runs: 2, Kept: true}); err != nil {
			done <- err
			return
		}
		done <- store.EndSession(ctx, id, history.SessionDone)
	}()
	lp.WaitFor(t, `document.getElementById("live-status").dataset.ended === "1"`, 30*time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	clean(lp)
	if n := lp.Count(t, "#session-runs tbody tr"); n != 4 {
		t.Errorf("%d runs shown live, want 4", n)
	}
	if s := lp.Text(t, "#live-status"); s != "done" {
		t.Errorf("status at the end %q", s)
	}
	shot(lp, "serve-live")
}

// TestBenchHosts: bench --hosts collects from every host of the fleet lab
// (SSH to each network namespace) over the run and records it with the
// run; the run read back groups them by role, the two failed hosts (one
// unreachable, one with a changed key) with their stage, and they make
// the run's collectors unhealthy for a comparison.
func TestBenchHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the fleet lab")
	}
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 3, TimeWait: 10})
	app := httptest.NewServer(nil) // 404s are enough load: the run's result is not what is tested
	defer app.Close()
	hist := filepath.Join(t.TempDir(), "h.db")
	_, stderr, err := run(t, "", "bench", "--hosts", lab.Inventory, "--known-hosts", lab.KnownHosts, "-d", "1s", "-c", "1",
		"--label", "with hosts", "--history", hist, "--format", "json", app.URL)
	if !strings.Contains(stderr, "hosts collected, 2 failed") {
		t.Fatalf("bench --hosts: %v\n%s", err, stderr)
	}
	store, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.List(context.Background(), history.ListFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	v, err := ledger.Load(context.Background(), store, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range v.Hosts {
		s := h.Role + "/" + h.Name
		if !h.OK {
			s += " failed at " + h.Stage
		} else if !slices.Contains(h.Layers, "linux") {
			t.Errorf("host %s has layers %v", h.Name, h.Layers)
		}
		got = append(got, s)
	}
	if len(v.Hosts) != len(lab.Hosts) || len(v.CollectorErrors) < 2 {
		t.Errorf("hosts %q, collector errors %q", got, v.CollectorErrors)
	}
	t.Logf("hosts: %q", got)
	c := ledger.Compare(v, v)
	if c.Verdict.Comparable {
		t.Errorf("a run with failed hosts compared as healthy: %+v", c.Verdict)
	}
}
