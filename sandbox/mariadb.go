package sandbox

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDBOptions configures StartMariaDB. The zero value is a working
// configuration.
type MariaDBOptions struct {
	// Options are extra server options (what a my.cnf [mysqld] section
	// would hold), passed to mariadbd as --key=value after the sandbox's
	// defaults, so they override them; an empty value passes a bare --key.
	// Keys may use '_' or '-'. Example:
	//
	//	map[string]string{"slow_query_log": "ON", "long_query_time": "0", "performance_schema": "ON"}
	//
	// The defaults are small, for tests: innodb_buffer_pool_size=64M,
	// innodb_log_file_size=8M, aria_pagecache_buffer_size=8M,
	// key_buffer_size=8M, skip_name_resolve, and slow_query_log_file and
	// tmpdir inside Dir(). The options the sandbox manages (datadir,
	// socket, port, bind_address, pid_file, log_error, user, defaults
	// files) are rejected.
	Options map[string]string
	// Dir is the directory holding the data dir, socket and logs. Empty
	// means a new temporary directory that Stop removes; a caller's Dir is
	// created if needed and left in place by Stop. It must not already
	// hold a data dir, and must be short enough for a unix socket path.
	Dir string
	// StartTimeout bounds the wait for the server to answer; default 60s.
	StartTimeout time.Duration
	// Binary overrides the mariadbd binary (a path, or a name looked up in
	// PATH and /usr/sbin). Default: mariadbd, then mysqld.
	Binary string
	// InstallBinary overrides the data dir initialiser. Default:
	// mariadb-install-db, then mysql_install_db.
	InstallBinary string
}

// MariaDB is a running throwaway mariadbd. Root has an empty password, over
// the unix socket and over TCP on 127.0.0.1.
type MariaDB struct {
	inst    instance
	datadir string
	socket  string
	port    int
	slowLog string
	version string
	db      *sql.DB
}

const (
	mariadbPackage        = "mariadb-server"
	mariadbStartTimeout   = 60 * time.Second
	mariadbGrace          = 30 * time.Second
	mariadbTemplateRedo   = "8M" // innodb_log_file_size of the template
	mariadbTemplatePrefix = "stacktune-mariadb-template-"
)

// mariadbDefaults are the server options used unless Options overrides them.
var mariadbDefaults = [][2]string{
	{"innodb_buffer_pool_size", "64M"},
	{"innodb_log_file_size", mariadbTemplateRedo},
	{"aria_pagecache_buffer_size", "8M"},
	{"key_buffer_size", "8M"},
	{"skip_name_resolve", ""},
}

// mariadbManaged are option keys the sandbox sets itself.
var mariadbManaged = map[string]bool{
	"datadir": true, "socket": true, "port": true, "bind_address": true,
	"pid_file": true, "log_error": true, "user": true, "no_defaults": true,
	"defaults_file": true, "defaults_extra_file": true, "defaults_group_suffix": true,
}

// mariadbInitOptions must be fixed when the data dir is initialised, so
// they are passed to mariadb-install-db too (and key the template).
var mariadbInitOptions = map[string]bool{
	"innodb_page_size": true, "innodb_data_file_path": true,
	"innodb_undo_tablespaces": true, "lower_case_table_names": true,
}

// normOption normalises an option name for comparison: lower case, '_'.
func normOption(k string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(strings.TrimLeft(k, "-"))), "-", "_")
}

// optionArg formats one mariadbd command-line option.
func optionArg(k, v string) string {
	k = strings.TrimLeft(k, "-")
	if v == "" {
		return "--" + k
	}
	return "--" + k + "=" + v
}

// StartMariaDB initialises a data dir (a copy of a cached template), starts
// mariadbd on a unix socket in Dir() and a free port on 127.0.0.1, and
// waits until root can ping it over the socket.
func StartMariaDB(ctx context.Context, opts MariaDBOptions) (*MariaDB, error) {
	bin, err := lookBinary(opts.Binary, mariadbPackage, "mariadbd", "mysqld")
	if err != nil {
		return nil, err
	}
	installBin, err := lookBinary(opts.InstallBinary, mariadbPackage, "mariadb-install-db", "mysql_install_db")
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(opts.Options))
	user := map[string]string{}
	var initArgs []string
	for k := range opts.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := normOption(k)
		if n == "" {
			return nil, errors.New("sandbox: MariaDB option with an empty name")
		}
		if mariadbManaged[n] {
			return nil, fmt.Errorf("sandbox: MariaDB option %q is managed by the sandbox and cannot be set", k)
		}
		user[n] = opts.Options[k]
		if mariadbInitOptions[n] {
			initArgs = append(initArgs, optionArg(k, opts.Options[k]))
		}
	}
	tmpl, err := mariadbTemplate(ctx, bin, installBin, initArgs)
	if err != nil {
		return nil, err
	}

	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	m := &MariaDB{
		inst: instance{
			name:  "mariadbd",
			dir:   dir,
			owned: owned,
			grace: mariadbGrace,
			logs:  []string{filepath.Join(dir, "error.log")},
		},
		datadir: filepath.Join(dir, "data"),
		socket:  filepath.Join(dir, "mysqld.sock"),
		slowLog: filepath.Join(dir, "slow.log"),
	}
	m.inst.beforeStop = func() {
		if m.db != nil {
			_ = m.db.Close()
		}
	}
	ok := false
	defer func() {
		if !ok {
			_ = m.inst.stop()
		}
	}()
	if err := checkSocketPath(m.socket); err != nil {
		return nil, err
	}
	if v, set := user["slow_query_log_file"]; set && v != "" {
		m.slowLog = v
		if !filepath.IsAbs(v) {
			m.slowLog = filepath.Join(m.datadir, v)
		}
	}
	if _, err := os.Stat(m.datadir); err == nil {
		return nil, fmt.Errorf("sandbox: %s already exists: MariaDBOptions.Dir must not hold a data dir", m.datadir)
	}
	if err := os.CopyFS(m.datadir, os.DirFS(tmpl)); err != nil {
		return nil, fmt.Errorf("sandbox: copy MariaDB data dir template %s: %w", tmpl, err)
	}
	tmpDir := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: create tmpdir: %w", err)
	}

	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = m.socket
	cfg.Timeout = 2 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: MariaDB connector: %w", err)
	}
	m.db = sql.OpenDB(connector)

	timeout := orDefault(opts.StartTimeout, mariadbStartTimeout)
	err = startWithPortRetry(ctx, func(port int) error {
		m.port = port
		args := []string{
			"--no-defaults", // must come first: never read /etc/mysql
			"--datadir=" + m.datadir,
			"--socket=" + m.socket,
			fmt.Sprintf("--port=%d", port),
			"--bind-address=127.0.0.1",
			"--pid-file=" + filepath.Join(dir, "mysqld.pid"),
			"--log-error=" + m.inst.logs[0],
			"--tmpdir=" + tmpDir,
			"--slow-query-log-file=" + m.slowLog,
		}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		for _, d := range mariadbDefaults {
			args = append(args, optionArg(d[0], d[1]))
		}
		for _, k := range keys {
			args = append(args, optionArg(k, opts.Options[k]))
		}
		return m.inst.launch(ctx, timeout, bin, args, m.db.PingContext)
	})
	if err != nil {
		return nil, err
	}
	if err := m.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&m.version); err != nil {
		return nil, fmt.Errorf("sandbox: MariaDB SELECT VERSION(): %w", err)
	}
	ok = true
	return m, nil
}

// Socket returns the path of the server's unix socket.
func (m *MariaDB) Socket() string { return m.socket }

// Port returns the server's TCP port on 127.0.0.1.
func (m *MariaDB) Port() int { return m.port }

// DataDir returns the server's data directory (Dir()/data).
func (m *MariaDB) DataDir() string { return m.datadir }

// Dir returns the directory holding the server's data dir, socket and logs.
func (m *MariaDB) Dir() string { return m.inst.dir }

// ErrorLogPath returns the path of the server's error log.
func (m *MariaDB) ErrorLogPath() string { return m.inst.logs[0] }

// SlowLogPath returns the path of the slow query log: the
// slow_query_log_file option if given, else Dir()/slow.log. The log is
// written only when slow_query_log is ON.
func (m *MariaDB) SlowLogPath() string { return m.slowLog }

// DSN returns a go-sql-driver/mysql DSN for root over the unix socket,
// selecting database db (may be empty): root@unix(/path/mysqld.sock)/db.
func (m *MariaDB) DSN(db string) string { return fmt.Sprintf("root@unix(%s)/%s", m.socket, db) }

// TCPDSN returns a go-sql-driver/mysql DSN for root over TCP,
// selecting database db (may be empty): root@tcp(127.0.0.1:port)/db.
func (m *MariaDB) TCPDSN(db string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s", m.port, db)
}

// Version returns the server's SELECT VERSION(), e.g.
// "10.11.19-MariaDB-0+deb12u1" (MariaDB appends "-log" while the slow or
// general log is on).
func (m *MariaDB) Version() string { return m.version }

// DB returns a connection pool for root over the unix socket, with no
// default database. It is owned by the server: Stop closes it.
func (m *MariaDB) DB() *sql.DB { return m.db }

// PID returns the mariadbd process id.
func (m *MariaDB) PID() int { return m.inst.pid() }

// Stop shuts the server down (SIGTERM, then SIGKILL after a grace period),
// closes DB() and removes the temporary directory. It is idempotent and safe
// to call from any goroutine.
func (m *MariaDB) Stop() error { return m.inst.stop() }

// templateMu serialises template builds within the process; across
// processes the atomic rename in buildTemplate is enough.
var templateMu sync.Mutex

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// mariadbTemplate returns a pristine data dir for bin, initialised by
// installBin with initArgs. It is built once per binary, version and init
// options, and cached
// in os.TempDir()/stacktune-mariadb-template-<version>-<hash>, created
// under another name and renamed into place so concurrent processes never
// see a half-built template.
func mariadbTemplate(ctx context.Context, bin, installBin string, initArgs []string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--no-defaults", "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("sandbox: %s --version: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	versionLine := strings.TrimSpace(string(out))
	version := "unknown"
	if f := strings.Fields(versionLine); len(f) >= 3 && f[1] == "Ver" {
		version = f[2]
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%s", bin, versionLine, installBin, mariadbTemplateRedo, os.Geteuid(), strings.Join(initArgs, "\x00"))
	key := unsafeName.ReplaceAllString(version, "_") + "-" + hex.EncodeToString(h.Sum(nil))[:10]

	templateMu.Lock()
	defer templateMu.Unlock()
	final := filepath.Join(os.TempDir(), mariadbTemplatePrefix+key)
	data := filepath.Join(final, "data")
	marker := filepath.Join(final, "complete")
	if _, err := os.Stat(marker); err != nil {
		if err := buildTemplate(ctx, installBin, initArgs, final); err != nil {
			return "", err
		}
	}
	return data, nil
}

// buildTemplate runs the initialiser into a fresh directory and renames it
// to final (which must hold a "complete" marker afterwards).
func buildTemplate(ctx context.Context, installBin string, initArgs []string, final string) error {
	if _, err := os.Stat(filepath.Join(final, "complete")); err == nil {
		return nil // another process has just finished it
	}
	if _, err := os.Stat(final); err == nil {
		// A directory without the marker cannot come from a finished build
		// (the marker is written before the rename): it is debris.
		if err := os.RemoveAll(final); err != nil {
			return fmt.Errorf("sandbox: remove broken MariaDB template %s: %w", final, err)
		}
	}
	tmp, err := os.MkdirTemp(os.TempDir(), mariadbTemplatePrefix+"build-")
	if err != nil {
		return fmt.Errorf("sandbox: create MariaDB template dir: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	args := []string{
		"--no-defaults",
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--datadir=" + filepath.Join(tmp, "data"),
		"--innodb-log-file-size=" + mariadbTemplateRedo,
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, initArgs...)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, installBin, args...)
	logPath := filepath.Join(tmp, "install.log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("sandbox: create install log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	_ = log.Close()
	if runErr != nil {
		lines := tailFile(logPath, logTailLines)
		return fmt.Errorf("sandbox: %s %s: %w\n--- last %d lines of its output ---\n%s",
			installBin, strings.Join(args, " "), runErr, len(lines), strings.Join(lines, "\n"))
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte("ok\n"), 0o644); err != nil {
		return fmt.Errorf("sandbox: mark MariaDB template: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process may have won the race; its template is as good.
		if _, statErr := os.Stat(filepath.Join(final, "complete")); statErr == nil {
			return nil
		}
		return fmt.Errorf("sandbox: install MariaDB template: %w", err)
	}
	return nil
}
