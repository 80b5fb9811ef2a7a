package capacity

import (
	"fmt"
	"math"
	"time"
)

// Sizing workers to the CPU. A request holds its worker for its response
// time W and uses C of CPU time within it (the rest it waits for the
// database, the cache, the network). One busy worker keeps C / W of a core
// busy, so cores × W / C workers keep every core busy: more workers only
// wait for a core (the run queue), adding latency and memory, not
// throughput. The smartphone game backend cut PHP-FPM's pm.max_children from 50 to 20 on 8
// cores under CPU-heavy load and got more done. Both `stacktune plan`
// (cpu-workers) and the audit's app-workers rule size with these
// functions.

// CPUWorkers is the number of workers that keeps cores busy when a request
// uses cpu of CPU time over wall of response time: ceil(cores × wall /
// cpu), at least one per core (a wall below cpu, which measuring can give,
// counts as cpu: a request cannot use more than one core).
func CPUWorkers(cores int, cpu, wall time.Duration) (n int, formula string) {
	if cores < 1 || cpu <= 0 {
		return 0, ""
	}
	w := max(wall, cpu)
	exact := float64(cores) * w.Seconds() / cpu.Seconds()
	n = max(cores, int(math.Ceil(exact-1e-9)))
	return n, fmt.Sprintf("cores × response time / CPU per request = %d × %s / %s = %s → %d", cores, fmtDur(w), fmtDur(cpu), Num(exact), n)
}

// CPURate is the requests per second cores can serve at cpu of CPU time
// per request: cores / cpu.
func CPURate(cores int, cpu time.Duration) float64 {
	if cpu <= 0 {
		return 0
	}
	return float64(cores) / cpu.Seconds()
}

// WorkersExcess is how far above CPUWorkers a pool may be before the
// advice is to decrease it: bursts of slow I/O need some spare workers.
const WorkersExcess = 1.25

func fmtDur(d time.Duration) string {
	s := d.Seconds()
	if s < 1 {
		return Num(math.Round(s*1e5)/100) + " ms"
	}
	return Num(math.Round(s*1000)/1000) + " s"
}

// cpuWorkers is plan's cpu-workers result: with cores and CPU per request
// given, the workers per server the cores can keep busy, decrease or
// increase against --workers, and the rate the cores cap a server at.
func (c *calc) cpuWorkers() Result {
	o := c.o
	n, formula := CPUWorkers(o.Cores, o.CPUPerRequest, o.ResponseTime)
	capRate := CPURate(o.Cores, o.CPUPerRequest)
	r := Result{
		ID: IDCPUWorkers, Title: "Workers the cores can keep busy", Value: float64(n), Unit: "workers per server",
		Formula:     "cores × mean response time / CPU time per request: each busy worker keeps CPU/response of a core busy",
		Calculation: formula,
		Setting: &Setting{Kind: KindAppServer, Name: "workers per server (pm.max_children, unicorn worker_processes, puma workers × threads)",
			Value: fmt.Sprint(n), Current: fmt.Sprint(o.Workers), Host: HostWeb, Where: "the app server's pool (PHP-FPM: pm.max_children in the pool file, then reload)"},
		Source: "the smartphone game backend's write-up (pm.max_children 50 → 20 on 8 cores was faster under CPU-heavy load); Little's law",
	}
	r.Notes = append(r.Notes, fmt.Sprintf("one server's cores serve at most cores / CPU per request = %d / %s = %s req/s", o.Cores, fmtDur(o.CPUPerRequest), Num(math.Round(capRate*10)/10)))
	switch {
	case float64(o.Workers) > WorkersExcess*float64(n):
		r.Warnings = append(r.Warnings, fmt.Sprintf("decrease workers from %d to %d: more than %d only wait for a core, adding latency and memory, not throughput "+
			"(the smartphone game backend: 50 → 20 on 8 cores)", o.Workers, n, n))
	case o.Workers < n:
		r.Notes = append(r.Notes, fmt.Sprintf("%d workers keep at most %s of the %d cores busy: up to %d raise throughput when the load is there",
			o.Workers, Num(math.Round(float64(o.Workers)*o.CPUPerRequest.Seconds()/max(o.ResponseTime, o.CPUPerRequest).Seconds()*10)/10), o.Cores, n))
	default:
		r.Setting.Current = r.Setting.Value
	}
	if c.perServer > busyWarn*capRate {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s req/s per server is %s of what its cores serve (%s req/s): more workers cannot help, add servers (%d at 80%% CPU) or cut the CPU per request",
			Num(math.Round(c.perServer*10)/10), pct(c.perServer/capRate), Num(math.Round(capRate*10)/10), ceil(c.planned/(busyWarn*capRate))))
	}
	return r
}
