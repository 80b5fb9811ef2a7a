package tune_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
	"github.com/stacktune/stacktune/tune"
)

// bookshop runs testdata/bookshop, the second app (not the reference
// app): its own schema, an N+1 on /authors/{id} and a missing index on
// reviews.book_id.
type bookshop struct {
	bin, dsn, addr string
	mu             sync.Mutex
	cmd            *exec.Cmd
}

func buildBookshop(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bookshop")
	out, err := exec.Command("go", "build", "-o", bin, "../testdata/bookshop").CombinedOutput()
	if err != nil {
		t.Fatalf("building the bookshop: %v\n%s", err, out)
	}
	return bin
}

// restart stops the app (if running) and starts it again: a new
// process, so new database connections, as --app-restart does.
func (b *bookshop) restart(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
	}
	// The bookshop tags its SQL as Rails' marginalia does, so the
	// diagnosis measures which endpoint runs each statement per request
	// (the estimate from per-second counts is diagnose's fallback,
	// tested there).
	b.cmd = exec.Command(b.bin, "-listen", b.addr, "-dsn", b.dsn, "-sql-tags", "marginalia")
	if err := b.cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", b.addr); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("the bookshop did not listen on %s", b.addr)
}

func (b *bookshop) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// nginxConf proxies to the bookshop and logs the request time.
const nginxConf = `{{USER}}
worker_processes 1;
error_log {{DIR}}/error.log;
events { worker_connections 256; }
http {
	log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time';
	access_log {{DIR}}/access.log timed;
	client_body_temp_path {{DIR}}/tmp/client_body;
	proxy_temp_path {{DIR}}/tmp/proxy;
	fastcgi_temp_path {{DIR}}/tmp/fastcgi;
	uwsgi_temp_path {{DIR}}/tmp/uwsgi;
	scgi_temp_path {{DIR}}/tmp/scgi;
	upstream bookshop { server {{APP}}; }
	server {
		listen 127.0.0.1:{{PORT}};
		location / {
			proxy_pass http://bookshop;
		}
	}
}
`

// scenario initialises the shop before each run, as a contest
// benchmarker calls /initialize, and browses it by weight.
const scenario = `name: bookshop
base_url: {{URL}}
pre_run:
  method: POST
  url: /initialize
  expect: {status: 200}
  timeout: 2m
steps:
  - name: top
    url: /
    weight: 2
  - name: book
    url: /books/{{rand 1 2000}}
    weight: 5
    expect: {selector: "#title"}
  - name: author
    url: /authors/{{rand 1 200}}
    weight: 3
    expect: {selector: "#author"}
`

// TestTuneBookshop runs the whole loop on a stack stacktune never saw:
// the bookshop (its own schema, an N+1, a missing index) behind a real
// nginx, on a real MariaDB that reads its options from conf.d and can be
// restarted. The report names the proven index, the N+1 with its
// endpoint, and each step's decision with its interval.
func TestTuneBookshop(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole loop takes a few minutes")
	}
	ctx := context.Background()
	db := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})
	if _, err := db.DB().ExecContext(ctx, "CREATE DATABASE bookshop"); err != nil {
		t.Fatal(err)
	}
	app := &bookshop{bin: buildBookshop(t), dsn: db.DSN("bookshop"), addr: freeAddr(t)}
	if err := app.restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.stop)
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	n := sandboxtest.NewNginx(t, sandbox.NginxOptions{FullConfig: strings.NewReplacer("{{USER}}", user, "{{APP}}", app.addr).Replace(nginxConf)})
	scen := filepath.Join(t.TempDir(), "bookshop.yaml")
	if err := os.WriteFile(scen, []byte(strings.ReplaceAll(scenario, "{{URL}}", strings.TrimSuffix(n.URL(), "/"))), 0o644); err != nil {
		t.Fatal(err)
	}
	// Load the data once, so the app's pool is open before the
	// diagnosis, as a running app's is.
	resp, err := http.Post(n.URL()+"initialize", "text/plain", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("initialize: %v %v", err, resp)
	}
	resp.Body.Close()

	var progress bytes.Buffer
	var mu sync.Mutex
	opt := tune.Options{
		Diagnose: diagnose.Options{
			DSN: db.DSN("bookshop"),
			Bench: benchrun.Options{Scenario: scen,
				Load: loadgen.Options{Connections: 4, Duration: 3 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
			Collect:        collect.Config{Values: map[string]string{"nginx-conf": n.ConfigPath()}},
			AccessLogs:     []string{n.AccessLogPath()},
			AppRestart:     app.restart,
			AppRestartName: "restart the bookshop",
			ProofRuns:      3,
		},
		Services: apply.Services{DB: db.DB(), Schema: "bookshop", MySQLConf: filepath.Join(db.ConfDir(), "99-stacktune.cnf"),
			MySQLCheck: db.CheckConfig, MySQLRestart: db.Restart, MySQLRestartHint: "restart the sandbox",
			Nginx: true, NginxConf: n.ConfigPath(), NginxTest: n.Test, NginxReload: n.Reload},
		StateDir: t.TempDir(),
		AB:       abtest.Options{MinRuns: 4, MaxRuns: 4},
		// The floor is measured once: facing the noise (longer floors on
		// a busy host) is TestNoiseFaced's, and doubles this test's time.
		NoiseLimit:     -1,
		AppRestart:     app.restart,
		AppRestartName: "restart the bookshop",
		Progress: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(&progress, line)
		},
	}
	// A dry run diagnoses and plans, and changes nothing.
	confBefore, _ := os.ReadFile(n.ConfigPath())
	dry := opt
	dry.DryRun = true
	dres, err := tune.Run(ctx, dry)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, progress.String())
	}
	if p := dres.Plans["indexes"]; p == nil || len(p.Steps) == 0 {
		t.Errorf("dry run: no plan for the indexes: %+v", dres.Plans)
	}
	var k int
	_ = db.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='bookshop' AND TABLE_NAME='reviews' AND COLUMN_NAME='book_id'").Scan(&k)
	if after, _ := os.ReadFile(n.ConfigPath()); k != 0 || !bytes.Equal(after, confBefore) || len(dres.Runs) != 0 {
		t.Errorf("the dry run changed something: %d indexes on book_id, nginx.conf changed %v, %d runs", k, !bytes.Equal(after, confBefore), len(dres.Runs))
	}

	res, err := tune.Run(ctx, opt)
	if testing.Verbose() || err != nil {
		t.Logf("progress:\n%s", progress.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := report.Loop(&text, res, report.Text, ""); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	t.Logf("report:\n%s", out)

	if res.NoiseFloor == nil || res.NoiseFloor.Verdict != abtest.WithinNoise {
		t.Errorf("noise floor: %+v", res.NoiseFloor)
	}
	// The proven index on reviews.book_id, applied and decided.
	var ix *int
	for i, s := range res.Steps {
		if s.Label == "indexes" {
			ix = &i
		}
	}
	if ix == nil {
		t.Fatalf("no indexes step: %+v", res.Steps)
	}
	s := res.Steps[*ix]
	if s.Decision == nil || s.Decision.CILow <= 0 || s.Decision.CIHigh < s.Decision.CILow || len(s.Scores) < 4 || len(s.Before) < 4 {
		t.Errorf("indexes step without a decision and its interval: %+v", s)
	}
	if !strings.Contains(out, "book_id") || !strings.Contains(out, "decision: ") || !strings.Contains(out, "interval [") {
		t.Errorf("the report does not name the index and the decision")
	}
	if s.Decision != nil && s.Decision.Verdict == abtest.Better {
		var k int
		_ = db.DB().QueryRow("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='bookshop' AND TABLE_NAME='reviews' AND COLUMN_NAME='book_id'").Scan(&k)
		if k == 0 {
			t.Errorf("the index was kept but is not on the server")
		}
	}
	// The N+1, with its endpoint, left to the application's developers.
	found := false
	for _, f := range res.NotApplied {
		if f.ID == "n-plus-one" && strings.Contains(f.Title, "authors") && strings.Contains(f.Title, "measured: 10 calls per request") {
			found = true
		}
	}
	if !found {
		t.Errorf("the N+1 of /authors/{id} (10 books an author) is not named with its endpoint, measured: %+v", res.NotApplied)
	}
	if res.Second == nil {
		t.Error("no second diagnosis")
	}
	// The kept changes survive a restart of what they changed.
	if rc := res.Restart; rc == nil || len(rc.Lost) > 0 || !slices.Contains(rc.Restarted, "app") || rc.ColdScore <= 0 || rc.WarmScore <= 0 || len(rc.Warmed) == 0 {
		t.Errorf("restart check: %+v", res.Restart)
	} else if s.Decision != nil && s.Decision.Verdict == abtest.Better && !slices.Contains(rc.Held, "indexes") {
		t.Errorf("the kept index did not hold after the restart: %+v", rc)
	}
}
