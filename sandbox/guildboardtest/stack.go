package guildboardtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// The app's database, its user and the size of what /initialize loads
// (the constants of testdata/guildboard/index.php).
const (
	Schema        = "guildboard"
	appUser       = "guildboard"
	appPassword   = "guildboard"
	Guilds        = 100
	Players       = 20000
	Posts         = 120000
	Items         = 250000
	BoardPosts    = 1000 // posts, and author queries, on a board page
	MembersShown  = 150  // player_name lookups on a members page
	TopPosters    = 20   // player_name lookups on a stats page
	RankedPlayers = 200  // players GET /ranking ranks
	rankRounds    = 100  // RANK_ROUNDS: sha256 rounds per ranked player
)

// The app's routes, as its request log names them.
const (
	RouteHome       = "GET /"
	RouteBoard      = "GET /guilds/{id}/board"
	RouteMembers    = "GET /guilds/{id}/members"
	RouteStats      = "GET /guilds/{id}/stats"
	RouteInventory  = "GET /players/{id}/inventory"
	RouteRanking    = "GET /ranking"
	RouteLogin      = "POST /login"
	RoutePost       = "POST /posts"
	RouteInitialize = "POST /initialize"
)

// The app's statement ids (STATEMENTS in index.php) that tests count.
const (
	StmtBoardPosts    = "board_posts"
	StmtBoardAuthor   = "board_author"  // the N+1: once per post on a board page
	StmtBoardAuthors  = "board_authors" // the fix: every author in one query
	StmtPlayerName    = "player_name"   // 150, 20 and 1 per request on three pages
	StmtInventory     = "inventory"     // the full scan for lack of an index
	StmtGuildActivity = "guild_activity"
	StmtBracket       = "bracket"
)

// The SQL text of the statements tests follow, as the app logs it (? for
// each value, the IN list as one ?).
const (
	SQLBoardAuthor   = "SELECT name, level FROM players WHERE id = ?"
	SQLBoardAuthors  = "SELECT id, name, level FROM players WHERE id IN (?)"
	SQLPlayerName    = "SELECT name FROM players WHERE id = ?"
	SQLInventory     = "SELECT id, kind, rarity, power FROM items WHERE player_id = ? ORDER BY power DESC, id LIMIT 50"
	SQLGuildActivity = "SELECT p.guild_id, COUNT(*) AS posts, ROUND(AVG(pl.level), 1) AS avg_level, MAX(p.id) AS last_post FROM posts p JOIN players pl ON pl.id = p.player_id WHERE p.id > ? GROUP BY p.guild_id ORDER BY posts DESC, p.guild_id"
)

// InventoryIndex is the DDL that fixes the inventory page.
const InventoryIndex = "ALTER TABLE items ADD INDEX ix_player (player_id)"

// Options changes the stack Start builds. The zero value is the default.
type Options struct {
	// MariaDB are server options over the distribution's defaults,
	// written to my.cnf (sandbox.MariaDBOptions.Options).
	MariaDB map[string]string
	// Pool are PHP-FPM pool settings over the sandbox's (pm,
	// pm.max_children, ...).
	Pool map[string]string
	// NoInitialize leaves the database empty: Start does not call
	// POST /initialize.
	NoInitialize bool
}

// Commands are command lines as stacktune's flags take them (parsed as
// apply.ParseCommandLine does and run without a shell).
type Commands struct {
	MySQLRestart string // restarts MariaDB; returns once it answers
	MySQLCheck   string // mariadbd --defaults-file=my.cnf --help --verbose
	NginxTest    string // nginx -t with the server's prefix and files
	NginxReload  string // reloads nginx; returns once the new workers serve
	PHPFPMTest   string // php-fpm -t with the master's options
	PHPFPMReload string // reloads PHP-FPM; returns once the pool answers
	AppRestart   string // the app's restart: PHP-FPM's reload
	FixOn        string // the board's N+1 fix on (fix.sh on)
	FixOff       string // the board's N+1 fix off (fix.sh off)
}

// Stack is the running guildboard stack of a test.
type Stack struct {
	DB    *sandbox.MariaDB
	FPM   *sandbox.PHPFPM
	Nginx *sandbox.Nginx

	URL    string // base URL, http://127.0.0.1:PORT (no trailing slash)
	DSN    string // root over the unix socket, database guildboard
	AppDSN string // the app's user over TCP, as the app connects

	AppDir     string // the app's copy: index.php, config.json, fix.sh, settings.json
	ConfigPath string // AppDir/config.json, the code switches
	RequestLog string // the app's JSON lines, one per request

	NginxConf     string // nginx.conf
	AccessLog     string // nginx's access log, log_format AccessLogFormat
	PHPFPMConf    string // php-fpm.conf (its [global] includes the pool)
	PoolPath      string // the pool's file
	MySQLConf     string // the my.cnf drop-in stacktune writes, in the conf dir my.cnf includes
	Scenario      string // the scenario file (see ScenarioText)
	TopRanked     string // the name GET /ranking puts first, computed here from the data
	InitDuration  time.Duration
	Commands      Commands
	controlSocket string
}

// AccessLogFormat is the log_format of AccessLog: combined, then
// $request_time and $upstream_response_time.
const (
	AccessLogFormat     = "timed"
	accessLogFormatText = `'$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time'`
)

// AppSource returns testdata/guildboard of this checkout.
func AppSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "guildboard")
}

// Start builds the stack for t (see the package documentation) and
// stops it at the end of the test. It fails the test if any part does not
// start.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	ctx := context.Background()
	s := &Stack{}
	s.DB = sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true, ServerDefaults: true, Options: opts.MariaDB})
	s.DSN = s.DB.DSN(Schema)
	s.AppDSN = fmt.Sprintf("%s:%s@tcp(127.0.0.1:%d)/%s", appUser, appPassword, s.DB.Port(), Schema)
	s.MySQLConf = filepath.Join(s.DB.ConfDir(), "99-stacktune.cnf")
	for _, q := range []string{
		"CREATE DATABASE " + Schema,
		fmt.Sprintf("CREATE USER %s@'127.0.0.1' IDENTIFIED BY '%s'", appUser, appPassword),
		fmt.Sprintf("GRANT ALL ON %s.* TO %s@'127.0.0.1'", Schema, appUser),
	} {
		if _, err := s.DB.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("guildboard: %s: %v", q, err)
		}
	}

	work := t.TempDir()
	s.AppDir = filepath.Join(work, "app")
	s.ConfigPath = filepath.Join(s.AppDir, "config.json")
	s.RequestLog = filepath.Join(work, "requests.jsonl")
	if err := copyApp(AppSource(), s.AppDir); err != nil {
		t.Fatal(err)
	}
	settings, _ := json.MarshalIndent(map[string]any{
		"db": map[string]any{
			"host": "127.0.0.1", "port": s.DB.Port(), "user": appUser, "password": appPassword, "database": Schema,
		},
		"request_log": s.RequestLog,
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(s.AppDir, "settings.json"), append(settings, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}

	pool := map[string]string{"catch_workers_output": "yes", "request_terminate_timeout": "300s"}
	for k, v := range opts.Pool {
		pool[k] = v
	}
	s.FPM = sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Extensions: []string{"mysqlnd", "mysqli"}, Pool: pool})
	s.PHPFPMConf, s.PoolPath = s.FPM.ConfigPath(), s.FPM.PoolPath()

	s.Nginx = sandboxtest.NewNginx(t, sandbox.NginxOptions{FullConfig: nginxConfig(s.AppDir, s.FPM.Socket())})
	s.URL = strings.TrimSuffix(s.Nginx.URL(), "/")
	s.NginxConf = s.Nginx.ConfigPath()
	s.AccessLog = s.Nginx.AccessLogPath()

	s.serveControl(t)
	s.Commands = s.commands()

	if !opts.NoInitialize {
		begin := time.Now()
		if err := s.Initialize(ctx, true); err != nil {
			t.Fatal(err)
		}
		s.InitDuration = time.Since(begin)
		top, err := s.topRanked(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.TopRanked = top
	}
	s.Scenario = filepath.Join(work, "guildboard.yaml")
	if err := os.WriteFile(s.Scenario, []byte(ScenarioText(s.URL, s.TopRanked)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetRequests(); err != nil {
		t.Fatal(err)
	}
	return s
}

// copyApp copies the app's files (index.php, config.json, fix.sh) with
// their modes.
func copyApp(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("guildboard: %w", err)
	}
	for _, name := range []string{"index.php", "config.json", "fix.sh"} {
		fi, err := os.Stat(filepath.Join(src, name))
		if err != nil {
			return fmt.Errorf("guildboard: the app's source: %w", err)
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return fmt.Errorf("guildboard: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("guildboard: %w", err)
		}
	}
	return nil
}

// nginxConfig is the full nginx.conf: every request to the app's
// index.php through the pool's socket, logged with its request time.
func nginxConfig(appDir, socket string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	return user + `worker_processes 1;
pid {{DIR}}/nginx.pid;
error_log {{DIR}}/error.log;
events { worker_connections 1024; }
http {
	log_format ` + AccessLogFormat + ` ` + accessLogFormatText + `;
	access_log {{DIR}}/access.log ` + AccessLogFormat + `;
	client_body_temp_path {{DIR}}/tmp/client_body;
	proxy_temp_path {{DIR}}/tmp/proxy;
	fastcgi_temp_path {{DIR}}/tmp/fastcgi;
	uwsgi_temp_path {{DIR}}/tmp/uwsgi;
	scgi_temp_path {{DIR}}/tmp/scgi;
	server {
		listen 127.0.0.1:{{PORT}};
		location / {
			fastcgi_pass unix:` + socket + `;
			fastcgi_read_timeout 300s;
			fastcgi_param SCRIPT_FILENAME ` + appDir + `/index.php;
			fastcgi_param SCRIPT_NAME /index.php;
			fastcgi_param DOCUMENT_ROOT ` + appDir + `;
			fastcgi_param REQUEST_METHOD $request_method;
			fastcgi_param REQUEST_URI $request_uri;
			fastcgi_param QUERY_STRING $query_string;
			fastcgi_param CONTENT_TYPE $content_type;
			fastcgi_param CONTENT_LENGTH $content_length;
			fastcgi_param SERVER_PROTOCOL $server_protocol;
			fastcgi_param SERVER_NAME $server_name;
			fastcgi_param SERVER_PORT $server_port;
			fastcgi_param REMOTE_ADDR $remote_addr;
			fastcgi_param REMOTE_PORT $remote_port;
		}
	}
}
`
}

// Initialize calls POST /initialize (?full=1 with full: the data is
// loaded again even if it is there).
func (s *Stack) Initialize(ctx context.Context, full bool) error {
	u := s.URL + "/initialize"
	if full {
		u += "?full=1"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("guildboard: POST /initialize: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"language":"php"`) {
		return fmt.Errorf("guildboard: POST /initialize: %s: %s", resp.Status, body)
	}
	return nil
}

// ResetRequests empties the app's request log.
func (s *Stack) ResetRequests() error {
	if err := os.Truncate(s.RequestLog, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("guildboard: %w", err)
	}
	return nil
}

// Requests reads the app's request log (see ReadRequests).
func (s *Stack) Requests() ([]Request, error) { return ReadRequests(s.RequestLog) }

// PHPFPMPIDs returns the PHP-FPM master's pid and its workers' pids.
func (s *Stack) PHPFPMPIDs() (master int, workers []int) {
	return s.FPM.PID(), s.FPM.Workers()
}

// Fix turns the board's N+1 fix on or off with its command, as a user or
// stacktune would run it.
func (s *Stack) Fix(ctx context.Context, on bool) error {
	cmd := s.Commands.FixOff
	if on {
		cmd = s.Commands.FixOn
	}
	return runCommand(ctx, cmd)
}

// TuneFlags returns the stack's wiring as flags of stacktune tune (and
// diagnose): the server and its drop-in, check and restart; nginx's
// configuration, binary, check and reload; PHP-FPM's. The load (the
// scenario, -d, -c) and --app-restart (PHP opens its connections per
// request: none needed) are the caller's.
func (s *Stack) TuneFlags() []string {
	return []string{
		"--dsn", s.DSN,
		"--mysql-conf", s.MySQLConf,
		"--mysql-check", s.Commands.MySQLCheck,
		"--mysql-restart", s.Commands.MySQLRestart,
		"--nginx-conf", s.NginxConf,
		"--nginx-bin", s.Nginx.Binary(),
		"--nginx-test", s.Commands.NginxTest,
		"--nginx-reload", s.Commands.NginxReload,
		"--nginx-probe", s.URL + "/",
		"--php-fpm-conf", s.PHPFPMConf,
		"--php-fpm-bin", s.FPM.Binary(),
		"--php-fpm-test", s.Commands.PHPFPMTest,
		"--php-fpm-reload", s.Commands.PHPFPMReload,
	}
}

// commands renders the stack's command lines.
func (s *Stack) commands() Commands {
	ctl := func(path string) string {
		return commandLine("curl", "-sS", "--fail-with-body", "--max-time", "300", "-X", "POST", "--unix-socket", s.controlSocket, "http://guildboard"+path)
	}
	fix := filepath.Join(s.AppDir, "fix.sh")
	return Commands{
		MySQLRestart: ctl("/mysql/restart"),
		MySQLCheck:   commandLine(s.DB.Binary(), "--defaults-file="+s.DB.DefaultsFile(), "--help", "--verbose"),
		NginxTest:    commandLine(s.Nginx.Binary(), "-p", s.Nginx.Prefix(), "-c", s.NginxConf, "-e", s.Nginx.ErrorLogPath(), "-g", "daemon off;", "-t"),
		NginxReload:  ctl("/nginx/reload"),
		PHPFPMTest:   commandLine(s.FPM.TestCommand()...),
		PHPFPMReload: ctl("/php-fpm/reload"),
		AppRestart:   ctl("/php-fpm/reload"),
		FixOn:        commandLine(fix, "on"),
		FixOff:       commandLine(fix, "off"),
	}
}

// serveControl serves the restarts and reloads of the stack's servers on
// a unix socket, for the commands stacktune runs.
func (s *Stack) serveControl(t testing.TB) {
	t.Helper()
	dir, err := os.MkdirTemp("", "gbctl")
	if err != nil {
		t.Fatal(err)
	}
	s.controlSocket = filepath.Join(dir, "control.sock")
	ln, err := net.Listen("unix", s.controlSocket)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	handle := func(pattern string, fn func(context.Context) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := fn(r.Context()); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, "ok")
		})
	}
	handle("POST /mysql/restart", s.DB.Restart)
	handle("POST /nginx/reload", s.Nginx.Reload)
	handle("POST /php-fpm/reload", s.FPM.Reload)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		os.RemoveAll(dir)
	})
}

// commandLine quotes argv for apply.ParseCommandLine.
func commandLine(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:@%+,-") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// runCommand runs one of the stack's command lines as stacktune does:
// split by apply.ParseCommandLine, run without a shell.
func runCommand(ctx context.Context, line string) error {
	argv, err := apply.ParseCommandLine(line)
	if err != nil {
		return fmt.Errorf("guildboard: %q: %w", line, err)
	}
	if len(argv) == 0 {
		return errors.New("guildboard: empty command")
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("guildboard: %s: %w\n%s", line, err, out)
	}
	return nil
}

// topRanked computes, from the data, the player GET /ranking puts first:
// rank_players() of index.php in Go.
func (s *Stack) topRanked(ctx context.Context) (string, error) {
	rows, err := s.DB.DB().QueryContext(ctx, "SELECT id, name, score FROM "+Schema+".players WHERE id BETWEEN 1 AND ?", RankedPlayers)
	if err != nil {
		return "", fmt.Errorf("guildboard: ranking: %w", err)
	}
	defer rows.Close()
	type ranked struct {
		id   int
		name string
		key  int64
	}
	var all []ranked
	for rows.Next() {
		var r ranked
		var score int
		if err := rows.Scan(&r.id, &r.name, &score); err != nil {
			return "", err
		}
		h := r.name + ":" + strconv.Itoa(score)
		for i := 0; i < rankRounds; i++ {
			sum := sha256.Sum256([]byte(h + strconv.Itoa(i)))
			h = hex.EncodeToString(sum[:])
		}
		r.key, _ = strconv.ParseInt(h[:7], 16, 64)
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(all) != RankedPlayers {
		return "", fmt.Errorf("guildboard: ranking: %d players, want %d", len(all), RankedPlayers)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].key != all[j].key {
			return all[i].key > all[j].key
		}
		return all[i].id < all[j].id
	})
	return all[0].name, nil
}
