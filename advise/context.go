package advise

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Context is what a rule sees: the snapshot, the options, and helpers
// that read values the way every rule should (running values, deltas over
// the sampling interval, names as this server spells them).
type Context struct {
	Snap *collect.Snapshot
	Opt  Options

	// The layers, nil when not collected.
	My        *collect.MySQL
	Linux     *collect.Linux
	Nginx     *collect.Nginx
	Memcached *collect.Memcached
	Redis     *collect.Redis
	// PHPFPM is the php_fpm layer (collect's LayerOf), nil when not
	// collected.
	PHPFPM *collect.PHPFPM
	// HTTPLog is the http_log layer: the access log over the interval.
	HTTPLog *collect.HTTPLog
	// Queries is the queries layer: the digest of the interval.
	Queries *collect.Queries

	fixed   map[string]string
	notSeen []string
	seen    map[string]bool
	mem     *Budget

	// current is the rule running now; rateRules the rules that read
	// rates over the interval, by layer (see activity.go).
	current   string
	rateRules map[string][]string
}

func newContext(s *collect.Snapshot, opt Options) *Context {
	c := &Context{Snap: s, Opt: opt, My: s.MySQL, Linux: s.Linux, Nginx: s.Nginx, Memcached: s.Memcached, Redis: s.Redis,
		fixed: map[string]string{}, seen: map[string]bool{}}
	for k, v := range opt.Fixed {
		c.fixed[mysqlvar.Norm(k)] = v
	}
	if p, err := collect.LayerOf[collect.PHPFPM](s, "php_fpm"); err != nil {
		c.NotSeen("php_fpm: the layer does not read: " + err.Error())
	} else {
		c.PHPFPM = p
	}
	if q, err := collect.LayerOf[collect.Queries](s, "queries"); err != nil {
		c.NotSeen("queries: the layer does not read: " + err.Error())
	} else {
		c.Queries = q
		if q != nil {
			for _, n := range q.Notes {
				c.NotSeen("queries: " + n)
			}
		}
	}
	if h, err := collect.LayerOf[collect.HTTPLog](s, "http_log"); err != nil {
		c.NotSeen("http_log: the layer does not read: " + err.Error())
	} else {
		c.HTTPLog = h
		if h != nil {
			for _, n := range h.Notes {
				c.NotSeen("http_log: " + n)
			}
		}
	}
	c.layersNotSeen()
	return c
}

// NotSeen records something the audit could not look at; duplicates are
// dropped.
func (c *Context) NotSeen(msg string) {
	if c.seen[msg] {
		return
	}
	c.seen[msg] = true
	c.notSeen = append(c.notSeen, msg)
}

func (c *Context) notSeenList() []string { return append(c.notSeen, c.idleNotes()...) }

// layersNotSeen lists the missing layers and the parts their collectors
// could not read.
func (c *Context) layersNotSeen() {
	errs := map[string][]string{}
	for _, e := range c.Snap.Errors {
		errs[e.Collector] = append(errs[e.Collector], e.Error)
	}
	layer := func(name string, present bool) {
		if present {
			return
		}
		if e := errs[name]; len(e) > 0 {
			c.NotSeen(fmt.Sprintf("%s: not collected: %s", name, strings.Join(e, "; ")))
		} else {
			c.NotSeen(name + ": not collected")
		}
	}
	layer(LayerMySQL, c.My != nil)
	layer(LayerLinux, c.Linux != nil)
	layer(LayerNginx, c.Nginx != nil)
	layer(LayerMemcached, c.Memcached != nil)
	layer(LayerRedis, c.Redis != nil)
	if c.My != nil {
		for _, m := range c.My.Missing {
			c.NotSeen("mysql: could not read " + m)
		}
		if len(c.My.Variables) == 0 {
			c.NotSeen("mysql: no variables: every MySQL rule is skipped")
		}
		if c.Interval() <= 0 {
			c.NotSeen("mysql: SHOW GLOBAL STATUS was not read twice: rules that need a rate over an interval are skipped (totals since start are not used)")
		}
		if !c.My.Data.Complete {
			c.NotSeen("mysql: data sizes may be incomplete (no global SELECT privilege): the buffer pool is compared with the tables this user can see")
		}
	}
	if c.Linux != nil {
		for _, m := range c.Linux.Missing {
			c.NotSeen("linux: could not read " + m)
		}
	}
}

// Flavor is "mysql" or "mariadb" (Percona Server counts as MySQL), ""
// without a MySQL layer.
func (c *Context) Flavor() string {
	switch {
	case c.My == nil:
		return ""
	case c.Server().IsMariaDB():
		return mysqlvar.MariaDB
	}
	return mysqlvar.MySQL
}

// Server is the MySQL server's flavour and version (zero without a MySQL
// layer).
func (c *Context) Server() mysqlvar.Server {
	if c.My == nil {
		return mysqlvar.Server{}
	}
	return mysqlvar.Server{Flavor: c.My.Flavor, Version: c.My.VersionNumber, Raw: c.My.Version}
}

// MariaDB reports whether the server is MariaDB.
func (c *Context) MariaDB() bool { return c.Flavor() == mysqlvar.MariaDB }

// Version is the server's version.
func (c *Context) Version() mysqlvar.Version { return c.Server().Version }

// AtLeast compares the server's version.
func (c *Context) AtLeast(major, minor, patch int) bool {
	return c.Version().AtLeast(major, minor, patch)
}

// ServerName is "MariaDB 10.11.19" or "MySQL 8.0.36".
func (c *Context) ServerName() string { return c.Server().String() }

// Var returns a running variable by name, or under the name the server
// uses for it (tx_isolation for transaction_isolation on MariaDB 10.x).
func (c *Context) Var(name string) (string, bool) {
	if c.My == nil {
		return "", false
	}
	if v, ok := c.My.Variables[name]; ok {
		return v, true
	}
	for _, alt := range mysqlvar.Aliases(name) {
		if v, ok := c.My.Variables[alt]; ok {
			return v, true
		}
	}
	return "", false
}

// VarName is the name this server uses for a variable ("" when it has
// none of its names).
func (c *Context) VarName(name string) string {
	if c.My == nil {
		return ""
	}
	if _, ok := c.My.Variables[name]; ok {
		return name
	}
	for _, alt := range mysqlvar.Aliases(name) {
		if _, ok := c.My.Variables[alt]; ok {
			return alt
		}
	}
	return ""
}

// Has reports whether the running server has the variable (under this
// name exactly).
func (c *Context) Has(name string) bool {
	if c.My == nil {
		return false
	}
	_, ok := c.My.Variables[name]
	return ok
}

// Int returns a numeric variable ("10.000000" reads as 10).
func (c *Context) Int(name string) (int64, bool) {
	v, ok := c.Var(name)
	if !ok {
		return 0, false
	}
	return mysqlvar.ParseInt(v)
}

// Float returns a numeric variable.
func (c *Context) Float(name string) (float64, bool) {
	v, ok := c.Var(name)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil
}

// On reads a boolean variable: ON/1/TRUE/YES is true, anything else
// false; ok is false when the variable is absent.
func (c *Context) On(name string) (on, ok bool) {
	v, ok := c.Var(name)
	if !ok {
		return false, false
	}
	return mysqlvar.Equal(v, "ON"), true
}

// Interval is the time between the two status readings, 0 when there
// was only one.
func (c *Context) Interval() float64 {
	if c.My == nil || c.My.Status.Second == nil {
		return 0
	}
	return c.My.Status.IntervalSeconds
}

// Delta is a status counter's growth over the interval; ok is false
// without two readings or for a gauge.
func (c *Context) Delta(status string) (float64, bool) {
	c.usesRates(LayerMySQL)
	if c.Interval() <= 0 {
		return 0, false
	}
	d, ok := c.My.Status.Deltas[status]
	return d, ok
}

// Rate is a status counter's growth per second over the interval.
func (c *Context) Rate(status string) (float64, bool) {
	c.usesRates(LayerMySQL)
	if c.Interval() <= 0 {
		return 0, false
	}
	r, ok := c.My.Status.Rates[status]
	return r, ok
}

// Gauge is a status value from the latest reading (Threads_connected,
// Max_used_connections, Open_tables).
func (c *Context) Gauge(status string) (float64, bool) {
	if c.My == nil {
		return 0, false
	}
	return c.My.Status.Value(status)
}

// StatusSource describes the measurement of a delta.
func (c *Context) StatusSource() string {
	return fmt.Sprintf("SHOW GLOBAL STATUS, delta over %s s", num(c.Interval()))
}

// Source strings.
const (
	srcVariables = "SHOW GLOBAL VARIABLES"
	srcGauge     = "SHOW GLOBAL STATUS (current value)"
	srcHighWater = "SHOW GLOBAL STATUS (high-water mark since start)"
	srcTables    = "information_schema.TABLES"
	srcMeminfo   = "/proc/meminfo"
	srcCPUs      = "/proc/stat (online CPUs)"
	srcTCP       = "/proc/net/tcp and tcp6"
)

// sysctlSource is the file a sysctl is read from.
func sysctlSource(name string) string {
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

// RAM is the host's memory in bytes, 0 when unknown.
func (c *Context) RAM() int64 {
	if c.Linux == nil {
		return 0
	}
	return c.Linux.Memory.TotalBytes
}

// Cores is the host's online CPUs, 0 when unknown.
func (c *Context) Cores() int {
	if c.Linux == nil {
		return 0
	}
	return c.Linux.Cores
}

// Sysctl returns a sysctl's value.
func (c *Context) Sysctl(name string) (string, bool) {
	if c.Linux == nil {
		return "", false
	}
	v, ok := c.Linux.Sysctls[name]
	return v, ok
}

// SysctlInt returns a one-number sysctl.
func (c *Context) SysctlInt(name string) (int64, bool) {
	if c.Linux == nil {
		return 0, false
	}
	v, ok := c.Linux.SysctlInts(name)
	if !ok || len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

// Fixed returns the value a setting is fixed at (Options.Fixed).
func (c *Context) Fixed(name string) (string, bool) {
	v, ok := c.fixed[mysqlvar.Norm(name)]
	return v, ok
}

// mysqlPatterns name the MySQL server processes.
var mysqlPatterns = []string{"mysqld", "mariadbd"}

// Processes returns the snapshot's processes whose name or pattern
// matches one of the patterns (path.Match).
func (c *Context) Processes(patterns ...string) []collect.Process {
	if c.Linux == nil {
		return nil
	}
	var out []collect.Process
	for _, p := range c.Linux.Processes {
		for _, pat := range patterns {
			m1, _ := path.Match(pat, p.Name)
			m2, _ := path.Match(pat, path.Base(p.Exe))
			if m1 || m2 || p.Pattern == pat {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// MySQLChange builds the change of a MySQL variable, with the my.cnf
// spelling and the running value.
func (c *Context) MySQLChange(name, value, direction string) *changeset.Change {
	cur, _ := c.Var(name)
	ch := &changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: name, From: cur, To: value, Direction: direction}
	if o := mysqlvar.OptionName(name); o != name {
		ch.Option = o
	}
	return ch
}

// Restart reports whether changing a MySQL variable needs a restart on
// this server (true when the table does not know it).
func (c *Context) Restart(name string) bool {
	d, known := mysqlvar.Dynamic(c.Flavor(), c.Version(), name)
	return !known || !d
}

// SysctlChange builds the change of a sysctl.
func (c *Context) SysctlChange(name, value, direction string) *changeset.Change {
	cur, _ := c.Sysctl(name)
	return &changeset.Change{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: name, From: cur, To: value, Direction: direction}
}

// ev builds an Evidence.
func ev(what, value, unit, source string) Evidence {
	return Evidence{What: what, Value: value, Unit: unit, Source: source}
}

// varEv is the evidence of a variable's running value.
func (c *Context) varEv(name, unit string) Evidence {
	v, _ := c.Var(name)
	n := c.VarName(name)
	if n == "" {
		n = name
	}
	if unit == "bytes" {
		if b, ok := mysqlvar.ParseInt(v); ok && b >= 1024 {
			v = fmt.Sprintf("%s (%s)", v, fmtBytes(b))
		}
	}
	return ev(n, v, unit, srcVariables)
}

// deltaEv is the evidence of a counter over the interval, with its rate.
func (c *Context) deltaEv(status string) Evidence {
	d, _ := c.Delta(status)
	r, _ := c.Rate(status)
	return ev(status, fmt.Sprintf("%s (%s/s)", num(d), num(r)), "", c.StatusSource())
}

// num formats a number without a needless fraction, 3 decimals at most.
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	s := strconv.FormatFloat(x, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// pct formats a share as a percentage.
func pct(share float64) string { return num(math.Round(share*1000)/10) + "%" }

// fmtBytes formats bytes in binary units: 512 B, 16.0 KiB, 8.0 GiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	neg := n < 0
	if neg {
		n = -n
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	s := fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
	if neg {
		return "-" + s
	}
	return s
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int64) int64 {
	if m <= 0 {
		return n
	}
	return (n + m - 1) / m * m
}

// roundDown rounds n down to a multiple of m.
func roundDown(n, m int64) int64 {
	if m <= 0 {
		return n
	}
	return n / m * m
}

// nextPow2 is the smallest power of two at or above n.
func nextPow2(n int64) int64 {
	p := int64(1)
	for p < n && p < math.MaxInt64/2 {
		p <<= 1
	}
	return p
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// MemTotal is RAM under the name /proc/meminfo gives it.
func (c *Context) MemTotal() int64 { return c.RAM() }

// MySQLRAM is the RAM of the MySQL server's host: the collected host's
// when a MySQL server process runs on it, else 0 (the database was
// audited over the network and its host's memory is unknown); at most
// Options.MemoryLimitBytes when that is set.
func (c *Context) MySQLRAM() int64 {
	if limit := c.Opt.MemoryLimitBytes; limit > 0 {
		// The host's RAM only when the snapshot saw the server on it.
		if ram := c.RAM(); ram > 0 && ram < limit && len(c.Processes(mysqlPatterns...)) > 0 {
			return ram
		}
		return limit
	}
	if c.Linux == nil {
		return 0
	}
	if len(c.Processes(mysqlPatterns...)) == 0 {
		c.NotSeen("mysql: no mysqld or mariadbd process on the collected host, so the database host's RAM is unknown: the memory budget and RAM-based sizing are skipped (collect on the database host)")
		return 0
	}
	return c.RAM()
}
