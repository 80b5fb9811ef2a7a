package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/stats"
)

// AuditOptions configure Audit.
type AuditOptions struct {
	// Advise are the options of each host's audit.
	Advise advise.Options
	// MinHosts is the fewest answering hosts a role needs before its
	// hosts are compared for outliers (default 3: with two, neither is
	// the odd one).
	MinHosts int
}

// Report is a fleet's audit: each role's findings with the hosts they
// apply to, each role's outlier hosts, and the hosts that did not answer.
type Report struct {
	Taken     time.Time `json:"taken"`
	Inventory string    `json:"inventory"`
	Hosts     int       `json:"hosts"`
	Answered  int       `json:"answered"`
	// Failed are the hosts without a snapshot, with why.
	Failed []Host       `json:"failed"`
	Roles  []RoleReport `json:"roles"`
	// PerHost are the hosts' own audits, by host name.
	PerHost map[string]*advise.Result `json:"per_host"`
}

// RoleReport is one role's part of the audit.
type RoleReport struct {
	Role string `json:"role"`
	// Hosts are the role's hosts that answered; Failed counts the others.
	Hosts  []string `json:"hosts"`
	Failed int      `json:"failed"`
	// Findings are the role's findings merged by id, most severe and most
	// widespread first.
	Findings []RoleFinding `json:"findings"`
	// Outliers are hosts whose setting or rate differs from the role's.
	Outliers []Outlier `json:"outliers"`
	// Compared says why outliers were not looked for, when they were not.
	NotCompared string `json:"not_compared,omitempty"`
}

// RoleFinding is a finding of one or more hosts of a role.
type RoleFinding struct {
	// Finding is the first host's (its evidence is that host's).
	advise.Finding
	// Hosts are the hosts it applies to; Of is how many answered.
	Hosts []string `json:"hosts"`
	Of    int      `json:"of"`
}

// Outlier is a host of a role whose setting or rate differs from the
// rest of the role.
type Outlier struct {
	Host string `json:"host"`
	// Kind is "setting" (compared with the role's most common value) or
	// "rate" (compared with the role's median).
	Kind   string `json:"kind"`
	Layer  string `json:"layer"`
	Metric string `json:"metric"`
	Value  string `json:"value"`
	// Typical is the role's most common value or median; Others how
	// many hosts it was computed from.
	Typical string `json:"typical"`
	Others  int    `json:"of"`
	// Why is the rule, with the numbers.
	Why string `json:"why"`
}

// Audit audits every host's snapshot with advise.Audit and merges the
// findings by role, then compares the hosts of each role.
func Audit(fs *Snapshot, opt AuditOptions) *Report {
	minHosts := cmpOr(opt.MinHosts, 3)
	r := &Report{Taken: fs.Taken, Inventory: fs.Inventory, Hosts: len(fs.Hosts), Failed: []Host{}, Roles: []RoleReport{}, PerHost: map[string]*advise.Result{}}
	for _, role := range fs.Roles() {
		rr := RoleReport{Role: role, Hosts: []string{}, Findings: []RoleFinding{}, Outliers: []Outlier{}}
		byID := map[string]int{}
		var snaps []hostSnap
		for _, h := range fs.Hosts {
			if h.Role != role {
				continue
			}
			if !h.OK() {
				rr.Failed++
				f := h
				f.Snapshot = nil
				r.Failed = append(r.Failed, f)
				continue
			}
			r.Answered++
			rr.Hosts = append(rr.Hosts, h.Name)
			snaps = append(snaps, hostSnap{h.Name, h.Snapshot})
			res := advise.Audit(h.Snapshot, opt.Advise)
			r.PerHost[h.Name] = res
			// A finding is the same on two hosts when it has the same id,
			// place among the host's findings of that id and settings to
			// change (titles and values can hold per-host paths).
			nth := map[string]int{}
			for _, f := range res.Findings {
				nth[f.ID]++
				var names []string
				for _, c := range f.Changes() {
					names = append(names, string(c.Kind)+" "+c.Name)
				}
				slices.Sort(names)
				key := fmt.Sprintf("%s#%d %s", f.ID, nth[f.ID], strings.Join(names, ","))
				if i, ok := byID[key]; ok {
					rr.Findings[i].Hosts = append(rr.Findings[i].Hosts, h.Name)
					continue
				}
				byID[key] = len(rr.Findings)
				rr.Findings = append(rr.Findings, RoleFinding{Finding: f, Hosts: []string{h.Name}})
			}
		}
		for i := range rr.Findings {
			rr.Findings[i].Of = len(rr.Hosts)
		}
		slices.SortStableFunc(rr.Findings, func(a, b RoleFinding) int {
			return cmp.Or(cmp.Compare(sevRank(a.Severity), sevRank(b.Severity)), cmp.Compare(len(b.Hosts), len(a.Hosts)), strings.Compare(a.ID, b.ID))
		})
		if len(snaps) >= minHosts {
			rr.Outliers = outliers(snaps)
		} else {
			rr.NotCompared = fmt.Sprintf("%d of the role's hosts answered: at least %d are needed to tell an odd one", len(snaps), minHosts)
		}
		r.Roles = append(r.Roles, rr)
	}
	return r
}

func sevRank(s advise.Severity) int {
	switch s {
	case advise.Critical:
		return 0
	case advise.Warning:
		return 1
	}
	return 2
}

type hostSnap struct {
	name string
	s    *collect.Snapshot
}

// metric is one comparable figure of a host.
type metric struct {
	layer, name string
	// text is set for settings, num for rates.
	text  string
	num   float64
	rate  bool
	floor float64 // the smallest difference that counts, for rates
}

// perHostVariables are MySQL variables that differ between hosts by
// nature (names, ids, paths of per-host files).
var perHostVariables = map[string]bool{
	"hostname": true, "server_id": true, "server_uuid": true, "pid_file": true, "report_host": true,
	"gtid_executed": true, "gtid_purged": true, "gtid_binlog_pos": true, "gtid_binlog_state": true,
	"gtid_current_pos": true, "gtid_slave_pos": true, "gtid_domain_id": true, "timestamp": true,
	"log_bin_basename": true, "log_bin_index": true, "relay_log_basename": true, "relay_log_index": true,
	"general_log_file": true, "slow_query_log_file": true, "log_error": true, "socket": true,
	"wsrep_node_name": true, "wsrep_node_address": true, "wsrep_node_incoming_address": true,
	"rand_seed1": true, "rand_seed2": true, "last_insert_id": true, "insert_id": true, "identity": true,
}

// mysqlRates are the MySQL status rates compared between hosts.
var mysqlRates = []string{"Questions", "Connections", "Threads_created", "Aborted_connects", "Created_tmp_disk_tables", "Slow_queries"}

// metrics lists what is compared of one host.
func metrics(s *collect.Snapshot) []metric {
	var out []metric
	set := func(layer, name, v string) { out = append(out, metric{layer: layer, name: name, text: v}) }
	rate := func(layer, name string, v, floor float64) {
		out = append(out, metric{layer: layer, name: name, num: v, rate: true, floor: floor})
	}
	if l := s.Linux; l != nil {
		for k, v := range l.Sysctls {
			set("linux", k, v)
		}
		if l.Cores > 0 {
			set("linux", "cores", strconv.Itoa(l.Cores))
		}
		if l.Memory.TotalBytes > 0 {
			set("linux", "memory", fmt.Sprintf("%.0f GiB", math.Round(float64(l.Memory.TotalBytes)/(1<<30))))
		}
		if l.KernelRelease != "" {
			set("linux", "kernel", l.KernelRelease)
		}
		seen := map[string]bool{}
		for _, p := range l.Processes {
			if lim, ok := p.Limits["nofile"]; ok && !seen[p.Name] {
				seen[p.Name] = true
				set("linux", "open files limit of "+p.Name, strconv.FormatInt(lim.Soft, 10))
			}
		}
		if l.TCP.States != nil {
			rate("linux", "TIME_WAIT sockets", float64(l.TCP.States["TIME_WAIT"]), 50)
			rate("linux", "ESTABLISHED sockets", float64(l.TCP.States["ESTABLISHED"]), 50)
			for port, n := range l.TCP.TimeWait.ByRemotePort {
				rate("linux", fmt.Sprintf("TIME_WAIT sockets to :%d", port), float64(n), 50)
			}
		}
		rate("linux", "load average (1 min)", l.LoadAverage[0], 1)
	}
	if m := s.MySQL; m != nil {
		for k, v := range m.Variables {
			if !perHostVariables[strings.ToLower(k)] {
				set("mysql", k, v)
			}
		}
		for _, k := range mysqlRates {
			if v, ok := m.Status.Rates[k]; ok {
				rate("mysql", k+" per second", v, 10)
			}
		}
	}
	if n := s.Nginx; n != nil {
		for k, v := range n.Settings {
			set("nginx", k, v.Value)
		}
		if n.Version != "" {
			set("nginx", "version", n.Version)
		}
	}
	if m := s.Memcached; m != nil {
		for k, v := range m.Settings {
			set("memcached", k, v)
		}
		if m.Version != "" {
			set("memcached", "version", m.Version)
		}
	}
	return out
}

// outliers compares the hosts of one role: a setting whose value differs
// from the one more than half of the hosts share, and a rate at least
// twice or at most half the role's median (and apart from it by at least
// the metric's floor, so 3 against 1 socket is no outlier).
func outliers(hosts []hostSnap) []Outlier {
	type key struct{ layer, name string }
	type val struct {
		host string
		m    metric
	}
	all := map[key][]val{}
	var keys []key
	for _, h := range hosts {
		for _, m := range metrics(h.s) {
			k := key{m.layer, m.name}
			if _, ok := all[k]; !ok {
				keys = append(keys, k)
			}
			all[k] = append(all[k], val{h.name, m})
		}
	}
	var out []Outlier
	for _, k := range keys {
		vs := all[k]
		if len(vs) < 3 {
			continue
		}
		if vs[0].m.rate {
			nums := make([]float64, len(vs))
			for i, v := range vs {
				nums[i] = v.m.num
			}
			med := stats.Median(nums)
			for _, v := range vs {
				x := v.m.num
				if math.Abs(x-med) < v.m.floor {
					continue
				}
				var why string
				switch {
				case med == 0:
					why = fmt.Sprintf("%s where the role's median is 0", num(x))
				case x >= 2*med:
					why = fmt.Sprintf("%s is %.1f× the role's median %s", num(x), x/med, num(med))
				case x <= med/2:
					why = fmt.Sprintf("%s is %.0f%% of the role's median %s", num(x), 100*x/med, num(med))
				default:
					continue
				}
				out = append(out, Outlier{Host: v.host, Kind: "rate", Layer: k.layer, Metric: k.name, Value: num(x), Typical: num(med), Others: len(vs), Why: why})
			}
			continue
		}
		counts := map[string]int{}
		for _, v := range vs {
			counts[v.m.text]++
		}
		mode, best := "", 0
		for t, c := range counts {
			if c > best || (c == best && t < mode) {
				mode, best = t, c
			}
		}
		if best*2 <= len(vs) {
			continue // no value most hosts share: nothing is odd
		}
		for _, v := range vs {
			if v.m.text != mode {
				out = append(out, Outlier{Host: v.host, Kind: "setting", Layer: k.layer, Metric: k.name, Value: v.m.text, Typical: mode, Others: len(vs),
					Why: fmt.Sprintf("%d of %d hosts have %q", best, len(vs), mode)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Layer, b.Layer), strings.Compare(a.Metric, b.Metric), strings.Compare(a.Host, b.Host)) < 0
	})
	return out
}

func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// RoleResult is a role's findings as one host's audit result: each the
// first host's (its change advised from that host's values), for a change
// set the whole role takes (advise.Emit, then apply --hosts, where a
// host running another value than a change was advised from refuses it as
// drifted).
func (r *Report) RoleResult(role string) (*advise.Result, error) {
	var names []string
	for _, rr := range r.Roles {
		names = append(names, rr.Role)
		if rr.Role != role {
			continue
		}
		res := &advise.Result{Host: fmt.Sprintf("role %s (%d hosts)", role, len(rr.Hosts)), Taken: r.Taken, Findings: []advise.Finding{}, NotSeen: []string{}}
		for _, f := range rr.Findings {
			res.Findings = append(res.Findings, f.Finding)
		}
		return res, nil
	}
	return nil, fmt.Errorf("no role %q in the fleet snapshot (roles: %s)", role, strings.Join(names, ", "))
}
