package collect

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HostLoad is a reading of the host's CPU counters and of every
// process's CPU time, to say over an interval how busy the host was and
// which processes kept it busy: what a measurement's noise comes from
// (a neighbour spinning, steal from the hypervisor) before any collector
// runs.
type HostLoad struct {
	at    time.Time
	root  string
	cpu   []uint64
	procs map[int]procCPU
}

// ReadHostLoad reads /proc/stat and /proc/PID/stat of every process
// (procRoot "" is /proc).
func ReadHostLoad(procRoot string) (*HostLoad, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return nil, fmt.Errorf("host load: %w", err)
	}
	h := &HostLoad{at: time.Now(), root: procRoot, cpu: cpuLine(b), procs: map[int]procCPU{}}
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("host load: %w", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		sb, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p, ok := parseProcStat(sb); ok {
			h.procs[pid] = p
		}
	}
	return h, nil
}

// HostUse is the host's CPU over an interval and its busiest processes.
type HostUse struct {
	Seconds float64 `json:"seconds"`
	HostCPU
	// Busiest are the processes that used the most CPU over the interval,
	// most first (at most five, each at least a tenth of a core).
	Busiest []ProcessUse `json:"busiest,omitempty"`
	all     []ProcessUse // every process with at least a hundredth of a core
}

// ProcessUse is one process's CPU over an interval.
type ProcessUse struct {
	PID   int     `json:"pid"`
	Comm  string  `json:"comm"`
	Cores float64 `json:"cores"`
}

// Since is the use from an earlier reading to this one.
func (h *HostLoad) Since(earlier *HostLoad) HostUse {
	u := HostUse{Seconds: h.at.Sub(earlier.at).Seconds()}
	if c := hostCPU(earlier.cpu, h.cpu, runtime.NumCPU()); c != nil {
		u.HostCPU = *c
	}
	if u.Seconds <= 0 {
		return u
	}
	for pid, p := range h.procs {
		q, ok := earlier.procs[pid]
		if !ok || q.start != p.start || p.ticks < q.ticks {
			continue // a process started during the interval is left out
		}
		if cores := float64(p.ticks-q.ticks) / clockTicks / u.Seconds; cores >= 0.01 {
			b, _ := os.ReadFile(filepath.Join(h.root, strconv.Itoa(pid), "comm"))
			u.all = append(u.all, ProcessUse{PID: pid, Comm: strings.TrimSpace(string(b)), Cores: cores})
		}
	}
	slices.SortFunc(u.all, func(a, b ProcessUse) int {
		if a.Cores != b.Cores {
			if a.Cores > b.Cores {
				return -1
			}
			return 1
		}
		return a.PID - b.PID
	})
	for _, p := range u.all {
		if p.Cores >= 0.1 && len(u.Busiest) < 5 {
			p.Cores = float64(int(p.Cores*100+0.5)) / 100
			u.Busiest = append(u.Busiest, p)
		}
	}
	return u
}

// Cores is the CPU, in cores, of the processes that lived through the
// interval and that keep says are of interest (a stack's servers, say).
// BusyCores less the stack's is what the rest of the host used,
// processes that started during the interval (a compiler, a cron job)
// included.
func (u HostUse) Cores(keep func(ProcessUse) bool) float64 {
	var c float64
	for _, p := range u.all {
		if keep(p) {
			c += p.Cores
		}
	}
	return c
}
