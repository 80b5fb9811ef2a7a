package collect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// What the Linux collector measures over the collection interval: it reads
// the counters once when the run starts (Start, before any collector) and
// again in Collect, so its window is the MySQL collector's two status
// readings and what runs around them. Everything comes from /proc, read
// directly as the rest of linux.go does (no command is run):
//
//   - /proc/stat's "cpu" line: the host's busy share.
//   - /proc/PID/stat's utime + stime (fields 14 and 15, in clock ticks)
//     and starttime (field 22, to tell a PID reused during the interval
//     from the same process): each process's CPU, summed per service.
//   - /proc/net/snmp and /proc/net/netstat: TCP counters (connections
//     opened, listen queue overflows, TIME_WAIT overflows, receive-queue
//     pruning), as deltas.

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times and of
// /proc/stat: 100 on every Linux architecture that matters here (the
// kernel exports times in USER_HZ, not HZ; procfs assumes the same).
const clockTicks = 100

// HostCPU is the host's CPU use over the interval, from /proc/stat.
type HostCPU struct {
	// Busy is the share of all CPUs' time not idle and not waiting for
	// I/O (0..1); BusyCores is Busy × cores (2.4 = 2.4 cores busy).
	Busy      float64 `json:"busy"`
	BusyCores float64 `json:"busy_cores"`
	// IOWait and Steal are shares of all CPUs' time.
	IOWait float64 `json:"iowait"`
	Steal  float64 `json:"steal"`
}

// Service sums the processes that matched one pattern (a service: mysqld,
// nginx, php-fpm8.2, an app server) over the interval.
type Service struct {
	// Name is the pattern the processes matched.
	Name      string `json:"name"`
	Processes int    `json:"processes"`
	// Workers are the processes whose parent matched the same pattern
	// (php-fpm's and nginx's children, unicorn's and puma's workers);
	// the others are masters or single processes.
	Workers  int   `json:"workers"`
	Threads  int   `json:"threads"`
	RSSBytes int64 `json:"rss_bytes"`
	// CPUSeconds is the CPU time its processes used over the interval
	// (those that started during it: since they started); CPUCores is
	// CPUSeconds / the interval (3.0 = three cores busy, top's 300%).
	// Nil without two readings.
	CPUSeconds *float64 `json:"cpu_seconds,omitempty"`
	CPUCores   *float64 `json:"cpu_cores,omitempty"`
	// BusiestCores is the CPU of its busiest process, in cores: a
	// single-threaded server at 1.0 is saturated whatever the host.
	BusiestCores *float64 `json:"busiest_cores,omitempty"`
	// RunQueueSeconds is the time its threads spent runnable but waiting
	// for a CPU over the interval (schedstat), summed over the processes
	// that ran through it; nil when the kernel does not tell.
	RunQueueSeconds *float64 `json:"run_queue_seconds,omitempty"`
}

// netCounters are the TCP counters kept as deltas: "Tcp.ActiveOpens"
// from /proc/net/snmp, "TcpExt.ListenOverflows" from /proc/net/netstat.
var netCounters = []string{
	"Tcp.ActiveOpens", "Tcp.PassiveOpens", "Tcp.AttemptFails", "Tcp.EstabResets", "Tcp.RetransSegs", "Tcp.OutSegs",
	"TcpExt.ListenOverflows", "TcpExt.ListenDrops", "TcpExt.TCPTimeWaitOverflow", "TcpExt.TW",
	"TcpExt.PruneCalled", "TcpExt.RcvPruned", "TcpExt.TCPRcvQDrop", "TcpExt.TCPBacklogDrop",
	"TcpExt.TCPFastOpenPassive", "TcpExt.TCPFastOpenListenOverflow", "TcpExt.TCPFastOpenPassiveFail",
}

// procCPU is one process's counters at a reading: CPU ticks, its start,
// and the nanoseconds its threads waited for a CPU (the run queue, from
// /proc/PID/task/TID/schedstat; hasWait false when unreadable).
type procCPU struct {
	ticks, start uint64
	// cpuNS and wait are the nanoseconds its live threads ran and waited
	// for a CPU (schedstat: finer than ticks, but without exited threads).
	cpuNS, wait uint64
	hasWait     bool
}

// maxTasks bounds the threads whose schedstat is read per process.
const maxTasks = 1024

// linuxReading is what Start reads.
type linuxReading struct {
	at    time.Time
	cpu   []uint64 // the "cpu" line's fields
	procs map[int]procCPU
	net   map[string]float64
	err   error
}

// Start takes the first reading of the counters. Collect waits until
// LinuxOptions.Interval has passed since then (the MySQL collector, which
// runs before it, has usually waited already) and takes the second.
func (c *linuxCollector) Start(ctx context.Context) error {
	r, err := c.read()
	c.first = r
	return err
}

// read takes one reading of the counters.
func (c *linuxCollector) read() (*linuxReading, error) {
	root := c.opt.ProcRoot
	r := &linuxReading{at: c.now(), procs: map[int]procCPU{}}
	b, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		r.err = err
		return r, fmt.Errorf("linux: %w", err)
	}
	r.cpu = cpuLine(b)
	ents, err := os.ReadDir(root)
	if err != nil {
		r.err = err
		return r, fmt.Errorf("linux: %w", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readProcCPU(filepath.Join(root, e.Name())); ok {
			r.procs[pid] = p
		}
	}
	r.net = readNetCounters(root)
	return r, nil
}

func (c *linuxCollector) now() time.Time {
	if c.opt.now != nil {
		return c.opt.now()
	}
	return time.Now()
}

// waitInterval waits until the interval has passed since the first
// reading (or ctx ends).
func (c *linuxCollector) waitInterval(ctx context.Context) error {
	if c.first == nil || c.opt.now != nil {
		return nil
	}
	if err := waitSince(ctx, c.first.at, c.opt.Interval); err != nil {
		return fmt.Errorf("linux: %w", err)
	}
	return nil
}

// cpuLine returns the numbers of /proc/stat's aggregate "cpu" line.
func cpuLine(b []byte) []uint64 {
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		out := make([]uint64, 0, len(f)-1)
		for _, s := range f[1:] {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil
			}
			out = append(out, n)
		}
		return out
	}
	return nil
}

// hostCPU is the CPU use between two "cpu" lines (user nice system idle
// iowait irq softirq steal guest guest_nice; guest time is already in
// user, so it is not added again).
func hostCPU(a, b []uint64, cores int) *HostCPU {
	if len(a) < 4 || len(a) != len(b) {
		return nil
	}
	field := func(v []uint64, i int) float64 {
		if i < len(v) {
			return float64(v[i])
		}
		return 0
	}
	var total float64
	for i := 0; i < len(a) && i < 8; i++ {
		if b[i] < a[i] {
			return nil
		}
		total += field(b, i) - field(a, i)
	}
	if total <= 0 {
		return nil
	}
	idle := field(b, 3) - field(a, 3)
	iowait := field(b, 4) - field(a, 4)
	h := &HostCPU{Busy: (total - idle - iowait) / total, IOWait: iowait / total, Steal: (field(b, 7) - field(a, 7)) / total}
	h.BusyCores = h.Busy * float64(max(cores, 1))
	return h
}

// readProcCPU reads utime + stime and starttime from dir/stat, and the
// run-queue wait of its threads.
func readProcCPU(dir string) (procCPU, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return procCPU{}, false
	}
	p, ok := parseProcStat(b)
	if !ok {
		return p, false
	}
	p.cpuNS, p.wait, p.hasWait = schedstat(dir)
	return p, true
}

// schedstat sums each thread's schedstat: the nanoseconds it ran and
// those it spent runnable, waiting for a CPU.
func schedstat(dir string) (cpu, wait uint64, ok bool) {
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil || len(tasks) == 0 {
		b, err := os.ReadFile(filepath.Join(dir, "schedstat"))
		if err != nil {
			return 0, 0, false
		}
		return parseSchedstat(b)
	}
	for i, t := range tasks {
		if i >= maxTasks {
			break
		}
		b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		if c, w, ok := parseSchedstat(b); ok {
			cpu, wait = cpu+c, wait+w
		}
	}
	return cpu, wait, true
}

// parseSchedstat reads "cpu_ns wait_ns timeslices".
func parseSchedstat(b []byte) (cpu, wait uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	c, err1 := strconv.ParseUint(f[0], 10, 64)
	w, err2 := strconv.ParseUint(f[1], 10, 64)
	return c, w, err1 == nil && err2 == nil
}

// parseProcStat parses /proc/PID/stat: "pid (comm) state ppid ...". The
// comm may hold spaces and parentheses, so fields are counted after the
// last ')'.
func parseProcStat(b []byte) (procCPU, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procCPU{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// After the comm: state(0) ppid(1) ... utime(11) stime(12) ...
	// starttime(19).
	if len(f) < 20 {
		return procCPU{}, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	st, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procCPU{}, false
	}
	return procCPU{ticks: u + s, start: st}, true
}

// readNetCounters reads the counters of netCounters from /proc/net/snmp
// and /proc/net/netstat (pairs of lines: names, then values).
func readNetCounters(root string) map[string]float64 {
	out := map[string]float64{}
	want := map[string]bool{}
	for _, n := range netCounters {
		want[n] = true
	}
	for _, f := range []string{"net/snmp", "net/netstat"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			if len(names) < 2 || len(names) != len(values) || names[0] != values[0] {
				continue
			}
			prefix := strings.TrimSuffix(names[0], ":")
			for j := 1; j < len(names); j++ {
				k := prefix + "." + names[j]
				if !want[k] {
					continue
				}
				if v, err := strconv.ParseFloat(values[j], 64); err == nil {
					out[k] = v
				}
			}
		}
	}
	return out
}

// sample fills what the interval gives: the host's CPU, each process's
// CPU, the services and the network counters' deltas.
func (c *linuxCollector) sample(l *Linux, second *linuxReading) {
	first := c.first
	if first == nil || first.err != nil || second == nil || second.err != nil {
		if first != nil && first.err != nil {
			l.Missing = append(l.Missing, "first reading of the CPU counters")
		}
		l.Services = services(l.Processes, nil)
		return
	}
	secs := second.at.Sub(first.at).Seconds()
	if secs <= 0 {
		l.Services = services(l.Processes, nil)
		return
	}
	l.IntervalSeconds = secs
	l.CPU = hostCPU(first.cpu, second.cpu, l.Cores)
	btime := bootTime(c.opt.ProcRoot)
	for i := range l.Processes {
		p := &l.Processes[i]
		b, ok := second.procs[p.PID]
		if !ok {
			continue
		}
		var used, over float64
		if a, ok := first.procs[p.PID]; ok && a.start == b.start && b.ticks >= a.ticks {
			used, over = float64(b.ticks-a.ticks)/clockTicks, secs
			if a.hasWait && b.hasWait && b.wait >= a.wait {
				w := float64(b.wait-a.wait) / 1e9
				p.RunQueueSeconds = &w
			}
		} else {
			// Started during the interval (or a reused PID): since it
			// started, when the boot time says when that was.
			p.StartedInInterval = true
			used = float64(b.ticks) / clockTicks
			over = secs
			if btime > 0 {
				started := time.Unix(btime, 0).Add(time.Duration(b.start) * time.Second / clockTicks)
				if s := second.at.Sub(started).Seconds(); s > 0 && s < secs {
					over = s
				}
			}
		}
		cs, cores := used, used/over
		p.CPUSeconds, p.CPUCores = &cs, &cores
	}
	l.Services = services(l.Processes, &secs)
	l.NetDeltas = map[string]float64{}
	for k, v2 := range second.net {
		if v1, ok := first.net[k]; ok && v2 >= v1 {
			l.NetDeltas[k] = v2 - v1
		}
	}
}

// bootTime is /proc/stat's btime (seconds since the epoch), 0 when
// unknown.
func bootTime(root string) int64 {
	b, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// services sums processes by the pattern they matched; secs is the
// interval (nil: no CPU figures).
func services(ps []Process, secs *float64) []Service {
	by := map[string]*Service{}
	pids := map[string]map[int]bool{}
	for _, p := range ps {
		if pids[p.Pattern] == nil {
			pids[p.Pattern] = map[int]bool{}
		}
		pids[p.Pattern][p.PID] = true
	}
	var names []string
	for _, p := range ps {
		s := by[p.Pattern]
		if s == nil {
			s = &Service{Name: p.Pattern}
			by[p.Pattern] = s
			names = append(names, p.Pattern)
		}
		s.Processes++
		if pids[p.Pattern][p.PPID] {
			s.Workers++
		}
		s.Threads += p.Threads
		s.RSSBytes += p.RSSBytes
		if secs != nil && p.CPUSeconds != nil {
			if s.CPUSeconds == nil {
				s.CPUSeconds, s.CPUCores, s.BusiestCores = new(float64), new(float64), new(float64)
			}
			*s.CPUSeconds += *p.CPUSeconds
			*s.BusiestCores = max(*s.BusiestCores, *p.CPUCores)
		}
		if secs != nil && p.RunQueueSeconds != nil {
			if s.RunQueueSeconds == nil {
				s.RunQueueSeconds = new(float64)
			}
			*s.RunQueueSeconds += *p.RunQueueSeconds
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	out := make([]Service, 0, len(names))
	for _, n := range names {
		s := by[n]
		if s.CPUSeconds != nil {
			*s.CPUCores = *s.CPUSeconds / *secs
		}
		out = append(out, *s)
	}
	return out
}
