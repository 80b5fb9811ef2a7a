package advise

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// app-workers: more workers is not more throughput. A request holds a
// worker for its response time W and uses C of CPU within it, so cores ×
// W / C workers keep every core busy (capacity.CPUWorkers, the same sizing
// as `stacktune plan`'s cpu-workers); beyond that workers wait for a core,
// adding latency and memory. The smartphone game backend cut PHP-FPM's pm.max_children from
// 50 to 20 on 8 cores under CPU-heavy load and did better. The rule
// measures C over the collection interval: the pool's CPU (the Linux
// collector's php-fpm processes) over the requests it accepted (its
// status page read at the run's start and end), W from the workers' last
// requests; it says decrease when the pool is larger than the cores serve
// and the CPU is busy, increase when every child was busy (max children
// reached) while the CPU had room. App servers stacktune only sees in the
// process table (unicorn, puma, gunicorn, uWSGI, --app-process) get their
// workers and CPU as evidence, without a number: their request rate is
// not measured.
var appWorkers = ruleFunc{"app-workers", LayerApp, checkAppWorkers}

const (
	// appCPUBusy is the host's busy share (or the pool's share of the
	// cores) from which the CPU counts as the constraint.
	appCPUBusy = 0.7
	// appMinRequests is the requests over the interval a CPU per request
	// needs.
	appMinRequests = 20
)

// poolMeasure is what the interval says of one PHP-FPM pool.
type poolMeasure struct {
	pool           collect.PHPFPMPool
	maxChildren    int64
	requests, secs float64 // accepted over the interval (less the collector's own)
	wall           float64 // mean response time, s (0: unknown)
	wallSrc        string
	reached        float64 // max children reached over the interval
}

func checkAppWorkers(c *Context) []Finding {
	var out []Finding
	if c.PHPFPM != nil {
		out = append(out, phpfpmWorkerFindings(c)...)
	}
	out = append(out, otherAppServers(c)...)
	return out
}

// phpfpmCPU is the CPU the host's php-fpm processes used over the Linux
// interval, in seconds, and that interval; ok is false without them.
func phpfpmCPU(c *Context) (cpu, secs float64, svc collect.Service, ok bool) {
	if c.Linux == nil || c.Linux.IntervalSeconds <= 0 {
		return 0, 0, svc, false
	}
	c.usesRates(LayerLinux)
	for _, s := range c.Linux.Services {
		if s.Name == "php-fpm*" && s.CPUSeconds != nil {
			return *s.CPUSeconds, c.Linux.IntervalSeconds, s, true
		}
	}
	return 0, 0, svc, false
}

func measurePool(p collect.PHPFPMPool) poolMeasure {
	m := poolMeasure{pool: p}
	if v, ok := p.Value("pm.max_children"); ok {
		m.maxChildren, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	}
	if iv := p.Interval; iv != nil && !iv.Restarted && iv.Seconds > 0 {
		// The collector's second status request is accepted too.
		m.requests, m.secs = max(0, iv.Deltas["accepted_conn"]-1), iv.Seconds
		m.reached = iv.Deltas["max_children_reached"]
	}
	if st := p.Status; st != nil {
		if d, _, n := st.LastRequests(); n > 0 {
			m.wall, m.wallSrc = d, fmt.Sprintf("the last request of %d idle workers (PHP-FPM full status)", n)
		} else if m.requests > 0 && st.ActiveProcesses > 1 {
			// Little's law on the busy workers seen (less the one serving
			// the status page).
			m.wall = float64(st.ActiveProcesses-1) / (m.requests / m.secs)
			m.wallSrc = "active processes / requests per second (Little's law)"
		}
	}
	return m
}

func phpfpmWorkerFindings(c *Context) []Finding {
	var ms []poolMeasure
	var reqs float64
	for _, p := range c.PHPFPM.Pools {
		m := measurePool(p)
		ms = append(ms, m)
		reqs += m.requests
	}
	cpuSecs, linuxSecs, svc, haveCPU := phpfpmCPU(c)
	cores := c.Cores()
	var out []Finding
	for _, m := range ms {
		if m.maxChildren <= 0 {
			continue
		}
		target := changeset.PHPFPMTarget(m.pool.Name)
		f := Finding{
			ID:     "app-workers",
			Layer:  LayerApp,
			Source: "the smartphone game backend's write-up (pm.max_children 50 → 20 on 8 cores under CPU-heavy load; size workers from CPU time per request and cores, then load-test); stacktune plan cpu-workers (the same sizing)",
		}
		pm, _ := m.pool.Value("pm")
		f.Evidence = append(f.Evidence, ev("pm.max_children of pool "+m.pool.Name, fmt.Sprint(m.maxChildren), "workers", place(m.pool.File, m.pool.Line)),
			ev("pm of pool "+m.pool.Name, pm, "", place(m.pool.File, m.pool.Line)))
		if cores > 0 {
			f.Evidence = append(f.Evidence, ev("cores", fmt.Sprint(cores), "", srcCPUs))
		}
		if m.secs > 0 {
			f.Evidence = append(f.Evidence, ev("requests accepted by pool "+m.pool.Name, fmt.Sprintf("%s (%s/s)", num(m.requests), num(m.requests/m.secs)), "requests",
				fmt.Sprintf("PHP-FPM status (accepted conn), delta over %s s", num(m.secs))))
		}
		if m.reached > 0 {
			f.Evidence = append(f.Evidence, ev("max children reached", num(m.reached), "times", fmt.Sprintf("PHP-FPM status, delta over %s s", num(m.secs))))
		}
		var cpu, queue float64 // CPU and wait for a CPU, seconds per request
		haveQueue := false
		switch {
		case m.pool.CPU != nil && m.requests >= appMinRequests:
			// The pool's own workers, read with its status: the same
			// window as the requests.
			cpu, queue, haveQueue = m.pool.CPU.Seconds/m.requests, m.pool.CPU.RunQueueSeconds/m.requests, true
			f.Evidence = append(f.Evidence, ev(fmt.Sprintf("CPU of the pool's workers (%d of %d)", m.pool.CPU.Workers, m.pool.CPU.Of), fmt.Sprintf("%.2f cores", m.pool.CPU.Seconds/m.secs), "",
				fmt.Sprintf("/proc/PID/task/TID/schedstat, read with each status reading, delta over %s s", num(m.secs))),
				ev("CPU time per request", fmtMS(cpu), "", "the workers' CPU seconds / the requests they accepted"))
		case haveCPU && reqs >= appMinRequests && m.secs > 0:
			rate := reqs / m.secs
			cpu = cpuSecs / (rate * linuxSecs)
			if svc.RunQueueSeconds != nil {
				queue, haveQueue = *svc.RunQueueSeconds/(rate*linuxSecs), true
			}
			f.Evidence = append(f.Evidence, ev(fmt.Sprintf("CPU of the php-fpm processes (%d, %d workers)", svc.Processes, svc.Workers), fmt.Sprintf("%.2f cores", *svc.CPUCores), "",
				fmt.Sprintf("/proc/PID/stat, delta over %s s", num(linuxSecs))),
				ev("CPU time per request", fmtMS(cpu), "", "php-fpm CPU seconds / requests accepted by its pools over the interval"))
		default:
			if st := m.pool.Status; st != nil {
				if _, lc, n := st.LastRequests(); n > 0 && lc > 0 {
					cpu = lc
					f.Evidence = append(f.Evidence, ev("CPU time per request", fmtMS(cpu), "", fmt.Sprintf("the last request of %d idle workers (PHP-FPM full status, in 10 ms ticks)", n)))
				}
			}
		}
		wall := m.wall
		if m.wall > 0 {
			f.Evidence = append(f.Evidence, ev("response time", fmtMS(m.wall), "", m.wallSrc))
			// Time spent waiting for a CPU is the oversubscription
			// itself, not time a worker waits on I/O: take it out, or
			// more workers would justify themselves.
			if haveQueue {
				wall = max(cpu, m.wall-queue)
				f.Evidence = append(f.Evidence, ev("waiting for a CPU per request", fmtMS(queue), "", "run-queue time of the workers (schedstat) / requests"),
					ev("response time without that wait", fmtMS(wall), "", "response time less the wait for a CPU, at least the CPU time"))
			}
		}
		busy := 0.0
		if c.Linux != nil && c.Linux.CPU != nil {
			busy = c.Linux.CPU.Busy
			f.Evidence = append(f.Evidence, ev("host CPU busy", pct(busy), "", fmt.Sprintf("/proc/stat, delta over %s s", num(c.Linux.IntervalSeconds))))
		}
		cpuBound := busy >= appCPUBusy || (haveCPU && cores > 0 && cpuSecs/linuxSecs >= appCPUBusy*float64(cores))
		if cpu <= 0 || cores <= 0 {
			if m.reached > 0 {
				f.Severity = Warning
				f.Title = fmt.Sprintf("Every worker of pool %s was busy %s times over the interval", m.pool.Name, num(m.reached))
				f.Effect = "requests waited for a worker; whether more workers help depends on the CPU per request, which needs the pool's status page (pm.status_path) and the host's CPU (collect on the web host)"
				out = append(out, f)
			}
			continue
		}
		n, formula := capacity.CPUWorkers(cores, dur(cpu), dur(max(wall, cpu)))
		f.Evidence = append(f.Evidence, ev("workers the cores keep busy", fmt.Sprint(n), "workers", formula))
		if m.wall <= 0 {
			f.Evidence[len(f.Evidence)-1].Source += " (response time unknown: taken as the CPU time, all CPU)"
		}
		switch {
		case float64(m.maxChildren) > capacity.WorkersExcess*float64(n) && cpuBound:
			f.Severity = Warning
			f.Title = fmt.Sprintf("Pool %s may run %d workers, more than the %d that %d cores keep busy, with the CPU busy", m.pool.Name, m.maxChildren, n, cores)
			f.Change = &changeset.Change{Kind: changeset.PHPFPM, Target: target, Name: "pm.max_children", From: fmt.Sprint(m.maxChildren), To: fmt.Sprint(n), Direction: Decrease}
			f.Also = spareServers(m.pool, target, int64(n))
			f.Effect = fmt.Sprintf("at most %d requests compete for %d cores instead of %d: the same throughput with shorter response times and less memory (the smartphone game backend: 50 → 20 on 8 cores was faster)", n, cores, m.maxChildren)
			f.Risk.Note = "a request that waits on I/O longer than measured (a slow database) holds its worker: check the listen queue after the change, and load-test (stacktune tune measures it)"
		case m.reached > 0 && !cpuBound && m.maxChildren < int64(n):
			to := min(int64(n), m.maxChildren*2)
			f.Severity = Warning
			f.Title = fmt.Sprintf("Every worker of pool %s was busy %s times over the interval while the CPU had room", m.pool.Name, num(m.reached))
			f.Change = &changeset.Change{Kind: changeset.PHPFPM, Target: target, Name: "pm.max_children", From: fmt.Sprint(m.maxChildren), To: fmt.Sprint(to), Direction: Increase}
			f.Effect = fmt.Sprintf("requests stop queueing for a worker: %d cores keep up to %d workers busy at this CPU per request", cores, n)
			f.Risk.Memory = "each PHP-FPM worker holds its own memory (memory_limit at most): check the RAM for the new count"
		default:
			continue
		}
		f.Risk.Restart = false
		out = append(out, f)
	}
	return out
}

// spareServers keeps a dynamic pool valid when pm.max_children goes down
// to n: php-fpm -t refuses pm.max_spare_servers or pm.start_servers above
// it.
func spareServers(p collect.PHPFPMPool, target string, n int64) []changeset.Change {
	if pm, _ := p.Value("pm"); pm != "dynamic" {
		return nil
	}
	var out []changeset.Change
	for _, k := range []string{"pm.start_servers", "pm.max_spare_servers", "pm.min_spare_servers"} {
		v, _ := p.Value(k)
		cur, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || cur <= n {
			continue
		}
		out = append(out, changeset.Change{Kind: changeset.PHPFPM, Target: target, Name: k, From: v, To: fmt.Sprint(n), Direction: Decrease})
	}
	return out
}

// otherAppServers: app servers seen only in the process table.
func otherAppServers(c *Context) []Finding {
	if c.Linux == nil || c.Linux.CPU == nil {
		return nil
	}
	cores := c.Cores()
	var out []Finding
	for _, s := range c.Linux.Services {
		if s.Name == "php-fpm*" || !c.isApp(s) || s.CPUCores == nil || cores <= 0 {
			continue
		}
		c.usesRates(LayerLinux)
		workers := max(s.Workers, 1)
		if c.Linux.CPU.Busy < cpuSaturated || workers <= 2*cores {
			continue
		}
		out = append(out, Finding{
			ID: "app-workers", Layer: LayerApp, Severity: Info,
			Title: fmt.Sprintf("%s runs %d workers on %d cores with the CPU %s busy", serviceName(s), workers, cores, pct(c.Linux.CPU.Busy)),
			Evidence: []Evidence{
				ev(serviceName(s)+" processes", fmt.Sprintf("%d (%d workers, %d threads)", s.Processes, s.Workers, s.Threads), "", "/proc (the app server's master and its children)"),
				ev(serviceName(s)+" CPU", fmt.Sprintf("%.2f cores", *s.CPUCores), "", fmt.Sprintf("/proc/PID/stat, delta over %s s", num(c.Linux.IntervalSeconds))),
				ev("host CPU busy", pct(c.Linux.CPU.Busy), "", "/proc/stat"), ev("cores", fmt.Sprint(cores), "", srcCPUs)},
			Change: &changeset.Change{Kind: changeset.App, Target: serviceName(s) + " configuration", Name: "workers", From: fmt.Sprint(workers),
				To: "cores × response time / CPU per request (stacktune plan --cores --cpu-per-request gives the number)", Direction: Decrease},
			Effect: "with the CPU saturated, workers beyond what the cores keep busy only wait for a core; the request rate of this app server is not measured here, so the number comes from its CPU per request (its CPU over its requests, from the access log)",
			Source: "the smartphone game backend's write-up (more workers is not more throughput: 50 → 20 on 8 cores)",
		})
	}
	return out
}

func dur(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// fmtMS formats seconds as milliseconds.
func fmtMS(s float64) string { return num(math.Round(s*1e5)/100) + " ms" }
