package fleet

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/internal/stats"
)

// PlanInputs are what a fleet plan needs besides the fleet snapshot.
type PlanInputs struct {
	// Options are the plan's inputs as the command line gave them: Rate
	// (the peak), Workers, ResponseTime at least. Servers, PortRange,
	// TWBuckets and, unless set, PerServerRate are taken from the fleet.
	Options capacity.Options
	// Role is the role of the web servers (default: "web" when the
	// inventory has it, else the role with the most hosts).
	Role string
	// Set says which of Options the caller gave explicitly ("port-range",
	// "tw-buckets", "servers"): those win over the fleet's.
	Set map[string]bool
}

// Plan is a capacity plan computed from a fleet's measurements.
type Plan struct {
	Role   string           `json:"role"`
	Report *capacity.Report `json:"plan"`
	// Measured lists what was taken from the fleet snapshot, one line
	// each, with where it came from.
	Measured []string `json:"measured"`
}

// PlanFleet fills a capacity plan's inputs from the fleet: the number of
// web servers (the role's hosts, those that did not answer included), the
// ip_local_port_range and tcp_max_tw_buckets most of them run, and, unless
// given, the request rate per web server measured now: the TIME_WAIT
// sockets each holds toward the MySQL port divided by TIME_WAIT's 60 s
// (one connection per request, as non-persistent PHP opens them: the PHP +
// MySQL TIME_WAIT write-up), the role's median. It then computes the plan and puts the DB
// side's running limits beside the figures to set: the largest
// max_connections of the hosts that run MySQL and memcached's -c (its
// maxconns) where memcached was read.
func PlanFleet(fs *Snapshot, in PlanInputs) (*Plan, error) {
	role := in.Role
	roles := fs.Roles()
	if role == "" {
		role = "web"
		if !slices.Contains(roles, role) {
			best := 0
			for _, r := range roles {
				if n := len(hostsOf(fs, r, false)); n > best {
					role, best = r, n
				}
			}
		}
	}
	all := hostsOf(fs, role, false)
	if len(all) == 0 {
		return nil, fmt.Errorf("the fleet snapshot has no host of role %q (roles: %s)", role, strings.Join(roles, ", "))
	}
	answered := hostsOf(fs, role, true)
	o := in.Options
	p := &Plan{Role: role}
	if !in.Set["servers"] {
		o.Servers = len(all)
		p.Measured = append(p.Measured, fmt.Sprintf("servers = %d: the hosts of role %s in the inventory (%d answered)", len(all), role, len(answered)))
	}
	sysctl := func(name string) (string, int) {
		counts := map[string]int{}
		for _, h := range answered {
			if l := h.Snapshot.Linux; l != nil && l.Sysctls[name] != "" {
				counts[l.Sysctls[name]]++
			}
		}
		best, n := "", 0
		for v, c := range counts {
			if c > n || (c == n && v < best) {
				best, n = v, c
			}
		}
		return best, n
	}
	if v, n := sysctl("net.ipv4.ip_local_port_range"); n > 0 && !in.Set["port-range"] {
		pr, err := capacity.ParsePortRange(v)
		if err == nil {
			o.PortRange = pr
			p.Measured = append(p.Measured, fmt.Sprintf("port range = %s: net.ipv4.ip_local_port_range on %d of %d hosts", v, n, len(answered)))
		}
	}
	if v, n := sysctl("net.ipv4.tcp_max_tw_buckets"); n > 0 && !in.Set["tw-buckets"] {
		if b, err := strconv.Atoi(v); err == nil {
			o.TWBuckets = b
			p.Measured = append(p.Measured, fmt.Sprintf("tcp_max_tw_buckets = %d on %d of %d hosts", b, n, len(answered)))
		}
	}
	if o.PerServerRate == 0 && !o.Persistent {
		var rates []float64
		for _, h := range answered {
			if l := h.Snapshot.Linux; l != nil {
				rates = append(rates, float64(l.TCP.TimeWait.ByRemotePort[mysqlPort(fs)])/o.TimeWait.Seconds())
			}
		}
		if len(rates) > 0 && stats.Median(rates) > 0 {
			o.PerServerRate = stats.Median(rates)
			p.Measured = append(p.Measured, fmt.Sprintf("rate per server = %s req/s: the median over %d hosts of their TIME_WAIT sockets to :%d ÷ %s s "+
				"(one MySQL connection per request, as non-persistent PHP makes them; this is the rate each server carries now, not the most it can: "+
				"give --per-server-rate from stacktune bench against one server for that)", num(math.Round(o.PerServerRate*100)/100), len(rates), mysqlPort(fs), num(o.TimeWait.Seconds())))
		}
	}
	rep, err := capacity.Compute(o)
	if err != nil {
		return nil, err
	}
	maxConn, maxConnHosts := "", []string{}
	mcConns, mcHosts := "", []string{}
	for _, h := range fs.Hosts {
		if !h.OK() {
			continue
		}
		if m := h.Snapshot.MySQL; m != nil && m.Variables["max_connections"] != "" {
			if maxConn == "" || atoi(m.Variables["max_connections"]) > atoi(maxConn) {
				maxConn = m.Variables["max_connections"]
			}
			maxConnHosts = append(maxConnHosts, h.Name)
		}
		if m := h.Snapshot.Memcached; m != nil && m.MaxConns > 0 {
			if v := strconv.FormatInt(m.MaxConns, 10); mcConns == "" || int(m.MaxConns) < atoi(mcConns) {
				mcConns = v
			}
			mcHosts = append(mcHosts, h.Name)
		}
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		switch {
		case r.ID == capacity.IDMaxConnections && maxConn != "" && r.Setting != nil:
			r.Setting.Current = maxConn
			p.Measured = append(p.Measured, fmt.Sprintf("max_connections now %s (largest on %s)", maxConn, strings.Join(maxConnHosts, ", ")))
			if atoi(maxConn) < int(r.Value) {
				r.Warnings = append(r.Warnings, fmt.Sprintf("the MySQL server runs max_connections %s, fewer than the %s connections %d servers × %d workers can open at once",
					maxConn, num(r.Value), o.Servers, o.Workers))
			}
		case r.ID == capacity.IDCacheConnections && mcConns != "" && r.Setting != nil:
			r.Setting.Current = mcConns
			p.Measured = append(p.Measured, fmt.Sprintf("memcached -c now %s (smallest on %s)", mcConns, strings.Join(mcHosts, ", ")))
		}
	}
	p.Report = rep
	return p, nil
}

// mysqlPort is the MySQL port the fleet's servers listen on (3306 unless
// a host's MySQL layer says otherwise).
func mysqlPort(fs *Snapshot) int {
	for _, h := range fs.Hosts {
		if h.OK() && h.Snapshot.MySQL != nil {
			if p := atoi(h.Snapshot.MySQL.Variables["port"]); p > 0 {
				return p
			}
		}
	}
	return 3306
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

func hostsOf(fs *Snapshot, role string, answered bool) []Host {
	var out []Host
	for _, h := range fs.Hosts {
		if h.Role == role && (!answered || h.OK()) {
			out = append(out, h)
		}
	}
	return out
}
