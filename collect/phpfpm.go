package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/internal/fastcgi"
	"github.com/stacktune/stacktune/phpfpmconf"
)

// PHPFPM is the PHP-FPM layer: the pools of a php-fpm.conf (as package
// phpfpmconf reads them, with PHP-FPM's defaults) and, for a pool with a
// status page (pm.status_path), its status read over FastCGI on the
// pool's own socket at the run's start and end: requests accepted over
// the interval, how often every child was busy (max children reached),
// the listen queue, and from the full status each process's last request
// (duration, CPU, memory).
type PHPFPM struct {
	// Config is the main file, Files every file read.
	Config string       `json:"config"`
	Files  []string     `json:"files"`
	Pools  []PHPFPMPool `json:"pools"`
}

// PHPFPMPool is one PHP-FPM pool.
type PHPFPMPool struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Settings are the pool's settings as the files set them (lower-case
	// keys), with $pool replaced; Defaults are PHP-FPM's values of the
	// settings stacktune reads that the files leave unset.
	Settings map[string]string `json:"settings"`
	Defaults map[string]string `json:"defaults,omitempty"`
	// Listen is where the pool accepts connections ("unix" and a path,
	// or "tcp" and host:port).
	ListenNetwork string `json:"listen_network,omitempty"`
	ListenAddr    string `json:"listen_addr,omitempty"`
	// Status is the status page at the second reading; StatusError says
	// why there is none (no pm.status_path, or the pool did not answer).
	Status      *PHPFPMStatus `json:"status,omitempty"`
	StatusError string        `json:"status_error,omitempty"`
	// Interval is the status counters' growth over the interval (accepted
	// conn, max children reached, slow requests); nil without two
	// readings.
	Interval *CounterInterval `json:"interval,omitempty"`
	// CPU is what the pool's workers (the PIDs its status lists) used of
	// the CPU over the same interval, read from /proc with each status
	// reading; nil when they are not on this host or there is no
	// interval.
	CPU *PHPFPMCPU `json:"cpu,omitempty"`
}

// PHPFPMCPU is a pool's workers' CPU over the interval, from their
// threads' schedstat (nanoseconds, finer than the 10 ms of
// /proc/PID/stat): the time they ran and the time they were runnable but
// waited for a CPU. Workers are those listed at both readings (a worker
// replaced in between, pm.max_requests, is left out: Of counts all).
type PHPFPMCPU struct {
	Seconds         float64 `json:"seconds"`
	RunQueueSeconds float64 `json:"run_queue_seconds"`
	Workers         int     `json:"workers"`
	Of              int     `json:"of"`
}

// Value is a setting of the pool as PHP-FPM applies it (the files', else
// its default).
func (p *PHPFPMPool) Value(key string) (string, bool) {
	if v, ok := p.Settings[key]; ok {
		return v, true
	}
	v, ok := p.Defaults[key]
	return v, ok
}

// PHPFPMStatus is a pool's status page (?json&full).
type PHPFPMStatus struct {
	ProcessManager     string `json:"process_manager"`
	StartSince         int64  `json:"start_since"`
	AcceptedConn       int64  `json:"accepted_conn"`
	ListenQueue        int64  `json:"listen_queue"`
	MaxListenQueue     int64  `json:"max_listen_queue"`
	ListenQueueLen     int64  `json:"listen_queue_len"`
	IdleProcesses      int64  `json:"idle_processes"`
	ActiveProcesses    int64  `json:"active_processes"`
	TotalProcesses     int64  `json:"total_processes"`
	MaxActiveProcesses int64  `json:"max_active_processes"`
	MaxChildrenReached int64  `json:"max_children_reached"`
	SlowRequests       int64  `json:"slow_requests"`
	// Processes are the workers' last requests: those finished (Idle)
	// give the request duration and its CPU.
	Processes []PHPFPMProcess `json:"processes,omitempty"`
}

// PHPFPMProcess is one worker in a pool's full status.
type PHPFPMProcess struct {
	PID      int64  `json:"pid"`
	State    string `json:"state"`
	Requests int64  `json:"requests"`
	// RequestDurationUS is the last request's duration in microseconds,
	// LastRequestCPU its CPU in percent of one core over that duration,
	// LastRequestMemory its peak memory in bytes.
	RequestDurationUS int64   `json:"request_duration_us"`
	LastRequestCPU    float64 `json:"last_request_cpu"`
	LastRequestMemory int64   `json:"last_request_memory"`
}

// phpfpmGauges are the status fields that are not counters.
var phpfpmGauges = setOf(`start_since listen_queue max_listen_queue listen_queue_len idle_processes active_processes total_processes max_active_processes`)

// counters is the status as a reading of counters by snake_case name.
func (s *PHPFPMStatus) counters() map[string]string {
	return map[string]string{
		"start_since": fmt.Sprint(s.StartSince), "accepted_conn": fmt.Sprint(s.AcceptedConn),
		"max_children_reached": fmt.Sprint(s.MaxChildrenReached), "slow_requests": fmt.Sprint(s.SlowRequests),
	}
}

// statusJSON is the status page's JSON (its keys have spaces).
type statusJSON struct {
	Pool               string `json:"pool"`
	ProcessManager     string `json:"process manager"`
	StartSince         int64  `json:"start since"`
	AcceptedConn       int64  `json:"accepted conn"`
	ListenQueue        int64  `json:"listen queue"`
	MaxListenQueue     int64  `json:"max listen queue"`
	ListenQueueLen     int64  `json:"listen queue len"`
	IdleProcesses      int64  `json:"idle processes"`
	ActiveProcesses    int64  `json:"active processes"`
	TotalProcesses     int64  `json:"total processes"`
	MaxActiveProcesses int64  `json:"max active processes"`
	MaxChildrenReached int64  `json:"max children reached"`
	SlowRequests       int64  `json:"slow requests"`
	Processes          []struct {
		PID               int64   `json:"pid"`
		State             string  `json:"state"`
		Requests          int64   `json:"requests"`
		RequestDuration   int64   `json:"request duration"`
		LastRequestCPU    float64 `json:"last request cpu"`
		LastRequestMemory int64   `json:"last request memory"`
	} `json:"processes"`
}

// maxStatusProcesses bounds the processes kept from a full status.
const maxStatusProcesses = 4096

// parsePoolStatus reads a status page's JSON.
func parsePoolStatus(b []byte) (*PHPFPMStatus, error) {
	var j statusJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("the status page is not PHP-FPM's JSON: %w", err)
	}
	if j.ProcessManager == "" {
		return nil, fmt.Errorf("the status page has no process manager: not PHP-FPM's status")
	}
	s := &PHPFPMStatus{ProcessManager: j.ProcessManager, StartSince: j.StartSince, AcceptedConn: j.AcceptedConn, ListenQueue: j.ListenQueue,
		MaxListenQueue: j.MaxListenQueue, ListenQueueLen: j.ListenQueueLen, IdleProcesses: j.IdleProcesses, ActiveProcesses: j.ActiveProcesses,
		TotalProcesses: j.TotalProcesses, MaxActiveProcesses: j.MaxActiveProcesses, MaxChildrenReached: j.MaxChildrenReached, SlowRequests: j.SlowRequests}
	for i, p := range j.Processes {
		if i >= maxStatusProcesses {
			break
		}
		s.Processes = append(s.Processes, PHPFPMProcess{PID: p.PID, State: p.State, Requests: p.Requests, RequestDurationUS: p.RequestDuration,
			LastRequestCPU: p.LastRequestCPU, LastRequestMemory: p.LastRequestMemory})
	}
	return s, nil
}

// LastRequests averages the finished last requests of the idle workers:
// their duration in seconds and their CPU in seconds (duration × CPU
// share); n is how many there were.
func (s *PHPFPMStatus) LastRequests() (duration, cpu float64, n int) {
	for _, p := range s.Processes {
		if !strings.EqualFold(p.State, "Idle") || p.Requests == 0 || p.RequestDurationUS <= 0 {
			continue
		}
		d := float64(p.RequestDurationUS) / 1e6
		duration += d
		cpu += d * p.LastRequestCPU / 100
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return duration / float64(n), cpu / float64(n), n
}

type phpfpmCollector struct {
	conf     string
	interval time.Duration
	// procRoot is /proc (tests may point elsewhere).
	procRoot string
	// first are Start's status readings by pool, at firstAt, and the
	// workers' CPU counters read with them.
	first    map[string]*PHPFPMStatus
	firstCPU map[string]map[int64]procCPU
	firstAt  time.Time
}

// NewPHPFPM returns the collector of the PHP-FPM configured by conf
// (php-fpm.conf).
func NewPHPFPM(conf string, interval time.Duration) Collector {
	return &phpfpmCollector{conf: conf, interval: interval, procRoot: "/proc"}
}

// workerCPU reads the CPU counters of a status's workers that run on
// this host (their /proc/PID/comm names php-fpm).
func (c *phpfpmCollector) workerCPU(st *PHPFPMStatus) map[int64]procCPU {
	out := map[int64]procCPU{}
	for _, p := range st.Processes {
		dir := filepath.Join(c.procRoot, strconv.FormatInt(p.PID, 10))
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil || !strings.HasPrefix(string(comm), "php-fpm") {
			continue
		}
		if pc, ok := readProcCPU(dir); ok && pc.hasWait {
			out[p.PID] = pc
		}
	}
	return out
}

var _ Starter = (*phpfpmCollector)(nil)

func (c *phpfpmCollector) Name() string { return "php_fpm" }

func init() {
	register(Registration{
		Name:  "php_fpm",
		Layer: "php_fpm",
		Order: 60,
		Flags: []Flag{
			{Name: "php-fpm-conf", Kind: FlagString, Usage: "php-fpm.conf to read (its pools are followed; a pool with pm.status_path is asked for its status over FastCGI)"},
		},
		AskedBy: "php-fpm-conf",
		New: func(cfg Config) (Collector, error) {
			return NewPHPFPM(cfg.Value("php-fpm-conf"), cfg.Duration("interval")), nil
		},
	})
}

// Start reads the status of every pool that has a status page.
func (c *phpfpmCollector) Start(ctx context.Context) error {
	cfg, err := phpfpmconf.Load(c.conf)
	if err != nil {
		return err
	}
	c.first, c.firstCPU, c.firstAt = map[string]*PHPFPMStatus{}, map[string]map[int64]procCPU{}, time.Now()
	for _, p := range cfg.Pools {
		if st, err := poolStatus(ctx, p); err == nil {
			c.first[p.Name] = st
			c.firstCPU[p.Name] = c.workerCPU(st)
		}
	}
	return nil
}

// Collect reads the configuration and, for each pool with a status page,
// the status; the status counters' growth since Start is the interval.
func (c *phpfpmCollector) Collect(ctx context.Context, s *Snapshot) error {
	cfg, err := phpfpmconf.Load(c.conf)
	if err != nil {
		return fmt.Errorf("php-fpm: %w", err)
	}
	if c.first != nil {
		if err := waitSince(ctx, c.firstAt, c.interval); err != nil {
			return fmt.Errorf("php-fpm: %w", err)
		}
	}
	layer := &PHPFPM{Config: c.conf, Files: cfg.Files, Pools: []PHPFPMPool{}}
	var errs []error
	for _, p := range cfg.Pools {
		pool := PHPFPMPool{Name: p.Name, File: p.File, Line: p.Line, Settings: map[string]string{}, Defaults: map[string]string{}}
		for k := range p.Settings {
			pool.Settings[k], _ = p.Value(k)
		}
		for k, v := range phpfpmconf.Defaults {
			if _, set := p.Settings[k]; !set {
				pool.Defaults[k] = v
			}
		}
		pool.ListenNetwork, pool.ListenAddr, _ = p.Listen()
		st, err := poolStatus(ctx, p)
		switch {
		case err != nil:
			pool.StatusError = err.Error()
			if _, has := p.Settings["pm.status_path"]; has {
				errs = append(errs, fmt.Errorf("pool %s: %w", p.Name, err))
			}
		default:
			pool.Status = st
			if a := c.first[p.Name]; a != nil {
				pool.Interval = counterInterval(a.counters(), st.counters(), time.Since(c.firstAt).Seconds(), "start_since", phpfpmGauges)
				if a.StartSince > st.StartSince {
					pool.Interval.Restarted = true
				}
				pool.CPU = poolCPU(c.firstCPU[p.Name], c.workerCPU(st), len(st.Processes))
			}
		}
		layer.Pools = append(layer.Pools, pool)
	}
	sort.SliceStable(layer.Pools, func(i, j int) bool { return layer.Pools[i].Name < layer.Pools[j].Name })
	if err := s.SetLayer("php_fpm", layer); err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("php-fpm: status: %w", joinErrors(errs))
	}
	return nil
}

// poolCPU is the workers' CPU between two readings (nil when none of
// them could be read on this host).
func poolCPU(a, b map[int64]procCPU, listed int) *PHPFPMCPU {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	out := &PHPFPMCPU{Of: listed}
	for pid, y := range b {
		x, ok := a[pid]
		if !ok || x.start != y.start || y.cpuNS < x.cpuNS || y.wait < x.wait {
			continue
		}
		out.Workers++
		out.Seconds += float64(y.cpuNS-x.cpuNS) / 1e9
		out.RunQueueSeconds += float64(y.wait-x.wait) / 1e9
	}
	if out.Workers == 0 {
		return nil
	}
	return out
}

// poolStatus asks a pool for its full status over FastCGI on its socket.
func poolStatus(ctx context.Context, p *phpfpmconf.Pool) (*PHPFPMStatus, error) {
	path, _ := p.Value("pm.status_path")
	if path == "" {
		return nil, fmt.Errorf("no status page (pm.status_path is not set)")
	}
	network, addr, ok := p.Listen()
	if !ok {
		return nil, fmt.Errorf("no listen address")
	}
	const query = "json&full"
	resp, err := fastcgi.Get(ctx, network, addr, map[string]string{
		"SCRIPT_FILENAME": path, "SCRIPT_NAME": path, "REQUEST_URI": path + "?" + query, "QUERY_STRING": query,
	}, fastcgi.Options{MaxBody: 8 << 20})
	if err != nil {
		return nil, fmt.Errorf("status page %s on %s %s: %w", path, network, addr, err)
	}
	if resp.Status != 200 {
		return nil, fmt.Errorf("status page %s on %s %s: HTTP status %d", path, network, addr, resp.Status)
	}
	return parsePoolStatus(resp.Body)
}
