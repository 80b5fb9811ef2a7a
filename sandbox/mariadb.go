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
	"strconv"
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
	// With ConfigFiles they are written to my.cnf instead, as key=value
	// (a bare key for an empty value), after the defaults.
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
	// ConfigFiles makes the server read its options from files, as a
	// packaged MariaDB does, instead of the command line: the sandbox
	// writes Dir()/my.cnf (DefaultsFile()) with one [mysqld] section
	// holding the managed options, the defaults and Options, in that
	// order, followed by "!includedir Dir()/conf.d" (ConfDir(), created
	// empty), and starts mariadbd with --defaults-file=Dir()/my.cnf as its
	// only argument. Files added to ConfDir() (named *.cnf, with a
	// [mysqld] section) take effect at the next Restart; CheckConfig
	// validates them first. They must not change the managed options
	// (datadir, socket, port, ...): Restart would not find the server.
	// Values are written to my.cnf as given, unquoted.
	ConfigFiles bool
	// NoConfDir (with ConfigFiles) leaves the "!includedir" line out of
	// my.cnf: the server reads my.cnf alone, as one started with a
	// defaults file of its own that includes nothing; ConfDir() is "".
	NoConfDir bool
	// ConfigTail (with ConfigFiles) is written at the end of my.cnf,
	// after the "!includedir" of conf.d: settings read after conf.d
	// (under a "[mysqld]" line of their own), or more "!include" and
	// "!includedir" lines, for example of files a caller's Dir already
	// holds. It must not change the managed options.
	ConfigTail string
	// ServerDefaults leaves out the sandbox's small test defaults
	// (innodb_buffer_pool_size=64M, innodb_log_file_size=8M,
	// aria_pagecache_buffer_size=8M, key_buffer_size=8M; skip_name_resolve
	// is kept), so that the server runs with mariadbd's compiled-in
	// defaults, as Debian's mariadb-server package does (its
	// 50-server.cnf sets nothing that matters for performance). InnoDB
	// resizes the template's 8M redo log to the configured size at start.
	ServerDefaults bool
}

// MariaDB is a running throwaway mariadbd. Root has an empty password, over
// the unix socket and over TCP on 127.0.0.1.
type MariaDB struct {
	inst     instance
	bin      string
	datadir  string
	socket   string
	port     int
	slowLog  string
	confFile string // Dir()/my.cnf with ConfigFiles, else ""
	confDir  string // Dir()/conf.d with ConfigFiles, else ""
	confTail string // MariaDBOptions.ConfigTail
	version  string
	db       *sql.DB
	timeout  time.Duration

	mu      sync.Mutex // serialises Restart, Stop and the process accessors
	args    []string   // mariadbd's command line, reused by Restart and CheckConfig
	stopped bool
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

// mariadbServerDefaults are the defaults kept with ServerDefaults: name
// resolution only slows connections down and matters to no test.
var mariadbServerDefaults = [][2]string{
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
	if !opts.ConfigFiles && (opts.NoConfDir || opts.ConfigTail != "") {
		return nil, errors.New("sandbox: MariaDBOptions.NoConfDir and ConfigTail need ConfigFiles")
	}
	bin, err := lookBinary(opts.Binary, mariadbPackage, "mariadbd", "mysqld")
	if err != nil {
		return nil, err
	}
	installBin, err := lookBinary(opts.InstallBinary, mariadbPackage, "mariadb-install-db", "mysql_install_db")
	if err != nil {
		return nil, err
	}
	user, err := checkUserOptions(opts.Options)
	if err != nil {
		return nil, err
	}
	tmpl, err := mariadbTemplate(ctx, bin, installBin, user.initArgs)
	if err != nil {
		return nil, err
	}

	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	m := mariadbLayout(bin, dir, owned, opts.ConfigFiles)
	if opts.NoConfDir {
		m.confDir = ""
	}
	m.confTail = opts.ConfigTail
	ok := false
	defer func() {
		if !ok {
			_ = m.inst.stop()
		}
	}()
	if err := checkSocketPath(m.socket); err != nil {
		return nil, err
	}
	if v, set := user.byName["slow_query_log_file"]; set && v != "" {
		m.slowLog = v
		if !filepath.IsAbs(v) {
			m.slowLog = filepath.Join(m.datadir, v)
		}
	}
	if err := m.prepareDirs(tmpl); err != nil {
		return nil, err
	}
	if m.db, err = rootPool(m.socket); err != nil {
		return nil, err
	}

	defaults := mariadbDefaults
	if opts.ServerDefaults {
		defaults = mariadbServerDefaults
	}
	m.timeout = orDefault(opts.StartTimeout, mariadbStartTimeout)
	err = startWithPortRetry(ctx, func(port int) error {
		m.port = port
		options := append(m.managedOptions(port), defaults...)
		for _, k := range user.keys {
			options = append(options, [2]string{k, opts.Options[k]})
		}
		if err := m.setArgs(options); err != nil {
			return err
		}
		return m.inst.launch(ctx, m.timeout, bin, m.args, m.db.PingContext)
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

// userOptions are the caller's MariaDBOptions.Options, checked.
type userOptions struct {
	keys     []string          // as given, sorted
	byName   map[string]string // values by normOption name
	initArgs []string          // those the data dir is initialised with
}

// checkUserOptions refuses options with no name and those the sandbox
// manages, and picks out those that must be fixed when the data dir is
// initialised.
func checkUserOptions(options map[string]string) (userOptions, error) {
	u := userOptions{keys: make([]string, 0, len(options)), byName: map[string]string{}}
	for k := range options {
		u.keys = append(u.keys, k)
	}
	sort.Strings(u.keys)
	for _, k := range u.keys {
		n := normOption(k)
		if n == "" {
			return u, errors.New("sandbox: MariaDB option with an empty name")
		}
		if mariadbManaged[n] {
			return u, fmt.Errorf("sandbox: MariaDB option %q is managed by the sandbox and cannot be set", k)
		}
		u.byName[n] = options[k]
		if mariadbInitOptions[n] {
			u.initArgs = append(u.initArgs, optionArg(k, options[k]))
		}
	}
	return u, nil
}

// mariadbLayout is where a server's files live in its directory dir:
// data dir, socket, logs and, with configFiles, my.cnf and conf.d. Its
// Stop closes the root pool before the process stops.
func mariadbLayout(bin, dir string, owned, configFiles bool) *MariaDB {
	m := &MariaDB{
		bin: bin,
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
	if configFiles {
		m.confFile = filepath.Join(dir, "my.cnf")
		m.confDir = filepath.Join(dir, "conf.d")
	}
	m.inst.beforeStop = func() {
		if m.db != nil {
			_ = m.db.Close()
		}
	}
	return m
}

// tmpDir is the server's tmpdir, inside Dir().
func (m *MariaDB) tmpDir() string { return filepath.Join(m.inst.dir, "tmp") }

// prepareDirs fills the server's directory before its first start: the
// data dir copied from the template tmpl, the tmpdir and, with
// ConfigFiles, an empty conf.d.
func (m *MariaDB) prepareDirs(tmpl string) error {
	if _, err := os.Stat(m.datadir); err == nil {
		return fmt.Errorf("sandbox: %s already exists: MariaDBOptions.Dir must not hold a data dir", m.datadir)
	}
	if err := os.CopyFS(m.datadir, os.DirFS(tmpl)); err != nil {
		return fmt.Errorf("sandbox: copy MariaDB data dir template %s: %w", tmpl, err)
	}
	if err := os.MkdirAll(m.tmpDir(), 0o700); err != nil {
		return fmt.Errorf("sandbox: create tmpdir: %w", err)
	}
	if m.confDir != "" {
		if err := os.MkdirAll(m.confDir, 0o755); err != nil {
			return fmt.Errorf("sandbox: create conf.d: %w", err)
		}
	}
	return nil
}

// rootPool is the connection pool for root over the unix socket, quiet
// about the dead connections a Restart leaves.
func rootPool(socket string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = socket
	cfg.Timeout = 2 * time.Second
	// The driver logs every dead pooled connection it drops, which is
	// what every connection is after a Restart; errors reach the caller
	// anyway.
	cfg.Logger = quietLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: MariaDB connector: %w", err)
	}
	return sql.OpenDB(connector), nil
}

// managedOptions are the options the sandbox sets itself for a server on
// port: its files in Dir(), 127.0.0.1, and root as the user when run as
// root.
func (m *MariaDB) managedOptions(port int) [][2]string {
	options := [][2]string{
		{"datadir", m.datadir},
		{"socket", m.socket},
		{"port", strconv.Itoa(port)},
		{"bind-address", "127.0.0.1"},
		{"pid-file", filepath.Join(m.inst.dir, "mysqld.pid")},
		{"log-error", m.inst.logs[0]},
		{"tmpdir", m.tmpDir()},
		{"slow-query-log-file", m.slowLog},
	}
	if os.Geteuid() == 0 {
		options = append(options, [2]string{"user", "root"})
	}
	return options
}

// setArgs makes mariadbd's command line from options (later ones
// override earlier ones): with ConfigFiles it writes them to my.cnf and
// passes only that file, else it passes each as --key=value.
func (m *MariaDB) setArgs(options [][2]string) error {
	if m.confFile != "" {
		if err := writeMyCnf(m.confFile, m.confDir, m.confTail, options); err != nil {
			return err
		}
		m.args = []string{"--defaults-file=" + m.confFile}
		return nil
	}
	m.args = []string{"--no-defaults"} // must come first: never read /etc/mysql
	for _, o := range options {
		m.args = append(m.args, optionArg(o[0], o[1]))
	}
	return nil
}

// quietLogger discards go-sql-driver/mysql's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// writeMyCnf writes the [mysqld] section of options to path, followed by
// an !includedir of confDir (none when confDir is "") and tail.
func writeMyCnf(path, confDir, tail string, options [][2]string) error {
	var b strings.Builder
	b.WriteString("# Generated by the stacktune sandbox package.\n")
	if confDir != "" {
		b.WriteString("# Files in " + confDir + " are read after this one and override it.\n")
	}
	b.WriteString("[mysqld]\n")
	for _, o := range options {
		k := strings.TrimLeft(o[0], "-")
		if strings.ContainsAny(k+o[1], "\n\r") {
			return fmt.Errorf("sandbox: MariaDB option %q: a value in my.cnf cannot hold a line break", o[0])
		}
		if o[1] == "" {
			b.WriteString(k + "\n")
		} else {
			b.WriteString(k + "=" + o[1] + "\n")
		}
	}
	if confDir != "" {
		b.WriteString("\n!includedir " + confDir + "\n")
	}
	if tail != "" {
		b.WriteString(strings.TrimSuffix(tail, "\n") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("sandbox: write my.cnf: %w", err)
	}
	return nil
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
func (m *MariaDB) Version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// DB returns a connection pool for root over the unix socket, with no
// default database. It is owned by the server: Stop closes it.
func (m *MariaDB) DB() *sql.DB { return m.db }

// PID returns the mariadbd process id (the new process after a Restart).
func (m *MariaDB) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inst.pid()
}

// Binary returns the path of the mariadbd binary the server runs, for
// callers that run it themselves (for example --help --verbose).
func (m *MariaDB) Binary() string { return m.bin }

// DefaultsFile returns Dir()/my.cnf with ConfigFiles, else "".
func (m *MariaDB) DefaultsFile() string { return m.confFile }

// ConfDir returns Dir()/conf.d, the directory my.cnf includes, with
// ConfigFiles, else "" (and "" with NoConfDir). Add *.cnf files there, then CheckConfig and
// Restart.
func (m *MariaDB) ConfDir() string { return m.confDir }

// Stop shuts the server down (SIGTERM, then SIGKILL after a grace period),
// closes DB() and removes the temporary directory. It is idempotent and safe
// to call from any goroutine; a Stop during a Restart waits for it.
func (m *MariaDB) Stop() error {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	return m.inst.stop()
}

// Restart shuts the server down gracefully (SIGTERM to its process group,
// waiting as Stop does, SIGKILL after the grace period), keeping Dir() and
// the data, then starts mariadbd again with the same command line: the
// same data dir, socket and port, and with ConfigFiles my.cnf and conf.d
// read afresh. It returns once the server answers a ping, or with an error
// that includes the tail of the error log (the server is then down, and
// Restart may be called again after fixing the configuration). DB() stays
// usable: its dead connections are replaced by new ones. PID() then
// returns the new process. The error log is appended to, not emptied.
func (m *MariaDB) Restart(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return errors.New("sandbox: MariaDB restart: the server has been stopped")
	}
	if p := m.inst.proc; p != nil {
		p.kill(m.inst.grace)
		m.inst.proc = nil
	}
	if err := m.inst.relaunch(ctx, m.timeout, m.bin, m.args, m.db.PingContext); err != nil {
		return fmt.Errorf("sandbox: MariaDB restart: %w", err)
	}
	var v string
	if err := m.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return fmt.Errorf("sandbox: MariaDB restart: SELECT VERSION(): %w", err)
	}
	m.version = v
	return nil
}

// CheckConfig validates the server's configuration as the next Restart
// would read it (with ConfigFiles, my.cnf and every file in conf.d)
// without touching the running server: it runs the mariadbd binary with
// the server's arguments and --help --verbose, which parses every option
// and prints the resulting values without starting a server. MariaDB 10.11
// has no --validate-config (MySQL 8.0's flag): mariadbd rejects it as an
// unknown option only after InnoDB has opened the data dir, which it must
// not do beside the running server. An unknown
// variable makes mariadbd exit with an error; a bad value for a plugin's
// variable (innodb_buffer_pool_size=abc) only logs "[ERROR] ... Disabling
// plugin" and exits 0, and a file whose options come before any [group]
// only prints "error: Found option without preceding group" and exits 0
// (mariadbd then starts without that file), so every "[ERROR]" or
// "error:" line is a failure too. The error returned holds those lines.
func (m *MariaDB) CheckConfig(ctx context.Context) error {
	m.mu.Lock()
	args := append(append([]string(nil), m.args...), "--help", "--verbose")
	m.mu.Unlock()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, m.bin, args...)
	cmd.Dir = m.inst.dir
	cmd.Stderr = &stderr
	runErr := cmd.Run() // stdout, the help text, is discarded
	var errLines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "[ERROR]") || strings.HasPrefix(strings.ToLower(l), "error:") || strings.Contains(l, "unknown option") {
			errLines = append(errLines, strings.TrimSpace(l))
		}
	}
	if runErr == nil && len(errLines) == 0 {
		return nil
	}
	if len(errLines) == 0 {
		errLines = tailLines(stderr.String(), logTailLines)
	}
	what := m.confFile
	if what == "" {
		what = "the command line"
	}
	if runErr == nil {
		runErr = errors.New("errors reported")
	}
	return fmt.Errorf("sandbox: MariaDB configuration check of %s (%s %s): %w\n%s",
		what, m.bin, strings.Join(args, " "), runErr, strings.Join(errLines, "\n"))
}

// tailLines returns up to n last non-empty lines of s.
func tailLines(s string, n int) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

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
