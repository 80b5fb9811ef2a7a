package mysqlconf

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DropInName is the name of stacktune's drop-in in the directory the
// server includes: "99-" so that it sorts after the distribution's files.
const DropInName = "99-stacktune.cnf"

// Querier is what Locate needs of a connection; *sql.DB has it.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Options says how the server was reached and how Locate looks.
type Options struct {
	// DSN is how the client reached the server (a go-sql-driver DSN):
	// a server reached over TCP at an address that is not this host's is
	// not looked for here.
	DSN string
	// MariaDB picks the distribution's directory of the guess (MariaDB's
	// or MySQL's) and its binary.
	MariaDB bool
	// Proc is where /proc is ("/proc" when empty).
	Proc string
	// Run runs a server binary for its --help --verbose output and
	// returns its standard output, also when it exits non-zero (nil:
	// exec, bounded in time and bytes).
	Run func(ctx context.Context, argv []string) ([]byte, error)
	// LookPath finds the distribution's binary for a guess (nil: PATH,
	// then /usr/sbin).
	LookPath func(names ...string) string
}

// Config is where the running server's option files are and where the
// drop-in goes, with how that was found.
type Config struct {
	// Process is the server's process; nil when it is not on this host
	// (Guess).
	Process *Process `json:"process,omitempty"`
	// Search is the binary's search order and groups (empty with
	// --no-defaults).
	Search Search `json:"search"`
	// Files are the option files it read, in order, includes where they
	// stand.
	Files []string `json:"files,omitempty"`
	// Settings are the server groups' settings of those files in the
	// order read, then its command line's.
	Settings []Setting `json:"settings,omitempty"`
	// DropIn is where the drop-in goes ("" when the server includes no
	// directory, or reads no file: the reason is in Why); Via is the
	// "!includedir" that reads it.
	DropIn string   `json:"drop_in,omitempty"`
	Via    *Include `json:"via,omitempty"`
	// Check is the command that checks the option files as the server
	// reads them: its binary, its own defaults options, --help
	// --verbose (nil when no binary is known).
	Check []string `json:"check,omitempty"`
	// Guess is set when the server was not found on this host: DropIn
	// and Check are the distribution's.
	Guess bool `json:"guess,omitempty"`
	// Why is the one line that says where the drop-in goes and why.
	Why string `json:"why"`
	// Notes are what was skipped or could not be read, with why.
	Notes []string `json:"notes,omitempty"`

	includes []*Include
	starts   map[string]int // where each file read starts
	dropPos  int            // where the drop-in is read; 0: not read
}

// Distribution is the drop-in of a packaged server on Debian and Ubuntu,
// where MariaDB and MySQL read /etc/mysql/my.cnf, which includes the
// directory last: a guess when the server's own files are not known.
func Distribution(mariadb bool) string {
	if mariadb {
		return "/etc/mysql/mariadb.conf.d/" + DropInName
	}
	return "/etc/mysql/mysql.conf.d/" + DropInName
}

// serverSQL asks the server where its process and sockets are.
const serverSQL = "SELECT @@pid_file, @@socket, @@port, @@datadir"

// defaultGroups are the groups a server reads when its binary could not
// say (changeset.MyCnf's, and MariaDB's client-server).
var defaultGroups = []string{"mysqld", "server", "mariadb", "mariadbd", "client-server"}

// Locate finds the option files the server on db read and where a
// drop-in is read by it. It finds the server's process on this host (its
// pid file, or the process listening on its socket or port), reads its
// command line (--defaults-file, --defaults-extra-file, --no-defaults,
// --defaults-group-suffix), asks its binary for its search order
// (--help --verbose), and reads those files with their includes. When
// the process is not on this host, the Config is the distribution's
// guess, said so in Why. The error is only ctx's.
func Locate(ctx context.Context, db Querier, o Options) (*Config, error) {
	p, reason := find(ctx, db, o)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == nil {
		return guess(o, reason), nil
	}
	c := &Config{Process: p}
	c.read(ctx, o)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.choose()
	return c, nil
}

// find finds the server's process on this host; nil and why not when it
// is not here.
func find(ctx context.Context, db Querier, o Options) (*Process, string) {
	if cfg, err := mysql.ParseDSN(o.DSN); err == nil {
		if why := notLocal(ctx, cfg.Net, cfg.Addr); why != "" {
			return nil, why
		}
	}
	var pidFile, socket, datadir sql.NullString
	var port sql.NullInt64
	if err := db.QueryRowContext(ctx, serverSQL).Scan(&pidFile, &socket, &port, &datadir); err != nil {
		return nil, fmt.Sprintf("the server did not say where its process is (%s: %v)", serverSQL, err)
	}
	proc := procFS{root: o.Proc}
	if proc.root == "" {
		proc.root = "/proc"
	}
	ls, lerr := proc.listening(socket.String, int(port.Int64))
	where := listenText(socket.String, int(port.Int64))
	var pid int
	var foundBy string
	var notes []string
	pf := pidFile.String
	if pf != "" && !filepath.IsAbs(pf) && datadir.String != "" {
		pf = filepath.Join(datadir.String, pf)
	}
	if pf != "" {
		n, err := readPIDFile(pf)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("its pid file: %v", err))
		default:
			budget := maxDescriptors
			what, err := proc.owns(n, ls, &budget)
			switch {
			case what != "":
				pid, foundBy = n, fmt.Sprintf("its pid file %s (pid %d listens on its %s)", pf, n, what)
			case errors.Is(err, os.ErrPermission) && len(ls) > 0:
				notes = append(notes, fmt.Sprintf("pid %d of its pid file %s: its sockets cannot be read (run as root)", n, pf))
			case err != nil:
				notes = append(notes, fmt.Sprintf("pid %d of its pid file %s is not running here", n, pf))
			default:
				notes = append(notes, fmt.Sprintf("pid %d of its pid file %s does not listen on %s", n, pf, where))
			}
		}
	}
	if pid == 0 && len(ls) > 0 {
		n, what, skipped, err := proc.scan(ls)
		switch {
		case n > 0:
			pid, foundBy = n, "the process listening on its "+what
		case err != nil:
			notes = append(notes, err.Error())
		case skipped > 0:
			notes = append(notes, fmt.Sprintf("the sockets of %d processes cannot be read (run as root)", skipped))
		}
	}
	if pid == 0 {
		why := fmt.Sprintf("no process on this host listens on %s", where)
		if len(ls) > 0 {
			why = fmt.Sprintf("the process listening on %s was not found", where)
		}
		if lerr != nil {
			notes = append(notes, lerr.Error())
		}
		if len(notes) > 0 {
			why += ": " + strings.Join(notes, "; ")
		}
		return nil, why
	}
	if r := proc.rootOf(pid); r != "" && r != "/" {
		return nil, fmt.Sprintf("pid %d, found by %s, runs under another root directory (%s: a container?), whose files are not this host's", pid, foundBy, r)
	}
	p, err := proc.process(pid)
	if err != nil {
		return nil, fmt.Sprintf("found by %s, but %v", foundBy, err)
	}
	if !isServerBinary(p.Exe) {
		// A proxy holding the port (a container's published port): its
		// binary is not asked for option files.
		return nil, fmt.Sprintf("pid %d, found by %s, runs %s, not a MySQL/MariaDB server (mysqld, mariadbd): the server may run in a container or behind a proxy", pid, foundBy, p.Exe)
	}
	p.FoundBy = foundBy
	return p, ""
}

// isServerBinary reports whether exe names a MySQL or MariaDB server
// binary (mysqld, mariadbd, and their variants such as mysqld-debug).
func isServerBinary(exe string) bool {
	b := filepath.Base(exe)
	return strings.Contains(b, "mysqld") || strings.Contains(b, "mariadbd")
}

// listenText says where the server listens: "/x/mysqld.sock or port
// 3306".
func listenText(socket string, port int) string {
	var parts []string
	if socket != "" {
		parts = append(parts, socket)
	}
	if port > 0 {
		parts = append(parts, "port "+strconv.Itoa(port))
	}
	if len(parts) == 0 {
		return "no socket or port it names"
	}
	return strings.Join(parts, " or ")
}

// notLocal says why a server reached at network/address cannot be on
// this host ("" when it can be).
func notLocal(ctx context.Context, network, address string) string {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return "" // a unix socket is on this host
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if host == "" || strings.EqualFold(host, "localhost") {
		return ""
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return fmt.Sprintf("%s does not resolve here (%v)", host, err)
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	ifAddrs, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			return ""
		}
		for _, a := range ifAddrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return ""
			}
		}
	}
	return fmt.Sprintf("the DSN reaches it at %s, not an address of this host", address)
}

// guess is the distribution's drop-in and check, said as a guess.
func guess(o Options, reason string) *Config {
	c := &Config{Guess: true, DropIn: Distribution(o.MariaDB)}
	names := []string{"mysqld"}
	if o.MariaDB {
		names = []string{"mariadbd", "mysqld"}
	}
	look := o.LookPath
	if look == nil {
		look = FindBinary
	}
	check := "--mysql-check is needed"
	if bin := look(names...); bin != "" {
		c.Check = []string{bin, "--help", "--verbose"}
		check = "checked with " + strings.Join(c.Check, " ")
	} else {
		c.Notes = append(c.Notes, fmt.Sprintf("no %s found in PATH or /usr/sbin to check the option files: give --mysql-check (or --mysql-check none)", names[0]))
	}
	c.Why = fmt.Sprintf("my.cnf drop-in: %s (a guess, the distribution's directory, %s: the server's process is not on this host: %s; give --mysql-conf and --mysql-check if its option files are elsewhere)",
		c.DropIn, check, reason)
	return c
}

// FindBinary finds the first of names in PATH, then /usr/sbin (where
// Debian puts its servers: mariadbd, php-fpm8.2); "" when neither has
// one. Package apply finds the services it reaches with it too.
func FindBinary(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := filepath.Join("/usr/sbin", n); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// read asks the server's binary for its search order and groups, and
// reads its option files.
func (c *Config) read(ctx context.Context, o Options) {
	p := c.Process
	c.Check = []string{p.Exe}
	for _, given := range p.Defaults {
		a := given
		// A relative file is made absolute: the check runs elsewhere.
		switch k, v, _ := strings.Cut(a, "="); {
		case k == "--defaults-file" && !filepath.IsAbs(v):
			a = k + "=" + p.DefaultsFile
		case k == "--defaults-extra-file" && !filepath.IsAbs(v):
			a = k + "=" + p.ExtraFile
		default:
			c.Check = append(c.Check, a)
			continue
		}
		c.Check = append(c.Check, a)
		c.Notes = append(c.Notes, fmt.Sprintf("%s is relative: read against the server's working directory now, %s, which may not be the one it started in", given, p.Dir))
	}
	c.Check = append(c.Check, "--help", "--verbose")
	if p.NoDefaults {
		c.Settings = commandLine(p.Options, 0)
		return
	}
	run := o.Run
	if run == nil {
		run = runHelp
	}
	out, runErr := run(ctx, c.Check)
	s, err := ParseHelp(out)
	switch {
	case err == nil:
		c.Search = s
	case p.DefaultsFile != "":
		c.Search = Search{Files: []string{p.DefaultsFile}}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: %v (%v); read %s, its --defaults-file", strings.Join(c.Check, " "), err, runErr, p.DefaultsFile))
	default:
		c.Search = Search{Files: []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "~/.my.cnf"}}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: %v (%v); read the usual search order instead", strings.Join(c.Check, " "), err, runErr))
	}
	groups := c.Search.Groups
	if len(groups) == 0 {
		groups = defaultGroups
	}
	r := newReader(groups, p.Dir)
	for _, f := range c.Search.Files {
		if rest, ok := strings.CutPrefix(f, "~/"); ok {
			if p.Home == "" {
				c.Notes = append(c.Notes, f+" not read: the server's home directory is not known")
				continue
			}
			f = filepath.Join(p.Home, rest)
		}
		r.read(r.abs(f), nil, 0)
	}
	c.Files = r.files
	c.Settings = append(r.settings, commandLine(p.Options, r.pos)...)
	c.Notes = append(c.Notes, r.notes...)
	if r.skipped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d option file(s) or includes not read (above)", r.skipped))
	}
	c.includes = r.includes
	c.starts = r.starts
}

// Bounds of running the binary for its help.
const (
	maxHelpOutput = 4 << 20
	helpTimeout   = 2 * time.Minute
)

// runHelp runs argv and returns its standard output (at most 4 MiB),
// also when it fails.
func runHelp(ctx context.Context, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, helpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out := &limitedBuffer{max: maxHelpOutput}
	cmd.Stdout = out
	err := cmd.Run()
	return out.Bytes(), err
}

// limitedBuffer keeps the first max bytes written to it and drops the
// rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
