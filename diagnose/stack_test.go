package diagnose

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// testApp is a small web app written in the test: it runs its queries on
// the sandbox MariaDB through a pool it can replace (restart), with one
// page per kind of trouble:
//
//	/item?code=N     one query on items.code, which has no index (a scan)
//	/friends?user=N  a list of 30 users, then one query per user (N+1)
//	/home            one cheap query on the primary key
type testApp struct {
	dsn  string
	pool atomic.Pointer[sql.DB]
	srv  *http.Server
	addr string
}

// The app's queries.
const (
	qItem        = "SELECT id, name FROM items WHERE code = ?"
	qFriendList  = "SELECT id FROM users WHERE id BETWEEN ? AND ?"
	qFriend      = "SELECT id, name, bio FROM users WHERE id = ?"
	qHome        = "SELECT COUNT(*) FROM users WHERE id < 100"
	friendsShown = 30
)

func startTestApp(t *testing.T, dsn string) *testApp {
	t.Helper()
	a := &testApp{dsn: dsn}
	if err := a.restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/item", a.item)
	mux.HandleFunc("/friends", a.friends)
	mux.HandleFunc("/home", a.home)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go a.srv.Serve(ln)
	t.Cleanup(func() {
		a.srv.Close()
		if db := a.pool.Load(); db != nil {
			db.Close()
		}
	})
	return a
}

// restart replaces the pool, as restarting the app would: its
// connections are opened anew.
func (a *testApp) restart(ctx context.Context) error {
	db, err := sql.Open("mysql", a.dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	if old := a.pool.Swap(db); old != nil {
		old.Close()
	}
	return nil
}

func (a *testApp) fail(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func (a *testApp) item(w http.ResponseWriter, r *http.Request) {
	code, _ := strconv.Atoi(r.URL.Query().Get("code"))
	rows, err := a.pool.Load().QueryContext(r.Context(), qItem, code)
	if err != nil {
		a.fail(w, err)
		return
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	fmt.Fprintf(w, "%d items\n", n)
}

func (a *testApp) friends(w http.ResponseWriter, r *http.Request) {
	u, _ := strconv.Atoi(r.URL.Query().Get("user"))
	db := a.pool.Load()
	rows, err := db.QueryContext(r.Context(), qFriendList, u, u+friendsShown-1)
	if err != nil {
		a.fail(w, err)
		return
	}
	var ids []int
	for rows.Next() {
		var id int
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	var page strings.Builder
	for _, id := range ids { // one query per friend: the N+1
		var name, bio string
		if err := db.QueryRowContext(r.Context(), qFriend, id).Scan(&id, &name, &bio); err != nil {
			a.fail(w, err)
			return
		}
		fmt.Fprintln(&page, name)
	}
	io.WriteString(w, page.String())
}

func (a *testApp) home(w http.ResponseWriter, r *http.Request) {
	var n int
	if err := a.pool.Load().QueryRowContext(r.Context(), qHome).Scan(&n); err != nil {
		a.fail(w, err)
		return
	}
	fmt.Fprintf(w, "%d users\n", n)
}

// testStack is the stack a test diagnoses: a sandbox MariaDB holding the
// app's database, the app, nginx in front of it logging request times,
// and a scenario browsing the three pages at random.
type testStack struct {
	db       *sandbox.MariaDB
	nginx    *sandbox.Nginx
	app      *testApp
	scenario string
}

// nginxConf proxies to the app and logs the request time.
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
	upstream app { server {{APP}}; keepalive 16; }
	server {
		listen 127.0.0.1:{{PORT}};
		location / {
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_pass http://app;
		}
	}
}
`

// testScenario browses the pages by weight, values at random. The scan
// (/item) is weighted over /friends so that it takes the most time
// whatever the load on the machine: under load /friends' 31 round trips
// per request can cost as much as one scan.
const testScenario = `name: shop
base_url: {{URL}}
steps:
  - name: item
    url: /item?code={{rand 1 3000}}
    weight: 3
  - name: friends
    url: /friends?user={{rand 1 2900}}
    weight: 2
  - name: home
    url: /home
    weight: 3
`

// The app's schema and data: items.code has no index.
var testSchema = []string{
	"CREATE DATABASE shop",
	"CREATE DATABASE seq", // the sequence engine's tables need a database
	"CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, code INT NOT NULL, name VARCHAR(64) NOT NULL, payload VARCHAR(200) NOT NULL)",
	"INSERT INTO shop.items (code, name, payload) SELECT seq % 3000, CONCAT('item', seq), REPEAT('x', 150) FROM seq.seq_1_to_60000",
	"CREATE TABLE shop.users (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, bio VARCHAR(200) NOT NULL)",
	"INSERT INTO shop.users SELECT seq, CONCAT('user', seq), REPEAT('b', 100) FROM seq.seq_1_to_3000",
	"ANALYZE TABLE shop.items, shop.users",
	"CREATE USER app@'127.0.0.1' IDENTIFIED BY 'app'",
	"GRANT ALL ON shop.* TO app@'127.0.0.1'",
	"CREATE USER held@'127.0.0.1' IDENTIFIED BY 'held'",
	"GRANT SELECT ON shop.* TO held@'127.0.0.1'",
}

func startTestStack(t *testing.T, opts map[string]string) *testStack {
	t.Helper()
	return startTestStackWith(t, sandbox.MariaDBOptions{ServerDefaults: true, Options: opts})
}

// startTestStackWith starts the stack on a MariaDB started with mopts.
func startTestStackWith(t *testing.T, mopts sandbox.MariaDBOptions) *testStack {
	t.Helper()
	ctx := context.Background()
	s := &testStack{db: sandboxtest.NewMariaDB(t, mopts)}
	for _, q := range testSchema {
		if _, err := s.db.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.app = startTestApp(t, fmt.Sprintf("app:app@tcp(127.0.0.1:%d)/shop?interpolateParams=true", s.db.Port()))
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := strings.NewReplacer("{{USER}}", user, "{{APP}}", s.app.addr).Replace(nginxConf)
	s.nginx = sandboxtest.NewNginx(t, sandbox.NginxOptions{FullConfig: conf})
	s.scenario = filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(s.scenario, []byte(strings.ReplaceAll(testScenario, "{{URL}}", strings.TrimSuffix(s.nginx.URL(), "/"))), 0o644); err != nil {
		t.Fatal(err)
	}
	// The app's pool is open and used before the diagnosis, as a running
	// app's is.
	for _, p := range []string{"item?code=1", "friends?user=1", "home"} {
		resp, err := http.Get(s.nginx.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /%s: %s", p, resp.Status)
		}
	}
	return s
}

// globals is SHOW GLOBAL VARIABLES.
func globals(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	v, err := readGlobals(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sameGlobals fails the test for every variable that differs.
func sameGlobals(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, b := range before {
		if a, ok := after[k]; !ok || a != b {
			t.Errorf("SHOW GLOBAL VARIABLES: %s was %q before, %q after", k, b, a)
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("SHOW GLOBAL VARIABLES: %s = %q appeared", k, a)
		}
	}
}
