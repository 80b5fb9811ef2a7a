package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// runDiagnoseCmd runs `stacktune diagnose ARGS` on ctx.
func runDiagnoseCmd(ctx context.Context, args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	cmd := newDiagnoseCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// diagnoseStack is a sandbox MariaDB with a table whose queried column
// has no index, a web app in the test querying it through a pool opened
// (and one connection held) before the diagnosis, and nginx in front of
// it logging request times.
type diagnoseStack struct {
	db       *sandbox.MariaDB
	nginx    *sandbox.Nginx
	scenario string
	app      *sql.DB
	held     *sql.Conn
}

var diagnoseSchema = []string{
	"CREATE DATABASE shop",
	"CREATE DATABASE seq",
	"CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, code INT NOT NULL, name VARCHAR(64) NOT NULL, payload VARCHAR(200) NOT NULL)",
	"INSERT INTO shop.items (code, name, payload) SELECT seq % 2000, CONCAT('item', seq), REPEAT('x', 150) FROM seq.seq_1_to_40000",
	"ANALYZE TABLE shop.items",
	"CREATE USER app@'127.0.0.1' IDENTIFIED BY 'app'",
	"GRANT ALL ON shop.* TO app@'127.0.0.1'",
}

const diagnoseNginx = `{{USER}}
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
	server {
		listen 127.0.0.1:{{PORT}};
		location / { proxy_pass http://{{APP}}; }
	}
}
`

const diagnoseScenario = `name: shop
base_url: {{URL}}
steps:
  - name: item
    url: /item?code={{rand 1 2000}}
  - name: home
    url: /
    weight: 2
`

func startDiagnoseStack(t *testing.T) *diagnoseStack {
	t.Helper()
	ctx := context.Background()
	s := &diagnoseStack{db: sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ServerDefaults: true})}
	for _, q := range diagnoseSchema {
		if _, err := s.db.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var err error
	if s.app, err = sql.Open("mysql", fmt.Sprintf("app:app@tcp(127.0.0.1:%d)/shop?interpolateParams=true", s.db.Port())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.app.Close() })
	// A pooled connection opened before the diagnosis and held: the
	// capture cannot see it.
	if s.held, err = s.app.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.held.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/item", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		var n int
		if err := s.app.QueryRowContext(r.Context(), "SELECT COUNT(*) FROM items WHERE code = ?", code).Scan(&n); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintln(w, n)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	s.nginx = sandboxtest.NewNginx(t, sandbox.NginxOptions{FullConfig: strings.NewReplacer("{{USER}}", user, "{{APP}}", ln.Addr().String()).Replace(diagnoseNginx)})
	s.scenario = filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(s.scenario, []byte(strings.ReplaceAll(diagnoseScenario, "{{URL}}", strings.TrimSuffix(s.nginx.URL(), "/"))), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// diagnoseGlobals is SHOW GLOBAL VARIABLES.
func diagnoseGlobals(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL VARIABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] = v.String
	}
	return m
}

func sameDiagnoseGlobals(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, b := range before {
		if after[k] != b {
			t.Errorf("SHOW GLOBAL VARIABLES: %s was %q before, %q after", k, b, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("SHOW GLOBAL VARIABLES: %d variables before, %d after", len(before), len(after))
	}
}

// TestDiagnoseCommand runs `stacktune diagnose` on the stack without
// --app-restart while the app holds a connection opened before: the
// report ranks the page with the scan and its class first, lists the
// held connection (app@127.0.0.1) as not captured with the fix, and the
// server's variables are as they were.
func TestDiagnoseCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB, nginx and a throwaway MariaDB for the proof")
	}
	s := startDiagnoseStack(t)
	before := diagnoseGlobals(t, s.db.DB())
	dir := t.TempDir()
	out, errOut, err := runDiagnoseCmd(context.Background(), "--dsn", s.db.DSN(""), "--nginx-conf", s.nginx.ConfigPath(), "--no-linux",
		"--scenario", s.scenario, "-c", "2", "-d", "4s", "--db", "shop", "--proof-runs", "1", "--format", "json",
		"--snapshot", filepath.Join(dir, "snap.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	sameDiagnoseGlobals(t, before, diagnoseGlobals(t, s.db.DB()))
	var res struct {
		Capture struct {
			Restored bool `json:"restored"`
			Changed  []struct{ Name, Before, After string }
		} `json:"capture"`
		ConnCheck struct {
			Groups []struct {
				User, Host string
				Count      int
			} `json:"groups"`
			Fix string `json:"fix"`
		} `json:"connections_check"`
		Endpoints []struct{ Method, Path string } `json:"endpoints"`
		Classes   []struct {
			Fingerprint string
			Endpoint    string
			Indexes     []string
		} `json:"classes"`
		Hotspots []struct{ Layer, What string } `json:"hotspots"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !res.Capture.Restored || len(res.Capture.Changed) == 0 {
		t.Errorf("capture %+v", res.Capture)
	}
	found := false
	for _, g := range res.ConnCheck.Groups {
		found = found || (g.User == "app" && g.Host == "127.0.0.1" && g.Count >= 1)
	}
	if !found || !strings.Contains(res.ConnCheck.Fix, "--app-restart") {
		t.Errorf("the held connection is not listed with the fix: %+v", res.ConnCheck)
	}
	if len(res.Endpoints) == 0 || res.Endpoints[0].Path != "/item" {
		t.Errorf("endpoints %+v", res.Endpoints)
	}
	if len(res.Classes) == 0 || !strings.Contains(res.Classes[0].Fingerprint, "from items where code = ?") || len(res.Classes[0].Indexes) == 0 {
		t.Errorf("classes %+v", res.Classes)
	}
	for _, want := range []string{"setting long_query_time=0", "if stacktune is killed", "app@127.0.0.1 ×1", "restored long_query_time=10"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "snap.json")); err != nil {
		t.Error(err)
	}
	// The text report of the same result ranks the page first and says
	// which connection was not captured.
	var full diagnose.Result
	if err := json.Unmarshal([]byte(out), &full); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := report.Diagnose(&text, &full, report.Text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. [http] GET /item", "[mysql] select count(*) from items where code = ?", "proven index: ALTER TABLE `shop`.`items` ADD INDEX",
		"## Connections not captured", "app@127.0.0.1: 1 connection(s)", "--app-restart CMD", "read back equal"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestDiagnoseCommandInterrupted cancels the command mid-run, as Ctrl-C
// does: it fails, says the variables are back, and they are.
func TestDiagnoseCommandInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and nginx")
	}
	s := startDiagnoseStack(t)
	before := diagnoseGlobals(t, s.db.DB())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, errOut, err := runDiagnoseCmd(ctx, "--dsn", s.db.DSN(""), "--no-linux", "--app-restart", "true", "-c", "2", "-d", "20s", s.nginx.URL())
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(errOut, "back as they were") {
		t.Errorf("stderr: %s", errOut)
	}
	sameDiagnoseGlobals(t, before, diagnoseGlobals(t, s.db.DB()))
}

func TestDiagnoseFlags(t *testing.T) {
	cases := []struct {
		name, want string
		args       []string
	}{
		{"nothing to load", "nothing to load", []string{"--dsn", "root@unix(/x)/"}},
		{"both", "not both", []string{"--dsn", "root@unix(/x)/", "--scenario", "s.yaml", "http://127.0.0.1/"}},
		{"source", "--source", []string{"--dsn", "root@unix(/x)/", "--source", "general", "http://127.0.0.1/"}},
		{"format", "unknown format", []string{"--dsn", "root@unix(/x)/", "--format", "csv", "http://127.0.0.1/"}},
		{"no server", "--dsn", []string{"http://127.0.0.1/"}},
		{"app restart", "--app-restart", []string{"--dsn", "root@unix(/x)/", "--app-restart", "'unclosed", "http://127.0.0.1/"}},
		{"connections", "-c 20000", []string{"--dsn", "root@unix(/x)/", "-c", "20000", "http://127.0.0.1/"}},
		{"slow log with pfs", "--slow-log", []string{"--dsn", "root@unix(/x)/", "--source", "pfs", "--slow-log", "/x", "http://127.0.0.1/"}},
		{"trace proxy without listen", "--trace-listen", []string{"--dsn", "root@unix(/x)/", "--trace", "proxy", "http://127.0.0.1/"}},
		{"unknown trace", "unknown trace run", []string{"--dsn", "root@unix(/x)/", "--trace", "general", "http://127.0.0.1/"}},
		{"pprof without profile", "go with --profile", []string{"--dsn", "root@unix(/x)/", "--pprof", "http://127.0.0.1:6060/debug/pprof/profile", "http://127.0.0.1/"}},
		{"profile of no app", "no process on this host listens", []string{"--dsn", "root@unix(/x)/", "--profile", "http://127.0.0.1:1/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runDiagnoseCmd(context.Background(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
