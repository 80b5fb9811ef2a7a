package advise

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/collect"
)

// linux-cpu-by-service: how many cores each service of the stack used
// over the collection interval, and whether the CPU is the bottleneck and
// whose it is (the ISUCON5 runner-up saw MySQL at 300% CPU in top and went after the
// queries). From /proc/PID/stat read twice, never CPU time since start.
var linuxCPUByService = ruleFunc{"linux-cpu-by-service", LayerLinux, checkLinuxCPUByService}

const (
	// cpuSaturated is the host's busy share at which the CPU is the
	// bottleneck.
	cpuSaturated = 0.85
	// cpuOneCore is a process's share of one core at which a server that
	// does its work on one thread (Redis, an nginx worker) is saturated.
	cpuOneCore = 0.9
)

// oneThreaded are the servers whose work for a client runs on one
// thread per process.
var oneThreaded = map[string]bool{"redis-server": true, "nginx": true}

// cpuAdvice says where a service's CPU goes, for the effect.
var cpuAdvice = map[string]string{
	"mysqld":       "the database's CPU is its queries: stacktune digest ranks them by total time and stacktune indexes proves the indexes that remove scans (the ISUCON5 runner-up went 7000 → 18000 points on queries)",
	"mariadbd":     "the database's CPU is its queries: stacktune digest ranks them by total time and stacktune indexes proves the indexes that remove scans (the ISUCON5 runner-up went 7000 → 18000 points on queries)",
	"nginx":        "nginx's CPU is TLS, gzip and logging: gzip_comp_level 1-2, keepalive to clients and upstreams, access_log buffer=",
	"redis-server": "Redis runs commands on one thread: a saturated Redis needs fewer round trips (pipelines, MGET) or more instances",
	"memcached":    "memcached's CPU is its requests and connections: multi-gets and persistent connections",
}

func checkLinuxCPUByService(c *Context) []Finding {
	l := c.Linux
	if l == nil {
		return nil
	}
	c.usesRates(LayerLinux)
	if l.CPU == nil || l.IntervalSeconds <= 0 {
		return nil
	}
	if idle, _ := c.LinuxIdle(); idle {
		return nil
	}
	var svcs []collect.Service
	var used float64
	for _, s := range l.Services {
		if s.CPUCores != nil {
			svcs = append(svcs, s)
			used += *s.CPUCores
		}
	}
	if len(svcs) == 0 {
		return nil
	}
	sort.SliceStable(svcs, func(i, j int) bool { return *svcs[i].CPUCores > *svcs[j].CPUCores })
	cores := max(l.Cores, 1)
	src := fmt.Sprintf("/proc/PID/stat (utime + stime), delta over %s s", num(l.IntervalSeconds))
	f := Finding{
		ID:       "linux-cpu-by-service",
		Severity: Info,
		Evidence: []Evidence{ev("host CPU busy", fmt.Sprintf("%.2f of %d cores (%s)", l.CPU.BusyCores, cores, pct(l.CPU.Busy)), "",
			fmt.Sprintf("/proc/stat, delta over %s s", num(l.IntervalSeconds)))},
		Source: "the ISUCON5 runner-up's write-up (top showed MySQL at 300% CPU: the database was the bottleneck, and the queries were the fix)",
	}
	for _, s := range svcs {
		what := fmt.Sprintf("%s (%d processes, %d threads)", s.Name, s.Processes, s.Threads)
		f.Evidence = append(f.Evidence, ev(what, fmt.Sprintf("%.2f cores (%.0f%%)", *s.CPUCores, *s.CPUCores*100), "", src))
	}
	if rest := l.CPU.BusyCores - used; rest > 0.05 {
		f.Evidence = append(f.Evidence, ev("the rest of the host (other processes, the kernel)", fmt.Sprintf("%.2f cores", rest), "", "host busy less the services"))
	}
	if l.CPU.IOWait >= 0.2 {
		f.Evidence = append(f.Evidence, ev("CPU time waiting for I/O", pct(l.CPU.IOWait), "", "/proc/stat iowait"))
	}
	top := svcs[0]
	name := serviceName(top)
	switch {
	case l.CPU.Busy >= cpuSaturated:
		f.Severity = Warning
		f.Title = fmt.Sprintf("The CPU is the bottleneck: %.1f of %d cores busy over the interval, %.1f of them %s", l.CPU.BusyCores, cores, *top.CPUCores, name)
	default:
		for _, s := range svcs {
			if oneThreaded[s.Name] && s.BusiestCores != nil && *s.BusiestCores >= cpuOneCore {
				f.Severity = Warning
				f.Title = fmt.Sprintf("A %s process used %.0f%% of one core: it does its work on one thread, so it is saturated while the host has %.1f of %d cores idle",
					serviceName(s), *s.BusiestCores*100, float64(cores)-l.CPU.BusyCores, cores)
				top, name = s, serviceName(s)
				break
			}
		}
		if f.Title == "" {
			f.Title = fmt.Sprintf("CPU over the interval: %s used %.2f cores of the %.2f busy (of %d)", name, *top.CPUCores, l.CPU.BusyCores, cores)
		}
	}
	advice := cpuAdvice[top.Name]
	if advice == "" && c.isApp(top) {
		advice = "the application's CPU: app-workers sizes the workers to the cores, and its slowest endpoints (stacktune http) show where the time goes"
	}
	if advice == "" {
		advice = "look at what " + name + " does per request"
	}
	f.Effect = "says which layer to work on: " + advice
	return []Finding{f}
}

// serviceName is a service's name for people: its pattern without glob
// characters ("php-fpm" for "php-fpm*").
func serviceName(s collect.Service) string {
	return strings.TrimRight(s.Name, "*?")
}

// isApp reports whether a service is the application's workers: an app
// server known by name or a pattern given with --app-process.
func (c *Context) isApp(s collect.Service) bool {
	if c.Linux == nil {
		return false
	}
	for _, p := range append(append([]string{}, collect.AppServers...), c.Linux.AppProcesses...) {
		if s.Name == p {
			return true
		}
	}
	return false
}
