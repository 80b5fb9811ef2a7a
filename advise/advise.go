package advise

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/nplusone"
)

// Severity says how urgent a finding is.
type Severity string

// Severities, most urgent first.
const (
	// Critical: the stack fails or loses work now (connections refused,
	// memory over-committed, a fixed setting broken).
	Critical Severity = "critical"
	// Warning: measurable time is lost (disk temp tables, buffer pool
	// misses, TIME_WAIT filling the port range).
	Warning Severity = "warning"
	// Info: worth knowing or doing, without a measured cost.
	Info Severity = "info"
)

// Codes lists the severities (docs/json.md).
func (Severity) Codes() []string { return []string{string(Critical), string(Warning), string(Info)} }

func (s Severity) rank() int {
	switch s {
	case Critical:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Layers of a finding.
const (
	LayerMySQL     = "mysql"
	LayerLinux     = "linux"
	LayerNginx     = "nginx"
	LayerMemcached = "memcached"
	LayerRedis     = "redis"
	// LayerApp is the application: its workers (PHP-FPM pools, app
	// servers) and its code (N+1 patterns).
	LayerApp = "app"
)

// Evidence is one measured fact behind a finding.
type Evidence struct {
	What  string `json:"what"`
	Value string `json:"value"`
	Unit  string `json:"unit,omitempty"`
	// Source says how it was measured: "SHOW GLOBAL STATUS, delta over
	// 10 s", "/proc/sys/net/core/somaxconn", "nginx.conf:12".
	Source string `json:"source"`
}

// String is the evidence in one line: "what: value unit (source)".
func (e Evidence) String() string {
	s := e.What + ": " + e.Value
	if e.Unit != "" {
		s += " " + e.Unit
	}
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	return s
}

// Directions of a change.
const (
	Increase = "increase"
	Decrease = "decrease"
	Set      = "set"
)

// Finding is one rule's verdict on the evidence.
type Finding struct {
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Severity Severity   `json:"severity"`
	Layer    string     `json:"layer"`
	Evidence []Evidence `json:"evidence"`
	// Change is the recommendation, nil when there is nothing to set
	// (information, or a change stacktune must not make: durability
	// without AllowDurabilityLoss, a fixed setting).
	Change *changeset.Change `json:"change"`
	// Also are changes that go with Change and must be applied with it
	// (tmp_table_size with max_heap_table_size).
	Also   []changeset.Change `json:"also,omitempty"`
	Effect string             `json:"effect"`
	Risk   changeset.Risk     `json:"risk"`
	// Source is where the rule comes from: a public write-up ("the
	// smartphone game backend's write-up") or a manual ("MySQL manual,
	// 'Internal Temporary Table Use'").
	Source string `json:"source"`
	// NPlusOne is the pattern an app-n-plus-one finding is about (nil
	// for every other rule), as the rule was given it, so a caller that
	// lists the same pattern (tune's pick, beside the diagnosis's N+1
	// list) pairs the two by value. Not in the JSON: the evidence says it.
	NPlusOne *nplusone.Pattern `json:"-"`
}

// Changes returns Change and Also.
func (f *Finding) Changes() []changeset.Change {
	var out []changeset.Change
	if f.Change != nil {
		out = append(out, *f.Change)
	}
	return append(out, f.Also...)
}

// Options tune the audit.
type Options struct {
	// AllowDurabilityLoss permits changes that can lose committed
	// transactions on a crash (innodb_flush_log_at_trx_commit,
	// sync_binlog, innodb_doublewrite). Without it those rules only say
	// what is at stake.
	AllowDurabilityLoss bool
	// Fixed are settings that must not change (the 2015 tpcc-mysql contest fixed
	// innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1), by
	// name: MySQL variables, sysctls, nginx directives, flags. Names
	// compare case-insensitively with '-' and '_' alike. A fixed setting
	// whose running value differs is reported (rule fixed-settings).
	Fixed map[string]string
	// MemoryReserveBytes is RAM kept for the OS and its page cache, on
	// top of the services measured on the host; 0 means
	// max(1 GiB, 10% of RAM).
	MemoryReserveBytes int64
	// MemoryLimitBytes, when set, is the RAM the memory budget counts:
	// the database host's when the snapshot could not see it (collected
	// on another host), or less than the host has, to leave the rest
	// alone (the knob search's --memory-budget). The smaller of it and
	// the host's RAM is used.
	MemoryLimitBytes int64
	// Observability lets the audit propose the changes that add
	// measurement at a cost in speed and memory (performance_schema = ON
	// needs a restart and 100-400 MiB; the slow log writes every slow
	// query): without it those findings say what is missing and propose
	// nothing, so --emit never writes them unasked.
	Observability bool
	// DedicatedDB says the host runs the database alone (besides the
	// services the snapshot saw), so the buffer pool may take most of
	// the RAM left (MySQL's innodb_dedicated_server takes 75%).
	DedicatedDB bool
	// NPlusOne are the N+1 patterns measured per request on the stack
	// (diagnose's per-request view, package reqtrace): the rule
	// app-n-plus-one makes each a finding. A snapshot does not hold them.
	// NPlusOneSource says how they were measured, for the findings'
	// evidence ("stacktune diagnose, a trace run through the proxy").
	NPlusOne       []nplusone.Pattern
	NPlusOneSource string
}

// Rule is one check. Check returns nothing when its evidence is absent
// or fine; it must not change the snapshot.
type Rule interface {
	ID() string
	Layer() string
	Check(c *Context) []Finding
}

// Result is an audit.
type Result struct {
	Host  string    `json:"host"`
	Taken time.Time `json:"taken"`
	// Server is the MySQL server audited ("MariaDB 10.11.19"), empty
	// without a MySQL layer.
	Server string `json:"server,omitempty"`
	// Findings are sorted by severity, then id, then title.
	Findings        []Finding                `json:"findings"`
	CollectorErrors []collect.CollectorError `json:"collector_errors"`
	// NotSeen says what the audit could not look at and why: missing
	// layers, unreadable parts, rules skipped for lack of evidence.
	NotSeen []string `json:"not_seen"`
}

// Audit runs every rule of Rules on s. It works on whatever was
// collected: a missing layer or value silences the rules that need it
// and is listed in Result.NotSeen.
func Audit(s *collect.Snapshot, opt Options) *Result {
	return audit(s, opt, Rules)
}

func audit(s *collect.Snapshot, opt Options, rules []Rule) *Result {
	r := &Result{Findings: []Finding{}, CollectorErrors: []collect.CollectorError{}, NotSeen: []string{}}
	if s == nil {
		r.NotSeen = append(r.NotSeen, "snapshot: none was given")
		return r
	}
	r.Host, r.Taken = s.Host, s.Taken
	r.CollectorErrors = append(r.CollectorErrors, s.Errors...)
	c := newContext(s, opt)
	if s.MySQL != nil {
		r.Server = c.ServerName()
	}
	for _, rule := range rules {
		fs := runRule(c, rule)
		for i := range fs {
			if fs[i].ID == "" {
				fs[i].ID = rule.ID()
			}
			if fs[i].Layer == "" {
				fs[i].Layer = rule.Layer()
			}
			if fs[i].Evidence == nil {
				fs[i].Evidence = []Evidence{}
			}
		}
		r.Findings = append(r.Findings, fs...)
	}
	for i := range r.Findings {
		c.enforce(&r.Findings[i])
	}
	sortFindings(r.Findings)
	resolveConflicts(r.Findings)
	for i := range r.Findings {
		c.fillApply(&r.Findings[i])
	}
	r.NotSeen = append(r.NotSeen, c.notSeenList()...)
	return r
}

// runRule runs one rule; a rule that panics on input it did not expect
// is reported in NotSeen, so one bug does not lose the whole audit.
func runRule(c *Context, rule Rule) (fs []Finding) {
	c.current = rule.ID()
	defer func() {
		c.current = ""
		if p := recover(); p != nil {
			c.NotSeen(fmt.Sprintf("%s: rule %s failed on this snapshot (a stacktune bug, please report): %v", rule.Layer(), rule.ID(), p))
			fs = nil
		}
	}()
	return rule.Check(c)
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Title < b.Title
	})
}

// enforce removes what the options forbid from a finding: changes to a
// fixed setting (unless they restore its fixed value), and changes to a
// MySQL variable the server does not have (a rule bug; the tests keep
// it from happening).
func (c *Context) enforce(f *Finding) {
	var notes []string
	keep := func(ch *changeset.Change) bool {
		if v, ok := c.fixedAny(ch); ok && !mysqlvar.Equal(v, ch.To) {
			notes = append(notes, fmt.Sprintf("%s is fixed at %s (--fix): not changed", ch.Name, v))
			return false
		}
		if ch.Kind == changeset.MySQLVariable && c.My != nil && len(c.My.Variables) > 0 && !c.Has(ch.Name) {
			notes = append(notes, fmt.Sprintf("%s does not exist on this server: not changed", ch.Name))
			return false
		}
		return true
	}
	had := f.Change != nil || len(f.Also) > 0
	if had && Observability(f.ID) && !c.Opt.Observability {
		f.Change, f.Also = nil, nil
		notes = append(notes, "it adds measurement at a cost in speed and memory: proposed only when asked (--observability)")
	}
	if f.Change != nil && !keep(f.Change) {
		f.Change = nil
		f.Also = nil // they only go with the main change
	}
	also := f.Also[:0:0]
	for i := range f.Also {
		if keep(&f.Also[i]) {
			also = append(also, f.Also[i])
		}
	}
	f.Also = also
	if f.Change == nil && len(f.Also) > 0 {
		f.Change, f.Also = &f.Also[0], f.Also[1:]
	}
	if len(notes) > 0 {
		f.Risk.Note = joinNote(f.Risk.Note, strings.Join(notes, "; "))
	}
	if had && f.Change == nil && f.Severity != Critical {
		f.Severity = Info
	}
}

// fixedAny is the value a change's setting is fixed at, under any of its
// names (--fix transaction_isolation fixes tx_isolation too).
func (c *Context) fixedAny(ch *changeset.Change) (string, bool) {
	names := []string{ch.Name}
	if ch.Option != "" {
		names = append(names, ch.Option)
	}
	if ch.Kind == changeset.MySQLVariable || ch.Kind == changeset.MySQLOption {
		names = append(names, mysqlvar.Aliases(ch.Name)...)
	}
	for _, n := range names {
		if v, ok := c.Fixed(n); ok {
			return v, true
		}
	}
	return "", false
}

// resolveConflicts keeps, for each setting, the change of the first
// finding (the most severe) and drops a later change that sets it to
// another value.
func resolveConflicts(fs []Finding) {
	first := map[string]struct {
		id, value string
	}{}
	for i := range fs {
		f := &fs[i]
		check := func(ch *changeset.Change) bool {
			k := ch.Key()
			if prev, ok := first[k]; ok {
				if !mysqlvar.Equal(prev.value, ch.To) {
					f.Risk.Note = joinNote(f.Risk.Note, fmt.Sprintf("%s: %s sets it to %s, which takes precedence", ch.Name, prev.id, prev.value))
					return false
				}
				return true
			}
			first[k] = struct{ id, value string }{f.ID, ch.To}
			return true
		}
		if f.Change != nil && !check(f.Change) {
			f.Change, f.Also = nil, nil
			continue
		}
		f.Also = slices.DeleteFunc(f.Also, func(ch changeset.Change) bool { return !check(&ch) })
	}
}

// fillApply says how each change of f takes effect on the running
// system (Activation, from the version table for MySQL variables) and how
// a person would make it now (Apply: for a dynamic MySQL variable the
// SET GLOBAL statement apply runs).
func (c *Context) fillApply(f *Finding) {
	fill := func(ch *changeset.Change) {
		switch ch.Kind {
		case changeset.MySQLVariable:
			dyn, known := mysqlvar.Dynamic(c.Flavor(), c.Version(), ch.Name)
			if !known {
				dyn = !f.Risk.Restart
			}
			ch.Activation = changeset.Restart
			if dyn {
				ch.Activation = changeset.Dynamic
				if stmt, err := mysqlvar.SetGlobal(ch.Name, ch.To); err == nil && ch.Apply == "" {
					ch.Apply = stmt
				}
			}
		case changeset.MySQLOption, changeset.Systemd, changeset.Memcached:
			ch.Activation = changeset.Restart
		case changeset.Sysctl, changeset.Redis, changeset.Index:
			ch.Activation = changeset.Dynamic
		case changeset.Nginx, changeset.PHPFPM:
			ch.Activation = changeset.Reload
		case changeset.App, changeset.Mount:
			ch.Activation = changeset.Manual
		}
		if ch.Apply != "" {
			return
		}
		switch ch.Kind {
		case changeset.Sysctl:
			ch.Apply = "sysctl -w " + ch.Name + "='" + ch.To + "'"
		case changeset.Nginx:
			ch.Apply = "nginx -t && nginx -s reload"
		case changeset.PHPFPM:
			ch.Apply = "php-fpm -t && systemctl reload php-fpm (Debian: php8.2-fpm)"
		case changeset.Systemd:
			ch.Apply = "systemctl daemon-reload && systemctl restart " + ch.Target
		case changeset.Mount:
			ch.Apply = "mount -o remount," + ch.To + " " + ch.Target + " (and add " + ch.To + " to its line in /etc/fstab)"
		}
	}
	if f.Change != nil {
		fill(f.Change)
	}
	for i := range f.Also {
		fill(&f.Also[i])
	}
}

// ChangeSet is the audit's changes as the change set apply takes: every
// change of every finding, each with its finding's id, title and risk.
func (r *Result) ChangeSet() *changeset.Set {
	s := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune audit", Host: r.Host, Taken: r.Taken, Server: r.Server, Changes: []changeset.Change{}}
	for i := range r.Findings {
		s.Changes = append(s.Changes, r.Findings[i].Changeset()...)
	}
	return s
}

// Changeset is the finding's changes, each carrying the finding's id,
// title and risk.
func (f *Finding) Changeset() []changeset.Change {
	out := f.Changes()
	for i := range out {
		risk := f.Risk
		out[i].Finding, out[i].Title, out[i].Risk = f.ID, f.Title, &risk
	}
	return out
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ". " + b
}

// observability are the findings that add measurement (the slow log,
// performance_schema), which a real server should have but which cost it
// some speed: a loop that measures speed leaves them to the user.
var observability = map[string]bool{"mysql-performance-schema": true, "mysql-slow-log": true}

// Observability reports whether finding id adds measurement at a cost in
// speed (see observability).
func Observability(id string) bool { return observability[id] }
