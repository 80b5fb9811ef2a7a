package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/sandbox"
)

// appDB is the reference app's database.
const appDB = "refapp"

// stack is the reference stack of the loop: MariaDB with the
// distribution's defaults reading my.cnf and conf.d, memcached over TCP,
// the reference app (package refapp) configured by a JSON file, and
// nginx in front of it as a reverse proxy over TCP, configured like
// Debian's nginx.conf.
type stack struct {
	dir   string
	db    *sandbox.MariaDB
	appDB *sql.DB // the app's database, for the index step and DDL
	mc    *sandbox.Memcached
	mcOpt sandbox.MemcachedOptions
	nginx *sandbox.Nginx

	appConfig string // path of the app's JSON config
	app       *refapp.Server
	appCfg    refapp.Config // what the running app was started with
}

// nginxConf is the nginx.conf of the stack: Debian 12's defaults
// (worker_processes auto, worker_connections 768, sendfile, tcp_nopush,
// keepalive_timeout 65, gzip on, the combined log) with the app behind an
// upstream over TCP, as a first deployment has it.
const nginxConf = `# nginx.conf of the stacktune demo: Debian 12's defaults, the app behind it.
user root;
worker_processes auto;
pid {{DIR}}/nginx.pid;
error_log {{DIR}}/error.log;

events {
	worker_connections 768;
}

http {
	sendfile on;
	tcp_nopush on;
	types_hash_max_size 2048;
	keepalive_timeout 65;

	default_type application/octet-stream;
	types {
		text/html html htm;
		text/css css;
		application/javascript js;
	}

	access_log {{DIR}}/access.log;
	client_body_temp_path {{DIR}}/tmp/client_body;
	proxy_temp_path {{DIR}}/tmp/proxy;
	fastcgi_temp_path {{DIR}}/tmp/fastcgi;
	uwsgi_temp_path {{DIR}}/tmp/uwsgi;
	scgi_temp_path {{DIR}}/tmp/scgi;

	gzip on;

	upstream app {
		server {{APP}};
	}

	server {
		listen 127.0.0.1:{{PORT}} default_server;
		server_name _;

		location / {
			proxy_set_header Host $host;
			proxy_pass http://app;
		}
	}
}
`

// startStack starts the servers and loads the data at scale.
func startStack(ctx context.Context, dir string, scale int, say func(string, ...any)) (s *stack, err error) {
	s = &stack{dir: dir, appConfig: filepath.Join(dir, "app", "app.json")}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	// performance_schema on: the diagnosis's trace run reads its statement
	// history (what a user's server gives with performance_schema=ON, or
	// with diagnose --mysql-restart, which turns it on for the trace run).
	say("starting MariaDB with the distribution's defaults (reads my.cnf and conf.d) and performance_schema on")
	s.db, err = sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{ConfigFiles: true, ServerDefaults: true, Dir: filepath.Join(dir, "mariadb"),
		Options: map[string]string{"performance_schema": "ON"}})
	if err != nil {
		return s, err
	}
	if _, err := s.db.DB().ExecContext(ctx, "CREATE DATABASE "+appDB); err != nil {
		return s, fmt.Errorf("creating the app's database: %w", err)
	}
	s.appDB, err = dbconn.Open(ctx, s.db.DSN(appDB), 0)
	if err != nil {
		return s, err
	}
	say("loading the reference app's data at scale %d", scale)
	start := time.Now()
	if err := refapp.Generate(ctx, s.appDB, scale); err != nil {
		return s, fmt.Errorf("loading the data: %w", err)
	}
	say("loaded in %s", time.Since(start).Round(time.Millisecond))

	say("starting memcached over TCP")
	s.mcOpt = sandbox.MemcachedOptions{Dir: filepath.Join(dir, "memcached")}
	s.mc, err = sandbox.StartMemcached(ctx, s.mcOpt)
	if err != nil {
		return s, err
	}

	say("starting the reference app over TCP")
	if err := os.MkdirAll(filepath.Dir(s.appConfig), 0o755); err != nil {
		return s, err
	}
	// The app tags its SQL as an app instrumented with sqlcommenter does,
	// so the diagnosis ties every statement to its request (package
	// reqtrace) at the bench's concurrency; it labels every request's CPU
	// samples with its trace ID (pprof.Do), so the diagnosis's trace run
	// profiles it inside this process (appcpu.InProcess) apart from the
	// load generator beside it.
	cfg := refapp.Config{Listen: "127.0.0.1:0", DSN: s.db.TCPDSN(appDB), Memcached: s.mc.Addr(), SQLTags: true, ProfileLabels: true}
	if s.app, err = refapp.Start(ctx, cfg); err != nil {
		return s, err
	}
	cfg.Listen = s.app.Addr() // a fixed port from now on, for nginx and restarts
	s.appCfg = cfg
	if err := cfg.Write(s.appConfig); err != nil {
		return s, err
	}

	say("starting nginx as a reverse proxy to the app over TCP")
	s.nginx, err = sandbox.StartNginx(ctx, sandbox.NginxOptions{
		FullConfig: strings.ReplaceAll(nginxConf, "{{APP}}", cfg.Listen),
		Dir:        filepath.Join(dir, "nginx"),
	})
	if err != nil {
		return s, err
	}
	return s, nil
}

// restartApp restarts the app from its config file.
func (s *stack) restartApp(ctx context.Context) error {
	cfg, err := refapp.LoadConfig(s.appConfig)
	if err != nil {
		return err
	}
	if s.app != nil {
		_ = s.app.Close()
		s.app = nil
	}
	if strings.HasPrefix(cfg.Listen, "unix:") {
		_ = os.Remove(strings.TrimPrefix(cfg.Listen, "unix:")) // a socket left by the previous process
	}
	// The app outlives the call: apply activates it on a context of its
	// own that ends with the transaction (refapp.Start stops the app when
	// its context ends); the stack's stop closes it.
	app, err := refapp.Start(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return err
	}
	s.app, s.appCfg = app, cfg
	return nil
}

// probeApp asks the app itself (not through nginx) for the login page.
func (s *stack) probeApp(ctx context.Context) error {
	if s.app == nil {
		return errors.New("the app is not running")
	}
	client := freshClient(probeTimeout)
	url := s.app.URL() + "/login"
	if s.app.Network() == "unix" {
		client.Transport = unixTransport(strings.TrimPrefix(s.appCfg.Listen, "unix:"))
		url = "http://app/login"
	}
	return getOK(ctx, client, url, "the app")
}

// probeNginx asks nginx for the login page (through the app).
func (s *stack) probeNginx(ctx context.Context) error {
	return getOK(ctx, freshClient(probeTimeout), s.nginx.URL()+"login", "nginx")
}

const probeTimeout = 10 * time.Second

// freshClient opens a connection per request: a connection kept from
// before an nginx reload may still reach an old worker, which proxies by
// the old configuration.
func freshClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
}

// getOK GETs url and wants 200; errors name who (the app, nginx) and
// the path.
func getOK(ctx context.Context, client *http.Client, url, who string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s does not answer: %w", who, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answers %s with %d", who, req.URL.Path, resp.StatusCode)
	}
	return nil
}

func (s *stack) stop() {
	if s.nginx != nil {
		_ = s.nginx.Stop()
	}
	if s.app != nil {
		_ = s.app.Close()
	}
	if s.mc != nil {
		_ = s.mc.Stop()
	}
	if s.appDB != nil {
		_ = s.appDB.Close()
	}
	if s.db != nil {
		_ = s.db.Stop()
	}
}
