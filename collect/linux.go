package collect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Linux is the host layer: what the kernel says about CPUs, memory, the
// sysctls the rules look at, open files, the stack's processes and their
// limits, and TCP sockets by state and port. Everything is read from
// LinuxOptions.ProcRoot (/proc), without running any command.
type Linux struct {
	// KernelRelease is /proc/sys/kernel/osrelease, e.g. "6.1.0-18-amd64".
	KernelRelease string `json:"kernel_release"`
	// Cores is the number of online CPUs (the cpuN lines of /proc/stat).
	Cores int `json:"cores"`
	// LoadAverage is the 1, 5 and 15 minute load average (/proc/loadavg).
	LoadAverage [3]float64 `json:"load_average"`
	// Memory is from /proc/meminfo, in bytes.
	Memory Memory `json:"memory"`
	// Sysctls holds every sysctl of LinuxSysctls that exists, by its
	// dotted name, with runs of blanks collapsed to one space
	// ("net.ipv4.ip_local_port_range": "32768 60999"). Use SysctlInts to
	// read numbers.
	Sysctls map[string]string `json:"sysctls"`
	// SysctlsAbsent lists the sysctls of LinuxSysctls this kernel does not
	// have (net.ipv4.tcp_tw_recycle is gone since Linux 4.12), sorted.
	SysctlsAbsent []string `json:"sysctls_absent"`
	// FileHandles is /proc/sys/fs/file-nr: system-wide open files.
	FileHandles FileHandles `json:"file_handles"`
	// Processes are the running processes whose name matched
	// LinuxOptions.Processes, by PID.
	Processes []Process `json:"processes"`
	// TCP counts the sockets of /proc/net/tcp and /proc/net/tcp6 (the
	// collector's network namespace).
	TCP TCP `json:"tcp"`
	// IntervalSeconds is the time between the collector's two readings of
	// its counters (Start and Collect: the MySQL collector's interval and
	// a little more when both run), 0 when it read them once.
	IntervalSeconds float64 `json:"interval_seconds,omitempty"`
	// CPU is the host's CPU use over the interval, nil without two
	// readings.
	CPU *HostCPU `json:"cpu,omitempty"`
	// Services sums Processes by the pattern they matched, with their
	// CPU over the interval.
	Services []Service `json:"services,omitempty"`
	// NetDeltas are TCP counters' growth over the interval ("Tcp.ActiveOpens",
	// "TcpExt.ListenOverflows": see netCounters); nil without two readings.
	NetDeltas map[string]float64 `json:"net_deltas,omitempty"`
	// NUMANodes is the number of NUMA nodes (/sys/devices/system/node),
	// 0 when the kernel tells none.
	NUMANodes int `json:"numa_nodes,omitempty"`
	// Mounts are the mounted file systems (/proc/self/mountinfo).
	Mounts []Mount `json:"mounts,omitempty"`
	// AppProcesses are the patterns given as the application's processes
	// (LinuxOptions.AppProcesses), beside the app servers known by name.
	AppProcesses []string `json:"app_processes,omitempty"`
	// Missing names what could not be read (also reported as the
	// collector's error); the matching fields are zero.
	Missing []string `json:"missing,omitempty"`
}

// Memory is from /proc/meminfo, in bytes.
type Memory struct {
	TotalBytes     int64 `json:"total_bytes"`
	AvailableBytes int64 `json:"available_bytes"` // MemAvailable (MemFree+Buffers+Cached before Linux 3.14)
	SwapTotalBytes int64 `json:"swap_total_bytes"`
	SwapFreeBytes  int64 `json:"swap_free_bytes"`
}

// FileHandles is /proc/sys/fs/file-nr.
type FileHandles struct {
	Allocated int64 `json:"allocated"` // file handles in use
	Free      int64 `json:"free"`      // allocated but unused (0 since Linux 2.6)
	Max       int64 `json:"max"`       // fs.file-max
}

// Process is one process of the stack.
type Process struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// Name is the process's comm (at most 15 characters, e.g.
	// "php-fpm8.2"); Exe the path of its executable when readable.
	Name string `json:"name"`
	Exe  string `json:"exe,omitempty"`
	// Pattern is the LinuxOptions.Processes entry it matched.
	Pattern string `json:"pattern"`
	// Argv0 is the first word of its command line's first argument,
	// without directory or trailing colon: the name an app server gives
	// itself ("unicorn" for "unicorn worker[0] -c ...", "puma" for "puma:
	// cluster worker 0"); empty when it is the comm. The rest of the
	// command line is never read into the snapshot (it may hold secrets).
	Argv0    string `json:"argv0,omitempty"`
	Threads  int    `json:"threads"`
	RSSBytes int64  `json:"rss_bytes"`
	// Allocator is the malloc library a database process mapped
	// (jemalloc, tcmalloc), "" for the C library's (read for mysqld and
	// mariadbd only).
	Allocator string `json:"allocator,omitempty"`
	// Limits is /proc/PID/limits keyed by rlimit name ("nofile" is Max
	// open files, "nproc" Max processes; see limitKeys); -1 is unlimited.
	// Nil when unreadable.
	Limits map[string]Limit `json:"limits"`
	// OpenFDs is the number of entries of /proc/PID/fd, -1 when unreadable.
	OpenFDs int `json:"open_fds"`
	// CPUSeconds is its CPU time (user + system) over the interval and
	// CPUCores that over the interval (1.0 = one core busy); nil without
	// two readings. StartedInInterval: it started during the interval,
	// so they count since it started.
	CPUSeconds        *float64 `json:"cpu_seconds,omitempty"`
	CPUCores          *float64 `json:"cpu_cores,omitempty"`
	StartedInInterval bool     `json:"started_in_interval,omitempty"`
	// RunQueueSeconds is the time its threads waited for a CPU over the
	// interval (/proc/PID/task/TID/schedstat): high when the cores are
	// oversubscribed. Nil when unreadable or it started during the
	// interval.
	RunQueueSeconds *float64 `json:"run_queue_seconds,omitempty"`
	// Errors says what could not be read for this process (permission,
	// or the process exited while being read).
	Errors []string `json:"errors,omitempty"`
}

// Limit is one resource limit; -1 means unlimited.
type Limit struct {
	Soft int64  `json:"soft"`
	Hard int64  `json:"hard"`
	Unit string `json:"unit,omitempty"`
}

// TCP counts TCP sockets (IPv4 and IPv6 together).
type TCP struct {
	Sockets int `json:"sockets"`
	// States counts sockets by state: ESTABLISHED, SYN_SENT, SYN_RECV,
	// FIN_WAIT1, FIN_WAIT2, TIME_WAIT, CLOSE, CLOSE_WAIT, LAST_ACK,
	// LISTEN, CLOSING, NEW_SYN_RECV.
	States map[string]int `json:"states"`
	// Listen lists listening sockets, sorted by port then address.
	Listen []ListenSocket `json:"listen"`
	// Established and TimeWait count those states' sockets by port.
	Established PortCounts `json:"established"`
	TimeWait    PortCounts `json:"time_wait"`
}

// ListenSocket is one listening socket.
type ListenSocket struct {
	Address string `json:"address"` // "0.0.0.0", "::", "127.0.0.1"
	Port    int    `json:"port"`
	// AcceptQueue is the connections waiting for accept() when read.
	AcceptQueue int `json:"accept_queue"`
}

// PortCounts counts the sockets of one state by the port that names the
// service. A socket is inbound when its local port is a listening port
// (or, with no listener left, when only its remote port is in
// net.ipv4.ip_local_port_range): it is counted under its local port
// (":80" for nginx's clients). Otherwise it is outbound and counted under
// its remote port (":3306" for the PHP → MySQL connections). The other
// side's port is ephemeral and never a key. Each map keeps the
// maxPortKeys busiest ports; the rest are summed in OtherPorts.
type PortCounts struct {
	Count        int         `json:"count"`
	Inbound      int         `json:"inbound"`
	Outbound     int         `json:"outbound"`
	ByLocalPort  map[int]int `json:"by_local_port"`
	ByRemotePort map[int]int `json:"by_remote_port"`
	OtherPorts   int         `json:"other_ports,omitempty"`
}

// LinuxOptions configures NewLinux. The zero value reads /proc and looks
// for DefaultProcesses.
type LinuxOptions struct {
	// ProcRoot is where procfs is mounted; default /proc. Sysctls are read
	// from ProcRoot/sys, sockets from ProcRoot/net/tcp{,6}.
	ProcRoot string
	// SysRoot is where sysfs is mounted; default /sys (NUMA nodes).
	SysRoot string
	// Processes are path.Match patterns matched against each process's
	// comm, executable name and argv0; default DefaultProcesses.
	Processes []string
	// AppProcesses are more patterns naming the application's own
	// processes (a Go binary, node): looked for too, and recorded in
	// Linux.AppProcesses so the audit counts them as app workers.
	AppProcesses []string
	// Interval is the least time between the two readings of the
	// counters (Start, then Collect); Collect waits for what is left of
	// it. 0: Collect does not wait.
	Interval time.Duration

	// now, when set (by tests), is the clock of the readings; Collect
	// then never waits.
	now func() time.Time
}

// DefaultProcesses are the processes of a web stack looked for by default
// (php-fpm's comm carries its version: php-fpm8.2), with the app servers
// that name themselves (unicorn, puma, gunicorn, uWSGI).
var DefaultProcesses = []string{"mysqld", "mariadbd", "nginx", "php-fpm*", "memcached", "redis-server",
	"unicorn", "puma", "gunicorn", "uwsgi"}

// AppServers are the patterns of DefaultProcesses that are application
// servers: their processes are the app's workers.
var AppServers = []string{"php-fpm*", "unicorn", "puma", "gunicorn", "uwsgi"}

// LinuxSysctls are the sysctls read: the kernel settings the field
// write-ups tune (connections, TIME_WAIT, queues, memory).
// net.ipv4.tcp_tw_recycle is read to record its absence (removed in 4.12):
// a rule must never suggest it. tcp_timestamps decides whether
// tcp_tw_reuse can work.
var LinuxSysctls = []string{
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_max_tw_buckets",
	"net.ipv4.tcp_tw_reuse",
	"net.ipv4.tcp_tw_recycle",
	"net.ipv4.tcp_timestamps",
	"net.ipv4.tcp_fin_timeout",
	"net.core.somaxconn",
	"net.core.netdev_max_backlog",
	"net.ipv4.tcp_max_syn_backlog",
	"fs.file-max",
	"fs.nr_open",
	"vm.swappiness",
	"vm.overcommit_memory",
	"net.ipv4.tcp_fastopen",
	"net.core.rmem_max",
	"net.core.wmem_max",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"vm.dirty_ratio",
	"vm.dirty_background_ratio",
}

// maxPortKeys bounds each PortCounts map.
const maxPortKeys = 200

type linuxCollector struct {
	opt   LinuxOptions
	first *linuxReading // Start's reading
}

// NewLinux returns the "linux" collector.
func NewLinux(opt LinuxOptions) Collector {
	if opt.ProcRoot == "" {
		opt.ProcRoot = "/proc"
	}
	if opt.SysRoot == "" {
		opt.SysRoot = "/sys"
	}
	if len(opt.Processes) == 0 {
		opt.Processes = DefaultProcesses
	}
	for _, p := range opt.AppProcesses {
		if !slices.Contains(opt.Processes, p) {
			opt.Processes = append(slices.Clone(opt.Processes), p)
		}
	}
	return &linuxCollector{opt: opt}
}

var _ Starter = (*linuxCollector)(nil)

func (c *linuxCollector) Name() string { return "linux" }

// Linux runs unless --no-linux.
func init() {
	register(Registration{
		Name:  "linux",
		Layer: "linux",
		Order: 20,
		Flags: []Flag{
			{Name: "proc-root", Kind: FlagString, Default: "/proc", Usage: "where /proc is (for reading another host's copy)"},
			{Name: "no-linux", Kind: FlagBool, Default: "false", Usage: "do not read this host's Linux settings"},
			{Name: "app-process", Kind: FlagString, Usage: "the application's processes, when no known app server runs them: comma-separated names or patterns (myapp,node)"},
		},
		DisabledBy: "no-linux",
		New: func(cfg Config) (Collector, error) {
			var apps []string
			for _, p := range strings.Split(cfg.Value("app-process"), ",") {
				if p = strings.TrimSpace(p); p != "" {
					if _, err := path.Match(p, ""); err != nil {
						return nil, fmt.Errorf("--app-process %q: %w", p, err)
					}
					apps = append(apps, p)
				}
			}
			// The counters are read twice, the MySQL collector's interval
			// apart (its flag), over the same window.
			return NewLinux(LinuxOptions{ProcRoot: cfg.Value("proc-root"), AppProcesses: apps, Interval: cfg.Duration("interval")}), nil
		},
	})
}

// Collect fills s.Linux. A file that cannot be read is named in
// Linux.Missing and in the error, and the rest is still collected;
// unreadable processes only get Process.Errors.
func (c *linuxCollector) Collect(ctx context.Context, s *Snapshot) error {
	root := c.opt.ProcRoot
	if fi, err := os.Stat(root); err != nil {
		return fmt.Errorf("linux: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("linux: %s is not a directory", root)
	}
	l := &Linux{Sysctls: map[string]string{}, SysctlsAbsent: []string{}, Processes: []Process{}, AppProcesses: c.opt.AppProcesses}
	s.Linux = l
	if err := c.waitInterval(ctx); err != nil {
		return err
	}
	var second *linuxReading
	if c.first != nil {
		second, _ = c.read()
	}
	var errs []error
	miss := func(what string, err error) {
		l.Missing = append(l.Missing, what)
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
	}

	if b, err := os.ReadFile(filepath.Join(root, "sys/kernel/osrelease")); err != nil {
		miss("kernel release", err)
	} else {
		l.KernelRelease = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(root, "stat")); err != nil {
		miss("cores", err)
	} else {
		l.Cores = countCPUs(b)
	}
	if b, err := os.ReadFile(filepath.Join(root, "loadavg")); err != nil {
		miss("load average", err)
	} else {
		f := strings.Fields(string(b))
		for i := 0; i < 3 && i < len(f); i++ {
			l.LoadAverage[i], _ = strconv.ParseFloat(f[i], 64)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "meminfo")); err != nil {
		miss("memory", err)
	} else {
		l.Memory = parseMeminfo(b)
	}
	for _, name := range LinuxSysctls {
		v, err := readSysctl(root, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.SysctlsAbsent = append(l.SysctlsAbsent, name)
		case err != nil:
			miss("sysctl "+name, err)
		default:
			l.Sysctls[name] = v
		}
	}
	sort.Strings(l.SysctlsAbsent)
	if v, err := readSysctl(root, "fs.file-nr"); err != nil {
		miss("fs.file-nr", err)
	} else {
		var fh [3]int64
		for i, f := range strings.Fields(v) {
			if i < 3 {
				fh[i], _ = strconv.ParseInt(f, 10, 64)
			}
		}
		l.FileHandles = FileHandles{Allocated: fh[0], Free: fh[1], Max: fh[2]}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	procs, err := findProcesses(root, c.opt.Processes)
	if err != nil {
		miss("processes", err)
	}
	l.Processes = procs
	for i := range l.Processes {
		if p := &l.Processes[i]; p.Pattern == "mysqld" || p.Pattern == "mariadbd" {
			p.Allocator = processAllocator(filepath.Join(root, strconv.Itoa(p.PID)))
		}
	}
	l.NUMANodes = countNUMANodes(c.opt.SysRoot)
	if ms, err := readMounts(root); err == nil {
		l.Mounts = ms
	}
	c.sample(l, second)

	lo, hi := 32768, 60999 // the kernel's default ip_local_port_range
	if r, ok := l.SysctlInts("net.ipv4.ip_local_port_range"); ok && len(r) == 2 {
		lo, hi = int(r[0]), int(r[1])
	}
	var socks []tcpSocket
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		ss, err := readTCPFile(filepath.Join(root, f))
		switch {
		case errors.Is(err, fs.ErrNotExist) && f == "net/tcp6":
			// IPv6 disabled: nothing to count.
		case err != nil:
			miss("sockets ("+f+")", err)
		}
		socks = append(socks, ss...)
	}
	l.TCP = countTCP(socks, lo, hi)

	if len(errs) > 0 {
		return fmt.Errorf("linux: could not read %w", joinErrors(errs))
	}
	return nil
}

// SysctlInts returns a sysctl's value as integers ("32768 60999" → [32768
// 60999]); ok is false when the sysctl is absent or not all numbers.
func (l *Linux) SysctlInts(name string) ([]int64, bool) {
	v, ok := l.Sysctls[name]
	if !ok {
		return nil, false
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return nil, false
	}
	out := make([]int64, len(f))
	for i, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// readSysctl reads root/sys/<name with dots as slashes>.
func readSysctl(root, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "sys", strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(string(b)), " "), nil
}

// countCPUs counts the "cpuN" lines of /proc/stat: the online CPUs.
func countCPUs(b []byte) int {
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) > 3 && bytes.HasPrefix(line, []byte("cpu")) && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// parseMeminfo reads the "Name: N kB" lines it needs.
func parseMeminfo(b []byte) Memory {
	kv := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		kv[name] = n
	}
	m := Memory{TotalBytes: kv["MemTotal"], SwapTotalBytes: kv["SwapTotal"], SwapFreeBytes: kv["SwapFree"]}
	if v, ok := kv["MemAvailable"]; ok {
		m.AvailableBytes = v
	} else {
		m.AvailableBytes = kv["MemFree"] + kv["Buffers"] + kv["Cached"]
	}
	return m
}

// findProcesses walks root's PID directories and keeps those whose comm or
// executable name matches a pattern. Processes that exit while being read
// are dropped; unreadable details are recorded in the Process.
func findProcesses(root string, patterns []string) ([]Process, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return []Process{}, err
	}
	out := []Process{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue // exited, or a kernel we cannot read: not ours to judge
		}
		comm := strings.TrimRight(string(b), "\n")
		exe, _ := os.Readlink(filepath.Join(dir, "exe"))
		exe = strings.TrimSuffix(exe, " (deleted)")
		argv0 := readArgv0(dir)
		pat, ok := matchProcess(patterns, comm, path.Base(exe), argv0)
		if !ok {
			continue
		}
		p := Process{PID: pid, Name: comm, Exe: exe, Pattern: pat, OpenFDs: -1}
		if argv0 != comm {
			p.Argv0 = argv0
		}
		note := func(what string, err error) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is the process's: say which file only
			}
			p.Errors = append(p.Errors, fmt.Sprintf("%s: %v", what, err))
		}
		if b, err := os.ReadFile(filepath.Join(dir, "status")); err != nil {
			note("status", err)
		} else {
			p.PPID, p.Threads, p.RSSBytes = parseStatus(b)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "limits")); err != nil {
			note("limits", err)
		} else {
			p.Limits = parseLimits(b)
		}
		if fds, err := os.ReadDir(filepath.Join(dir, "fd")); err != nil {
			note("fd", err)
		} else {
			p.OpenFDs = len(fds)
		}
		if _, err := os.Stat(dir); err != nil {
			continue // exited while we read it: what we read is stale
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// readArgv0 returns the name a process gives itself: the first word of
// its first argument, without directory or trailing ':' ("unicorn" for
// "unicorn worker[0] -c /app/unicorn.rb", "puma" for "puma: cluster
// worker 0: 1234 [app]"). Only the first 4 KiB are read.
func readArgv0(dir string) string {
	f, err := os.Open(filepath.Join(dir, "cmdline"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	fs := strings.Fields(string(b))
	if len(fs) == 0 {
		return ""
	}
	return strings.TrimRight(path.Base(fs[0]), ":")
}

// matchProcess returns the first pattern matching comm, exe or argv0. A
// comm is cut at 15 characters by the kernel, so a longer literal pattern
// matches a 15-character comm that is its prefix.
func matchProcess(patterns []string, comm, exe, argv0 string) (string, bool) {
	for _, p := range patterns {
		for _, name := range []string{comm, exe, argv0} {
			if name == "" || name == "." || name == "/" {
				continue
			}
			if ok, _ := path.Match(p, name); ok {
				return p, true
			}
		}
		if len(comm) == 15 && len(p) > 15 && !strings.ContainsAny(p, `*?[\`) && strings.HasPrefix(p, comm) {
			return p, true
		}
	}
	return "", false
}

// parseStatus reads PPid, Threads and VmRSS from /proc/PID/status.
func parseStatus(b []byte) (ppid, threads int, rss int64) {
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		switch name {
		case "PPid":
			ppid, _ = strconv.Atoi(f[0])
		case "Threads":
			threads, _ = strconv.Atoi(f[0])
		case "VmRSS":
			rss, _ = strconv.ParseInt(f[0], 10, 64)
			if len(f) > 1 && f[1] == "kB" {
				rss *= 1024
			}
		}
	}
	return
}

// limitKeys maps the rows of /proc/PID/limits to rlimit names (as in
// prlimit(1) and systemd's LimitNOFILE=, LimitNPROC=, ...).
var limitKeys = map[string]string{
	"Max cpu time":          "cpu",
	"Max file size":         "fsize",
	"Max data size":         "data",
	"Max stack size":        "stack",
	"Max core file size":    "core",
	"Max resident set":      "rss",
	"Max processes":         "nproc",
	"Max open files":        "nofile",
	"Max locked memory":     "memlock",
	"Max address space":     "as",
	"Max file locks":        "locks",
	"Max pending signals":   "sigpending",
	"Max msgqueue size":     "msgqueue",
	"Max nice priority":     "nice",
	"Max realtime priority": "rtprio",
	"Max realtime timeout":  "rttime",
}

// parseLimits parses /proc/PID/limits:
//
//	Limit                     Soft Limit           Hard Limit           Units
//	Max open files            1024                 524288               files
//
// A row's name is its words up to the first value (a number or
// "unlimited"); rows that do not parse are skipped. Unknown rows are kept
// under their name in lower case with '_' for blanks.
func parseLimits(b []byte) map[string]Limit {
	out := map[string]Limit{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		i := 0
		for i < len(f) && !isLimitValue(f[i]) {
			i++
		}
		if i == 0 || i+1 >= len(f) || !isLimitValue(f[i+1]) {
			continue
		}
		name := strings.Join(f[:i], " ")
		key, ok := limitKeys[name]
		if !ok {
			key = strings.ToLower(strings.Join(f[:i], "_"))
		}
		l := Limit{Soft: limitValue(f[i]), Hard: limitValue(f[i+1])}
		if i+2 < len(f) {
			l.Unit = f[i+2]
		}
		out[key] = l
	}
	return out
}

func isLimitValue(s string) bool {
	if s == "unlimited" {
		return true
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func limitValue(s string) int64 {
	if s == "unlimited" {
		return -1
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

// tcpStates are the kernel's TCP state numbers (include/net/tcp_states.h).
var tcpStates = [...]string{
	1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2",
	6: "TIME_WAIT", 7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN",
	11: "CLOSING", 12: "NEW_SYN_RECV",
}

// tcpSocket is one line of /proc/net/tcp{,6}.
type tcpSocket struct {
	local, remote netip.AddrPort
	state         string
	rxQueue       uint64
}

// readTCPFile parses a /proc/net/tcp or tcp6 file line by line.
func readTCPFile(name string) ([]tcpSocket, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTCP(f)
}

// parseTCP parses /proc/net/tcp{,6}; lines that do not parse (the header)
// are skipped.
func parseTCP(r io.Reader) ([]tcpSocket, error) {
	var out []tcpSocket
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if s, ok := parseTCPLine(sc.Text()); ok {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

// parseTCPLine parses one socket line:
//
//	0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000 ...
//
// Addresses are 32-bit words in host byte order, printed in hex; ports are
// hex; the state is the hex state number.
func parseTCPLine(line string) (tcpSocket, bool) {
	f := strings.Fields(line)
	if len(f) < 5 || !strings.HasSuffix(f[0], ":") {
		return tcpSocket{}, false
	}
	local, ok1 := parseHexAddrPort(f[1])
	remote, ok2 := parseHexAddrPort(f[2])
	st, err := strconv.ParseUint(f[3], 16, 8)
	if !ok1 || !ok2 || err != nil || st == 0 || int(st) >= len(tcpStates) {
		return tcpSocket{}, false
	}
	_, rx, ok := strings.Cut(f[4], ":")
	if !ok {
		return tcpSocket{}, false
	}
	rxq, err := strconv.ParseUint(rx, 16, 64)
	if err != nil {
		return tcpSocket{}, false
	}
	return tcpSocket{local: local, remote: remote, state: tcpStates[st], rxQueue: rxq}, true
}

// parseHexAddrPort parses "0100007F:0CEA" (IPv4) or 32 hex digits and a
// port (IPv6).
func parseHexAddrPort(s string) (netip.AddrPort, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok || (len(a) != 8 && len(a) != 32) || len(p) == 0 || len(p) > 4 {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(a)
	if err != nil {
		return netip.AddrPort{}, false
	}
	// Each 32-bit word was printed as a host-order number: turn it back
	// into the bytes in memory, which are in network order.
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}

// countTCP counts sockets by state and, for ESTABLISHED and TIME_WAIT, by
// service port (see PortCounts); lo-hi is ip_local_port_range.
func countTCP(socks []tcpSocket, lo, hi int) TCP {
	t := TCP{States: map[string]int{}, Listen: []ListenSocket{},
		Established: newPortCounts(), TimeWait: newPortCounts()}
	listening := map[uint16]bool{}
	for _, s := range socks {
		if s.state == "LISTEN" {
			listening[s.local.Port()] = true
			t.Listen = append(t.Listen, ListenSocket{Address: s.local.Addr().String(), Port: int(s.local.Port()), AcceptQueue: int(min(s.rxQueue, math.MaxInt32))})
		}
	}
	ephemeral := func(p uint16) bool { return int(p) >= lo && int(p) <= hi }
	for _, s := range socks {
		t.Sockets++
		t.States[s.state]++
		var pc *PortCounts
		switch s.state {
		case "ESTABLISHED":
			pc = &t.Established
		case "TIME_WAIT":
			pc = &t.TimeWait
		default:
			continue
		}
		pc.Count++
		lp, rp := s.local.Port(), s.remote.Port()
		if listening[lp] || (!listening[rp] && ephemeral(rp) && !ephemeral(lp)) {
			pc.Inbound++
			pc.ByLocalPort[int(lp)]++
		} else {
			pc.Outbound++
			pc.ByRemotePort[int(rp)]++
		}
	}
	sort.Slice(t.Listen, func(i, j int) bool {
		if t.Listen[i].Port != t.Listen[j].Port {
			return t.Listen[i].Port < t.Listen[j].Port
		}
		return t.Listen[i].Address < t.Listen[j].Address
	})
	for _, pc := range []*PortCounts{&t.Established, &t.TimeWait} {
		pc.OtherPorts += capPorts(pc.ByLocalPort) + capPorts(pc.ByRemotePort)
	}
	return t
}

func newPortCounts() PortCounts {
	return PortCounts{ByLocalPort: map[int]int{}, ByRemotePort: map[int]int{}}
}

// capPorts keeps the maxPortKeys busiest ports of m (ties to the lower
// port) and returns the sockets of those it removed.
func capPorts(m map[int]int) int {
	if len(m) <= maxPortKeys {
		return 0
	}
	ports := make([]int, 0, len(m))
	for p := range m {
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool {
		if m[ports[i]] != m[ports[j]] {
			return m[ports[i]] > m[ports[j]]
		}
		return ports[i] < ports[j]
	})
	removed := 0
	for _, p := range ports[maxPortKeys:] {
		removed += m[p]
		delete(m, p)
	}
	return removed
}

// joinedError is several errors on one line, separated by "; ".
type joinedError []error

func (e joinedError) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (e joinedError) Unwrap() []error { return e }

func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return joinedError(errs)
}
