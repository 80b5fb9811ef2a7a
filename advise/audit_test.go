package advise

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// everythingWrong makes as many MySQL rules fire as one snapshot can.
func everythingWrong(s *collect.Snapshot) {
	bigData(s)
	missReads(s)
	commitHeavy(s)
	diskTmp(s)
	setDelta(s, "Innodb_log_waits", 5)
	setDelta(s, "Innodb_os_log_written", 5*float64(mib)*fixInterval)
	setDelta(s, "Innodb_buffer_pool_wait_free", 30)
	setDelta(s, "Threads_created", 500)
	setDelta(s, "Aborted_connects", 40)
	setDelta(s, "Connection_errors_max_connections", 10)
	setDelta(s, "Opened_tables", 300)
	setDelta(s, "Table_open_cache_overflows", 30)
	setDelta(s, "Opened_table_definitions", 300)
	setDelta(s, "Binlog_cache_use", 100)
	setDelta(s, "Binlog_cache_disk_use", 50)
	setGauge(s, "Open_tables", 5000)
	setGauge(s, "Open_table_definitions", 5000)
	setGauge(s, "Open_files", 30000)
	setGauge(s, "Max_used_connections", 1000)
	setVar(s, "log_bin", "ON")
	setVar(s, "slow_query_log", "OFF")
	if _, ok := s.MySQL.Variables["query_cache_type"]; ok {
		setVar(s, "query_cache_type", "ON")
		setVar(s, "query_cache_size", fmt.Sprint(64*mib))
	}
	if _, ok := s.MySQL.Variables["innodb_data_file_buffering"]; ok {
		setVar(s, "innodb_data_file_buffering", "ON")
	}
	budgetBreaker(s)
	s.Linux.Processes[0].Limits["nofile"] = collect.Limit{Soft: 1024, Hard: 1024}
}

// TestNoVariableTheServerLacks runs every rule on every flavour and version
// with everything wrong, without Audit's safety net, and checks that each
// MySQL variable a rule proposes exists on that server and in the version
// table.
func TestNoVariableTheServerLacks(t *testing.T) {
	for _, sv := range servers {
		for _, allow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/allow=%v", sv.name, allow), func(t *testing.T) {
				s := snapFor(sv)
				everythingWrong(s)
				c := newContext(s, Options{AllowDurabilityLoss: allow, DedicatedDB: true})
				fired := 0
				for _, r := range Rules {
					for _, f := range r.Check(c) {
						fired++
						for _, ch := range f.Changes() {
							if ch.Kind != changeset.MySQLVariable {
								continue
							}
							if _, ok := s.MySQL.Variables[ch.Name]; !ok {
								t.Errorf("%s proposes %s, which %s does not have", f.ID, ch.Name, sv.name)
							}
							if _, known := mysqlvar.Dynamic(sv.flavor, parseVersion(sv.version), ch.Name); !known {
								t.Errorf("%s proposes %s, which the version table does not list", f.ID, ch.Name)
							}
						}
					}
				}
				if fired < 15 {
					t.Errorf("only %d findings: the sweep does not exercise the rules", fired)
				}
			})
		}
	}
}

// TestMemoryBudgetSaysDecrease: a 4 GiB host with a 3 GiB pool, 1000
// connections and 8 MiB sort and join buffers: the audit says decrease,
// and never increase.
func TestMemoryBudgetSaysDecrease(t *testing.T) {
	s := snapFor(servers[5])
	budgetBreaker(s)
	bigData(s)
	res := Audit(s, Options{})
	byID := map[string]Finding{}
	for _, f := range res.Findings {
		byID[f.ID] = f
		for _, ch := range f.Changes() {
			if ch.Direction == Increase && (ch.Name == "innodb_buffer_pool_size" || ch.Name == "max_connections" || strings.HasSuffix(ch.Name, "_buffer_size")) {
				t.Errorf("%s increases %s on a host over its memory budget", f.ID, ch.Name)
			}
		}
	}
	mb, ok := byID["mysql-memory-budget"]
	if !ok || mb.Severity != Critical {
		t.Fatalf("no critical memory budget finding:%s", describe(res.Findings))
	}
	ps, ok := byID["mysql-per-session-buffers"]
	if !ok || ps.Change == nil || ps.Change.Direction != Decrease {
		t.Fatalf("no per-session decrease:%s", describe(res.Findings))
	}
	wantText(t, mb.Evidence[len(mb.Evidence)-1].Source, "1000 max_connections")
	// The budget arithmetic: 3 GiB pool + 16 MiB log buffer + 128 MiB key
	// buffer + 128 MiB Aria + (8 + 8 + 0.125 + 0.25 + 0.29 + 0.016 MiB) ×
	// 1000 + 600 MiB mysqld... is not counted (it is MySQL itself) + 1 GiB
	// reserve.
	b, _ := newContext(s, Options{}).Budget()
	if b.Services != 0 || b.Reserve != gib || b.MaxConnections != 1000 {
		t.Errorf("budget %+v", b)
	}
	if got := b.PerConnection; got != 8*mib+8*mib+128*kib+256*kib+299008+16*kib {
		t.Errorf("per connection %d", got)
	}
}

// TestPartialSnapshots: the audit runs on whatever was collected and says
// what it could not see, without a rule failing.
func TestPartialSnapshots(t *testing.T) {
	cases := map[string]*collect.Snapshot{
		"nil":   nil,
		"empty": {Version: 1},
		"mysql without variables": {Version: 1, MySQL: &collect.MySQL{Flavor: "mysql"},
			Errors: []collect.CollectorError{{Collector: "mysql", Error: "mysql: partial: variables (SHOW GLOBAL VARIABLES): access denied", Partial: true}}},
		"mysql with one status reading": func() *collect.Snapshot {
			s := snapFor(servers[2])
			s.MySQL.Status.Second, s.MySQL.Status.IntervalSeconds, s.MySQL.Status.Deltas, s.MySQL.Status.Rates = nil, 0, nil, nil
			return s
		}(),
		"linux with nothing": {Version: 1, Linux: &collect.Linux{}},
		"nginx with nothing": {Version: 1, Nginx: &collect.Nginx{}, Linux: &collect.Linux{}},
		"kv with nothing":    {Version: 1, Memcached: &collect.Memcached{}, Redis: &collect.Redis{}},
		"everything, wrong": func() *collect.Snapshot {
			s := snapFor(servers[0])
			everythingWrong(s)
			s.Nginx = loadNginx(t, "keepalive")
			s.Memcached, s.Redis = memcachedLayer(), redisLayer()
			return s
		}(),
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res := Audit(cases[name], Options{AllowDurabilityLoss: true, Fixed: map[string]string{"innodb_doublewrite": "ON"}})
			for _, n := range res.NotSeen {
				if strings.Contains(n, "stacktune bug") {
					t.Error(n)
				}
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"findings":[`) || !strings.Contains(string(b), `"collector_errors":[`) {
				t.Errorf("JSON lists must be arrays: %.200s", b)
			}
		})
	}
	res := Audit(cases["mysql without variables"], Options{})
	joined := strings.Join(res.NotSeen, "\n")
	for _, want := range []string{"linux: not collected", "nginx: not collected", "mysql: no variables", "access denied"} {
		if !strings.Contains(joined, want) && !strings.Contains(fmt.Sprint(res.CollectorErrors), want) {
			t.Errorf("NotSeen lacks %q:\n%s", want, joined)
		}
	}
	res = Audit(cases["mysql with one status reading"], Options{})
	if !strings.Contains(strings.Join(res.NotSeen, "\n"), "not read twice") {
		t.Errorf("NotSeen: %q", res.NotSeen)
	}
}

// TestJSONShape: the keys the CLI and the renderer rely on.
func TestJSONShape(t *testing.T) {
	s := snapFor(servers[5])
	diskTmp(s)
	b, err := json.Marshal(Audit(s, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Findings []map[string]json.RawMessage `json:"findings"`
		Errors   []collect.CollectorError     `json:"collector_errors"`
		NotSeen  []string                     `json:"not_seen"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, k := range []string{"id", "severity", "layer", "evidence", "change", "risk", "source", "title", "effect"} {
		if _, ok := v.Findings[0][k]; !ok {
			t.Errorf("finding lacks %q: %s", k, b)
		}
	}
}

// TestSortedBySeverity: critical first, then warning, then info; by id
// within.
func TestSortedBySeverity(t *testing.T) {
	s := snapFor(servers[5])
	everythingWrong(s)
	res := Audit(s, Options{})
	for i := 1; i < len(res.Findings); i++ {
		a, b := res.Findings[i-1], res.Findings[i]
		if a.Severity.rank() > b.Severity.rank() || a.Severity == b.Severity && a.ID > b.ID {
			t.Fatalf("out of order at %d:%s", i, describe(res.Findings))
		}
	}
}

// TestConflictsResolved: two findings setting one variable to different
// values keep the most severe one's.
func TestConflictsResolved(t *testing.T) {
	fs := []Finding{
		{ID: "a", Severity: Critical, Change: &changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "max_connections", To: "500"}},
		{ID: "b", Severity: Info, Change: &changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "max-connections", To: "200"},
			Also: []changeset.Change{{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "thread_cache_size", To: "50"}}},
		{ID: "c", Severity: Info, Change: &changeset.Change{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "vm.swappiness", To: "1"},
			Also: []changeset.Change{{Kind: changeset.MySQLVariable, Target: "mysqld", Name: "max_connections", To: "500"}}},
	}
	resolveConflicts(fs)
	if fs[0].Change == nil || fs[1].Change != nil || len(fs[1].Also) != 0 || !strings.Contains(fs[1].Risk.Note, "a sets it to 500") {
		t.Errorf("%+v", fs[:2])
	}
	if fs[2].Change == nil || len(fs[2].Also) != 1 {
		t.Errorf("the same value twice is no conflict: %+v", fs[2])
	}
}

// TestEnforceDropsUnknownVariables: Audit's safety net drops a change of a
// variable the server lacks, saying so.
func TestEnforceDropsUnknownVariables(t *testing.T) {
	bad := ruleFunc{"test-bad", LayerMySQL, func(c *Context) []Finding {
		return []Finding{{ID: "test-bad", Title: "t", Severity: Warning, Evidence: []Evidence{ev("x", "1", "", "test")},
			Change: c.MySQLChange("query_cache_size", "0", Decrease), Effect: "e", Source: "test"}}
	}}
	res := audit(snapFor(serverNamed(t, "MySQL 8.0")), Options{}, []Rule{bad})
	f := res.Findings[0]
	if f.Change != nil || f.Severity != Info || !strings.Contains(f.Risk.Note, "does not exist on this server") {
		t.Errorf("%+v", f)
	}
}

func TestParseFixed(t *testing.T) {
	m, err := ParseFixed([]string{"innodb_doublewrite=1", " innodb-flush-log-at-trx-commit = 1 ", "vm.swappiness=1"})
	if err != nil || len(m) != 3 || m["innodb-flush-log-at-trx-commit"] != "1" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"innodb_doublewrite", "=1", "x="} {
		if _, err := ParseFixed([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestREADMEListsEveryRule: the README's list of rules by layer names
// every rule of Rules, and no rule that is not one.
func TestREADMEListsEveryRule(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "**The rules, by layer**")
	if start < 0 {
		t.Fatal("README has no list of the rules by layer")
	}
	end := strings.Index(text[start:], "\n## ")
	list := text[start : start+end]
	ids := map[string]bool{}
	for _, r := range Rules {
		ids[r.ID()] = true
		if !strings.Contains(list, "`"+r.ID()+"`") {
			t.Errorf("README does not list %s", r.ID())
		}
	}
	for _, m := range regexp.MustCompile("`([a-z0-9]+(-[a-z0-9]+)+)`").FindAllStringSubmatch(list, -1) {
		if !ids[m[1]] && !strings.HasPrefix(m[1], "--") && m[1] != "allow-durability-loss" {
			t.Errorf("README lists %s, which is no rule", m[1])
		}
	}
}
