package advise

import (
	"context"
	"encoding/json"
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
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/sandbox"
)

// The end-to-end test: a real throwaway MariaDB with deliberately bad
// settings (an 8 MiB buffer pool under ~60 MiB of data, tmp_table_size
// 16K) and a workload that scans the table and builds temporary tables
// while the collector takes its two status readings; the audit must find
// what was broken. The same server is then audited by MySQLTuner and the
// two are compared.

// e2eOptions are the bad settings.
var e2eOptions = map[string]string{
	"innodb_buffer_pool_size": "8M",
	"tmp_table_size":          "16K",
}

// e2eInterval is the collector's interval between status readings.
const e2eInterval = 2 * time.Second

// e2eRows fills about 50 MiB of InnoDB pages (220-byte rows).
const e2eRows = 200000

// The workload's queries: a full scan that misses the 8 MiB pool, and
// GROUP BYs over 5000 rows whose 2000 groups (about 400 KiB) outgrow a
// 16K in-memory temporary table.
const (
	e2eScan    = "SELECT COUNT(*), MAX(pad) FROM app.big WHERE pad <> ''"
	e2eGroupBy = "SELECT COUNT(*), MAX(x) FROM (SELECT grp, MAX(pad) AS x FROM app.big WHERE id > %d AND id <= %d GROUP BY grp) t"
)

type e2eRun struct {
	srv  *sandbox.MariaDB
	snap *collect.Snapshot
	res  *Result
	// MySQLTuner's verdict on the same server, taken right after the
	// collection, before any test changes the server.
	tunerRecs, tunerAdjust []string
	tunerStatus            map[string]string
	tunerErr               error
}

var (
	e2eOnce sync.Once
	e2e     *e2eRun
	e2eErr  error
)

// TestEndToEndMariaDB audits the bad server and checks the findings.
func TestEndToEndMariaDB(t *testing.T) {
	r := runE2E(t)
	got := map[string]Finding{}
	for _, f := range r.res.Findings {
		got[f.ID] = f
	}
	t.Logf("findings:%s", describe(r.res.Findings))
	for _, id := range []string{"mysql-buffer-pool-size", "mysql-tmp-table-size", "mysql-performance-schema", "mysql-slow-log"} {
		if _, ok := got[id]; !ok {
			t.Errorf("missing %s", id)
		}
	}
	// What was not broken is not reported.
	for _, id := range []string{"mysql-query-cache", "mysql-buffer-pool-instances", "mysql-flush-method", "mysql-memory-budget",
		"mysql-per-session-buffers", "mysql-max-connections", "fixed-settings"} {
		if f, ok := got[id]; ok {
			t.Errorf("unexpected %s: %s", id, f.Title)
		}
	}
	bp := got["mysql-buffer-pool-size"]
	if bp.Change == nil || bp.Change.Name != "innodb_buffer_pool_size" || bp.Change.From != "8388608" || bp.Change.Direction != Increase {
		t.Errorf("buffer pool change %+v", bp.Change)
	}
	tmp := got["mysql-tmp-table-size"]
	if tmp.Change == nil || tmp.Change.Name != "tmp_table_size" || tmp.Change.From != "16384" || tmp.Change.To != fmt.Sprint(64*mib) {
		t.Errorf("tmp_table_size change %+v", tmp.Change)
	}
	if c := change([]Finding{tmp}, "max_heap_table_size"); c == nil || c.To != fmt.Sprint(64*mib) {
		t.Errorf("max_heap_table_size %+v", c)
	}
	// The evidence is the interval's, with its units and source.
	if !strings.Contains(fmt.Sprint(tmp.Evidence), "delta over 2") {
		t.Errorf("tmp evidence %+v", tmp.Evidence)
	}
	checkFindingShape(t, r.snap, r.res.Findings)
	for _, n := range r.res.NotSeen {
		if strings.Contains(n, "stacktune bug") {
			t.Error(n)
		}
	}

	// The my.cnf drop-in Emit writes is accepted by this mariadbd: every
	// option exists under the name written. A fixed isolation level adds
	// a renamed variable: SET GLOBAL tx_isolation, but
	// transaction_isolation in my.cnf (mariadbd 10.11 rejects
	// "tx_isolation = ..." there as an unknown variable).
	withTx := Audit(r.snap, Options{Fixed: map[string]string{"transaction-isolation": "READ-COMMITTED"}})
	tx := change(withTx.Findings, "tx_isolation")
	if tx == nil || tx.Option != "transaction_isolation" {
		t.Fatalf("fixed isolation level: %+v", tx)
	}
	dir := t.TempDir()
	if _, err := Emit(dir, withTx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, changeset.MySQLFile)); !strings.Contains(string(b), "\ntransaction_isolation = READ-COMMITTED\n") {
		t.Errorf("drop-in:\n%s", b)
	}
	cnf := filepath.Join(dir, changeset.MySQLFile)
	out, err := exec.Command("mariadbd", "--defaults-file="+cnf, "--verbose", "--help").CombinedOutput()
	if err != nil || strings.Contains(string(out), "unknown variable") || strings.Contains(string(out), "unknown option") {
		t.Errorf("mariadbd rejects the drop-in: %v\n%s", err, lastLines(string(out), 5))
	}
	// And the changes apply to the running server: every dynamic one with
	// SET GLOBAL, as Change.Apply says.
	for _, f := range withTx.Findings {
		for _, ch := range f.Changes() {
			if ch.Kind != changeset.MySQLVariable || ch.Apply == "" {
				continue
			}
			if _, err := r.srv.DB().Exec(ch.Apply); err != nil {
				t.Errorf("%s: %s: %v", f.ID, ch.Apply, err)
			}
		}
	}
}

// runE2E starts the server, loads the data, collects with the workload
// running and audits, once per test binary.
func runE2E(t *testing.T) *e2eRun {
	t.Helper()
	e2eOnce.Do(func() { e2e, e2eErr = startE2E() })
	if e2eErr != nil {
		t.Fatal(e2eErr)
	}
	return e2e
}

func startE2E() (*e2eRun, error) {
	ctx := context.Background()
	srv, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{Options: e2eOptions})
	if err != nil {
		return nil, err
	}
	// Stopped by TestMain.
	e2eStop = srv.Stop
	db := srv.DB()
	for _, q := range []string{
		"CREATE DATABASE app",
		"CREATE TABLE app.big (id INT PRIMARY KEY, grp INT NOT NULL, pad CHAR(200) NOT NULL) ENGINE=InnoDB",
		fmt.Sprintf("INSERT INTO app.big SELECT seq, seq %% 2000, REPEAT(CHAR(65 + seq %% 26), 200) FROM app.seq_1_to_%d", e2eRows),
		"ANALYZE TABLE app.big",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	// The workload: scans that miss the 8 MiB pool and GROUP BYs whose
	// temporary tables outgrow 16K, on their own connection, for as long
	// as the collector samples.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	conn, err := db.Conn(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	go func() {
		defer conn.Close()
		for i := 0; wctx.Err() == nil; i++ {
			var n int
			var s string
			q := fmt.Sprintf(e2eGroupBy, (i%40)*5000, (i%40+1)*5000)
			if i%6 == 0 {
				q = e2eScan
			}
			err := conn.QueryRowContext(wctx, q).Scan(&n, &s)
			if err != nil && wctx.Err() == nil {
				done <- fmt.Errorf("%s: %w", q, err)
				return
			}
		}
		done <- nil
	}()
	snap := collect.Run(ctx, []collect.Collector{collect.NewMySQL(db, e2eInterval), collect.NewLinux(collect.LinuxOptions{})})
	stop()
	if err := <-done; err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	for _, e := range snap.Errors {
		if e.Collector == "mysql" && !e.Partial {
			return nil, fmt.Errorf("collect: %s", e.Error)
		}
	}
	if snap.MySQL == nil || snap.Linux == nil {
		return nil, fmt.Errorf("collect: layers missing: %+v", snap.Errors)
	}
	r := &e2eRun{srv: srv, snap: snap, res: Audit(snap, Options{Observability: true})}
	r.tunerRecs, r.tunerAdjust, r.tunerStatus, r.tunerErr = runMySQLTuner(r)
	return r, nil
}

// e2eStop stops the shared server after all tests.
var e2eStop func() error

func TestMain(m *testing.M) {
	code := m.Run()
	if e2eStop != nil {
		if err := e2eStop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the MariaDB sandbox:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// ---------------------------------------------------------------------
// MySQLTuner comparison

// tunerVerdict is what stacktune says about one MySQLTuner
// recommendation.
type tunerVerdict struct {
	// pattern matches the recommendation's text.
	pattern *regexp.Regexp
	// agree: stacktune must change one of vars (the same advice).
	agree bool
	vars  []string
	// why explains a rejection; check, when set, verifies the reason on
	// this run (returns "" when it holds).
	why   string
	check func(r *e2eRun) string
}

// tunerVerdicts map MySQLTuner 1.9.9's recommendations (its "General
// recommendations" and "Variables to adjust", from --json) to stacktune's
// answer. A recommendation no row matches fails the test: a new
// MySQLTuner or a new situation must be explained here.
var tunerVerdicts = []tunerVerdict{
	{pattern: regexp.MustCompile(`^tmp_table_size \(> .*\)$`), agree: true, vars: []string{"tmp_table_size"}},
	{pattern: regexp.MustCompile(`^max_heap_table_size \(> .*\)$`), agree: true, vars: []string{"max_heap_table_size"}},
	{pattern: regexp.MustCompile(`^When making adjustments, make tmp_table_size/max_heap_table_size equal$`), agree: true, vars: []string{"tmp_table_size", "max_heap_table_size"}},
	{pattern: regexp.MustCompile(`^performance_schema ?= ?ON`), agree: true, vars: []string{"performance_schema"}},
	{pattern: regexp.MustCompile(`^Performance schema should be activated`), agree: true, vars: []string{"performance_schema"}},
	{pattern: regexp.MustCompile(`^innodb_buffer_pool_size \(>= .*\) if possible\.?$`), agree: true, vars: []string{"innodb_buffer_pool_size"}},
	{pattern: regexp.MustCompile(`^Enable the slow query log`), agree: true, vars: []string{"slow_query_log"}},
	{pattern: regexp.MustCompile(`^innodb_log_file_size should be \(=.*\) if possible, so InnoDB total log files size equals 25% of buffer pool size`),
		vars: []string{"innodb_log_file_size"},
		why:  "the redo log is sized from the measured write rate (an hour of Innodb_os_log_written at the interval's rate), not as a share of the buffer pool, which says nothing about writes; stacktune never shrinks it for that (a smaller log only makes checkpoints more frequent)",
		check: func(r *e2eRun) string {
			for _, f := range r.res.Findings {
				if ch := change([]Finding{f}, "innodb_log_file_size"); ch != nil && ch.Direction == Decrease {
					return "stacktune decreases innodb_log_file_size too"
				}
			}
			return ""
		}},
	{pattern: regexp.MustCompile(`^Before changing innodb_log_file_size and/or innodb_log_files_in_group read this`),
		why: "goes with the 25%-of-the-pool log size above, which stacktune rejects; innodb_log_files_in_group does not exist on MariaDB 10.6+"},
	{pattern: regexp.MustCompile(`^MySQL was started within the last 24 hours`),
		why: "stacktune judges counters over its own measured interval (SHOW GLOBAL STATUS twice), not totals since start, so uptime does not make it less sure"},
	{pattern: regexp.MustCompile(`^(You are using n? ?unsupported version|Upgrade as soon as possible)`),
		why: "version support is not a performance finding; stacktune advises for the version that runs (MySQLTuner's end-of-life list also marks 10.11, an LTS release)"},
	{pattern: regexp.MustCompile(`^Check (warning|error) line\(s\) in .* file$`),
		why: "the error log is not part of the snapshot (the collector reads SHOW output, /proc and configuration); NotSeen would say so if a rule needed it"},
	{pattern: regexp.MustCompile(`^Reduce your SELECT DISTINCT queries which have no LIMIT clause$`),
		why: "a guess at the cause of disk temporary tables from counters since start; stacktune raises the in-memory limit from the interval's Created_tmp_disk_tables and points to stacktune digest to name the queries"},
	{pattern: regexp.MustCompile(`^join_buffer_size \(> .*\)`),
		vars: []string{"join_buffer_size"},
		why:  "an increase without evidence that a join would fit (Select_full_join says joins without indexes happened since start); join buffers are per session and per join, so stacktune only lowers them against the memory budget and points to the missing index",
		check: func(r *e2eRun) string {
			if ch := change(r.res.Findings, "join_buffer_size"); ch != nil && ch.Direction == Increase {
				return "stacktune increases join_buffer_size too"
			}
			return ""
		}},
	{pattern: regexp.MustCompile(`^Adjust your join queries to always utilize indexes$`),
		why: "query advice from Select_full_join since start; stacktune digest and the index advisor name the queries"},
	{pattern: regexp.MustCompile(`^table_definition_cache ?\(\d+\) ?> \d+`),
		why:   "compares the cache with the number of tables; stacktune raises it only when definitions were reopened over the interval with the cache full (Opened_table_definitions), which did not happen",
		check: func(r *e2eRun) string { return silentRule(r, "mysql-table-definition-cache") }},
	{pattern: regexp.MustCompile(`^table_open_cache \(> \d+\)$|^Increase table_open_cache gradually`),
		why:   "from the hit rate since start (every table opened once after start counts as a miss); stacktune raises it only when Opened_tables grew over the interval with the cache full",
		check: func(r *e2eRun) string { return silentRule(r, "mysql-table-open-cache") }},
	{pattern: regexp.MustCompile(`^thread_cache_size \(start at \d+\)$`),
		why:   "from Threads_created since start; stacktune raises it only when threads are created over the interval beyond the cache",
		check: func(r *e2eRun) string { return silentRule(r, "mysql-thread-cache") }},
	{pattern: regexp.MustCompile(`^key_buffer_size \(~? ?\d+.*\)$|^Buffer Key MyISAM set to 0`),
		why: "MyISAM key cache advice; stacktune has no MyISAM rule (MyISAM tables are rare in the stacks it audits) and counts key_buffer_size in the memory budget"},
	{pattern: regexp.MustCompile(`^Consider installing Sys schema`), why: "the sys schema is a convenience for people; stacktune reads performance_schema directly"},
}

// silentRule returns "" when stacktune's rule did not fire.
func silentRule(r *e2eRun, id string) string {
	for _, f := range r.res.Findings {
		if f.ID == id {
			return "stacktune's " + id + " fired: the rejection does not hold"
		}
	}
	return ""
}

// TestMySQLTunerComparison runs MySQLTuner against the same server and
// checks each of its recommendations against stacktune's findings.
func TestMySQLTunerComparison(t *testing.T) {
	r := runE2E(t)
	recs, adjust, err := r.tunerRecs, r.tunerAdjust, r.tunerErr
	if err != nil {
		t.Fatal(err)
	}
	stChanges := map[string]changeset.Change{}
	for _, f := range r.res.Findings {
		for _, ch := range f.Changes() {
			if ch.Kind == changeset.MySQLVariable {
				stChanges[ch.Name] = ch
			}
		}
	}
	matched := map[string]bool{}
	var report []string
	for _, item := range append(append([]string{}, adjust...), recs...) {
		var v *tunerVerdict
		for i := range tunerVerdicts {
			if tunerVerdicts[i].pattern.MatchString(item) {
				v = &tunerVerdicts[i]
				break
			}
		}
		switch {
		case v == nil:
			t.Errorf("unexplained MySQLTuner recommendation: %q (add it to tunerVerdicts: does stacktune agree, or why not?)", item)
		case v.agree:
			var have []string
			for _, name := range v.vars {
				if ch, ok := stChanges[name]; ok {
					have = append(have, fmt.Sprintf("%s %s → %s", name, ch.From, ch.To))
					matched[name] = true
				}
			}
			if len(have) == 0 {
				t.Errorf("MySQLTuner recommends %q; stacktune agrees in principle but made no change of %v", item, v.vars)
			}
			report = append(report, fmt.Sprintf("AGREE   %-70s stacktune: %s", item, strings.Join(have, ", ")))
		default:
			for _, name := range v.vars {
				matched[name] = true // the same variable, another verdict: explained by why
			}
			if v.check != nil {
				if msg := v.check(r); msg != "" {
					t.Errorf("MySQLTuner's %q is rejected because %s, but %s", item, v.why, msg)
				}
			}
			report = append(report, fmt.Sprintf("REJECT  %-70s why: %s", item, v.why))
		}
	}
	// What stacktune changes that MySQLTuner does not mention: each
	// needs its explanation too.
	names := make([]string, 0, len(stChanges))
	for name := range stChanges {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if matched[name] {
			continue
		}
		ch := stChanges[name]
		why := stacktuneOnly(r, name)
		if why == "" {
			t.Errorf("stacktune changes %s (%s → %s) and MySQLTuner does not: unexplained (add it to stacktuneOnly)", name, ch.From, ch.To)
		}
		report = append(report, fmt.Sprintf("ONLY-ST %-70s why: %s", fmt.Sprintf("%s %s → %s", name, ch.From, ch.To), why))
	}
	t.Logf("MySQLTuner 1.9.9 vs stacktune on MariaDB %s:\n%s", r.snap.MySQL.VersionNumber, strings.Join(report, "\n"))
}

// stacktuneOnly explains a change MySQLTuner did not make, checking the
// explanation on this run; "" when there is none (the test fails).
func stacktuneOnly(r *e2eRun, name string) string {
	switch name {
	case "slow_query_log":
		return "MySQLTuner only counts Slow_queries; stacktune wants the log on to feed stacktune digest"
	case "long_query_time":
		return "MySQLTuner judges slow queries against the current long_query_time; at 10 s the slow log records nothing useful for a digest"
	case "tmp_table_size", "max_heap_table_size":
		// MySQLTuner's disk share is since start, and its own
		// information_schema queries each create an in-memory
		// temporary table, so it dilutes what the interval shows.
		disk, _ := strconv.ParseFloat(r.tunerStatus["Created_tmp_disk_tables"], 64)
		all, _ := strconv.ParseFloat(r.tunerStatus["Created_tmp_tables"], 64)
		d, _ := r.snap.MySQL.Status.Deltas["Created_tmp_disk_tables"]
		a, _ := r.snap.MySQL.Status.Deltas["Created_tmp_tables"]
		if all == 0 || a == 0 || disk/all > 0.25 || d/a < tmpDiskShare {
			return ""
		}
		return fmt.Sprintf("MySQLTuner's share of disk temporary tables is since start and counts its own queries' temporary tables: %s (%.0f of %.0f), under its 25%% threshold; over stacktune's interval it was %s (%.0f of %.0f, %s/s)",
			pct(disk/all), disk, all, pct(d/a), d, a, num(r.snap.MySQL.Status.Rates["Created_tmp_disk_tables"]))
	case "innodb_buffer_pool_dump_at_shutdown", "innodb_buffer_pool_load_at_startup":
		return "warm-up across restarts, from the interval's misses with the data in the pool"
	}
	return ""
}

// runMySQLTuner runs MySQLTuner with --json over TCP against the sandbox
// and returns its general recommendations and variables to adjust.
//
// Two things needed working around, both found here:
//   - --socket is not enough: MySQLTuner always adds -P (3306 by default)
//     to the mysql client's arguments, and MariaDB 10.11's client, given
//     -P, ignores -S and connects over TCP to 127.0.0.1:3306 (checked:
//     `mysql -S /nonexistent.sock -P 3306` reaches port 3306), so it
//     audited the host's own MariaDB instead of the sandbox. It gets
//     --host 127.0.0.1 --port <sandbox port> instead, and the test checks
//     the port MySQLTuner reports.
//   - MySQLTuner 1.9.9 divides by innodb_buffer_pool_chunk_size, which
//     MariaDB 10.11.19 reports as 0 (the server sizes chunks itself), and
//     dies ("Illegal division by zero at line 6024") before printing any
//     recommendation; in JSON mode it prints nothing at all. A copy with
//     that one test extended to "chunk size undefined or 0" runs.
func runMySQLTuner(r *e2eRun) (recs, adjust []string, status map[string]string, err error) {
	src, err := os.ReadFile("/usr/bin/mysqltuner")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mysqltuner (Debian package mysqltuner) is not installed: %w", err)
	}
	const bug = "if ( !defined( $myvar{'innodb_buffer_pool_chunk_size'} ) ) {"
	script := string(src)
	if strings.Contains(script, bug) {
		script = strings.Replace(script, bug, "if ( !defined( $myvar{'innodb_buffer_pool_chunk_size'} ) || !int( $myvar{'innodb_buffer_pool_chunk_size'} ) ) {", 1)
	}
	path := filepath.Join(r.srv.Dir(), "mysqltuner")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return nil, nil, nil, err
	}
	ramMB := r.snap.Linux.Memory.TotalBytes / mib
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "perl", path, "--host", "127.0.0.1", "--port", strconv.Itoa(r.srv.Port()), "--user", "root",
		"--noask", "--nocolor", "--json", "--forcemem", fmt.Sprint(ramMB), "--forceswap", "0", "--skippassword")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, nil, nil, fmt.Errorf("mysqltuner: %v: %s", err, lastLines(string(ee.Stderr), 5))
		}
		return nil, nil, nil, fmt.Errorf("mysqltuner: %w", err)
	}
	var v struct {
		Recommendations []string       `json:"Recommendations"`
		AdjustVariables []string       `json:"AdjustVariables"`
		Status          map[string]any `json:"Status"`
		Client          struct {
			Port string `json:"TCP port"`
		} `json:"MySQL Client"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, nil, nil, fmt.Errorf("mysqltuner --json: %w: %.300s", err, out)
	}
	if v.Client.Port != strconv.Itoa(r.srv.Port()) {
		return nil, nil, nil, fmt.Errorf("mysqltuner audited port %q, not the sandbox's %d", v.Client.Port, r.srv.Port())
	}
	status = map[string]string{}
	for k, x := range v.Status {
		status[k] = fmt.Sprint(x)
	}
	return v.Recommendations, v.AdjustVariables, status, nil
}
