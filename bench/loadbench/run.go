package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/sandbox"
)

// The two clients.
const (
	toolWrk  = "wrk"
	toolOurs = "stacktune"
)

// measurement is one run of one client.
type measurement struct {
	tool, config string
	requests     int64
	errors       int64
	elapsed      float64 // seconds, as the client reports
	rps          float64
	sample       measure.Sample // the client process: wall, CPU, RSS
	nginxCPU     time.Duration  // nginx's worker during the run
	p50, p99     float64        // ms
	noisy        bool           // other load above --max-other-load, even after the retries
}

// cpuPerM is client CPU seconds per million requests.
func (m measurement) cpuPerM() float64 {
	if m.requests == 0 {
		return 0
	}
	return m.sample.CPU.Seconds() / float64(m.requests) * 1e6
}

// nginxCores is how many cores nginx kept busy.
func (m measurement) nginxCores() float64 { return measure.Cores(m.nginxCPU, m.sample.Wall) }

// otherCores is how many cores everything but the client and nginx kept
// busy (other processes, the hypervisor's steal): the noise of a run.
func (m measurement) otherCores() float64 {
	return measure.Cores(max(m.sample.Others-m.nginxCPU, 0), m.sample.Wall)
}

// syscallCount is one client's perf stat figures.
type syscallCount struct {
	tool, config       string
	requests           int64
	syscalls, switches int64
}

// results is everything the report shows.
type results struct {
	cfg      config
	runs     []measurement
	syscalls []syscallCount
	env      env
}

// env is the machine and versions for the report.
type env struct {
	date, cpu, kernel, nginx, wrk, goVersion, commit string
	cores                                            int
}

// bench holds what the runs share.
type bench struct {
	cfg     config
	work    string
	self    string
	wrk     string
	taskset string
	perf    string
	url     string
	nginx   *sandbox.Nginx
	stderr  io.Writer
}

// nginxHTTP serves {{DIR}}/html without an access log (the log would be
// part of what is measured).
const nginxHTTP = `    server {
        listen 127.0.0.1:{{PORT}};
        server_name localhost;
        access_log off;
        root {{DIR}}/html;
    }
`

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	b := &bench{cfg: cfg, stderr: stderr}
	var err error
	if b.wrk, err = measure.LookTool("wrk", "wrk"); err != nil {
		return err
	}
	for _, c := range cfg.configs {
		if c == cfgPinned {
			if b.taskset, err = measure.LookTool("taskset", "util-linux"); err != nil {
				return err
			}
		}
	}
	if cfg.syscalls {
		if b.perf, err = measure.LookTool("perf", "linux-perf"); err != nil {
			return err
		}
	}
	if b.self, err = os.Executable(); err != nil {
		return fmt.Errorf("finding this program's binary: %w", err)
	}
	if b.work, err = os.MkdirTemp("", "loadbench-"); err != nil {
		return fmt.Errorf("creating the work directory: %w", err)
	}
	if cfg.keep {
		fmt.Fprintf(stderr, "loadbench: outputs kept in %s\n", b.work)
	} else {
		defer os.RemoveAll(b.work)
	}
	b.nginx, err = sandbox.StartNginx(ctx, sandbox.NginxOptions{HTTPConfig: nginxHTTP})
	if err != nil {
		return err
	}
	defer b.nginx.Stop()
	body := strings.Repeat("x", cfg.size)
	if err := os.WriteFile(filepath.Join(b.nginx.Dir(), "html", "bench.html"), []byte(body), 0o644); err != nil {
		return err
	}
	b.url = b.nginx.URL() + "bench.html"
	fmt.Fprintf(stderr, "loadbench: nginx (1 worker, access_log off) serving %d bytes at %s\n", cfg.size, b.url)

	nginxBin, err := measure.LookTool("nginx", "nginx")
	if err != nil {
		return err
	}
	res := &results{cfg: cfg, env: collectEnv(ctx, b.wrk, nginxBin)}
	for _, c := range cfg.configs {
		if err := b.pinNginx(ctx, c); err != nil {
			return err
		}
		for i := 0; i < cfg.runs; i++ {
			order := []string{toolWrk, toolOurs}
			if i%2 == 1 {
				order = []string{toolOurs, toolWrk}
			}
			for _, tool := range order {
				var m measurement
				for attempt := 0; ; attempt++ {
					m, err = b.measure(ctx, tool, c, i)
					if err != nil {
						return err
					}
					m.noisy = m.otherCores() > cfg.maxOther
					note := ""
					if m.noisy {
						note = fmt.Sprintf(" (noisy: other load above %.2f cores", cfg.maxOther)
						if attempt < cfg.retries {
							note += ", repeated)"
						} else {
							note += ", kept)"
						}
					}
					fmt.Fprintf(stderr, "loadbench: %-8s %-9s run %d: %9.0f req/s, %6.2f s CPU = %5.2f s/1M req, nginx %.2f cores, others %.2f cores, p50 %.2f ms, p99 %.2f ms, %d errors%s\n",
						c, tool, i+1, m.rps, m.sample.CPU.Seconds(), m.cpuPerM(), m.nginxCores(), m.otherCores(), m.p50, m.p99, m.errors, note)
					if !m.noisy || attempt >= cfg.retries {
						break
					}
				}
				res.runs = append(res.runs, m)
			}
		}
		if cfg.syscalls {
			for _, tool := range []string{toolWrk, toolOurs} {
				s, err := b.countSyscalls(ctx, tool, c)
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "loadbench: %-8s %-9s perf stat: %.2f syscalls/req, %.3f context switches/req\n",
					c, tool, per(s.syscalls, s.requests), per(s.switches, s.requests))
				res.syscalls = append(res.syscalls, s)
			}
		}
		if cfg.cpuprofile != "" {
			out := fmt.Sprintf("%s-%s.pprof", cfg.cpuprofile, c)
			cmd := b.command(toolOurs, c, "--cpuprofile", out)
			if _, err := measure.Run(ctx, cfg.duration+cfg.toolTimeout, filepath.Join(b.work, "profile-"+c+".out"), cmd[0], cmd[1:]...); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "loadbench: %s: CPU profile of our client in %s (go tool pprof -top %s)\n", c, out, out)
		}
	}
	printText(stdout, res)
	if cfg.markdown {
		fmt.Fprintln(stdout)
		printMarkdown(stdout, res)
	}
	return nil
}

func per(n, reqs int64) float64 {
	if reqs == 0 {
		return 0
	}
	return float64(n) / float64(reqs)
}

// command is the command line of one client run in a configuration.
func (b *bench) command(tool, config string, extra ...string) []string {
	var cmd []string
	if config == cfgPinned {
		cmd = []string{b.taskset, "-c", "1"}
	}
	switch tool {
	case toolWrk:
		threads := b.cfg.wrkThreads
		if threads == 0 {
			threads = runtime.NumCPU()
			if config == cfgPinned {
				threads = 1
			}
		}
		cmd = append(cmd, b.wrk, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(b.cfg.connections),
			"-d", strconv.Itoa(int(b.cfg.duration.Seconds()))+"s", "--latency", b.url)
	default:
		cmd = append(cmd, b.self, clientCommand, "--url", b.url, "--connections", strconv.Itoa(b.cfg.connections),
			"--duration", b.cfg.duration.String())
	}
	return append(cmd, extra...)
}

// measure runs one client once and reads its output and rusage.
func (b *bench) measure(ctx context.Context, tool, config string, i int) (measurement, error) {
	m := measurement{tool: tool, config: config}
	out := filepath.Join(b.work, fmt.Sprintf("%s-%s-%d.out", config, tool, i))
	cmd := b.command(tool, config)
	time.Sleep(500 * time.Millisecond) // let the previous run's connections close
	ng0 := b.nginxCPU()
	s, err := measure.Run(ctx, b.cfg.duration+b.cfg.toolTimeout, out, cmd[0], cmd[1:]...)
	if err != nil {
		return m, err
	}
	m.nginxCPU = b.nginxCPU() - ng0
	m.sample = s
	data, err := os.ReadFile(out)
	if err != nil {
		return m, err
	}
	if tool == toolWrk {
		w, err := parseWrk(string(data))
		if err != nil {
			return m, fmt.Errorf("wrk output: %w\n%s", err, data)
		}
		m.requests, m.errors, m.elapsed, m.rps, m.p50, m.p99 = w.requests, w.errors, w.elapsed, w.rps, w.p50, w.p99
	} else {
		var r clientResult
		if err := json.Unmarshal(data, &r); err != nil {
			return m, fmt.Errorf("our client's output: %w\n%s", err, data)
		}
		m.requests, m.errors, m.elapsed, m.rps, m.p50, m.p99 = r.Requests, r.Errors, r.Elapsed, r.RPS, r.P50, r.P99
		if len(r.Details) > 0 {
			fmt.Fprintf(b.stderr, "loadbench: our client's errors: %s\n", strings.Join(r.Details, "; "))
		}
	}
	if m.requests == 0 {
		return m, fmt.Errorf("%s completed no request", tool)
	}
	return m, nil
}

// countSyscalls runs one client under perf stat.
func (b *bench) countSyscalls(ctx context.Context, tool, config string) (syscallCount, error) {
	sc := syscallCount{tool: tool, config: config}
	stat := filepath.Join(b.work, fmt.Sprintf("perf-%s-%s.csv", config, tool))
	out := filepath.Join(b.work, fmt.Sprintf("perf-%s-%s.out", config, tool))
	args := append([]string{"stat", "-x,", "-o", stat, "-e", "raw_syscalls:sys_enter", "-e", "context-switches", "--"}, b.command(tool, config)...)
	time.Sleep(500 * time.Millisecond)
	if _, err := measure.Run(ctx, b.cfg.duration+b.cfg.toolTimeout, out, b.perf, args...); err != nil {
		return sc, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return sc, err
	}
	if tool == toolWrk {
		w, err := parseWrk(string(data))
		if err != nil {
			return sc, fmt.Errorf("wrk output: %w\n%s", err, data)
		}
		sc.requests = w.requests
	} else {
		var r clientResult
		if err := json.Unmarshal(data, &r); err != nil {
			return sc, fmt.Errorf("our client's output: %w\n%s", err, data)
		}
		sc.requests = r.Requests
	}
	csv, err := os.ReadFile(stat)
	if err != nil {
		return sc, err
	}
	sc.syscalls, sc.switches, err = parsePerfStat(string(csv))
	return sc, err
}

// parsePerfStat reads raw_syscalls:sys_enter and context-switches from
// perf stat -x, output.
func parsePerfStat(s string) (syscalls, switches int64, err error) {
	found := 0
	for _, line := range strings.Split(s, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		if perr != nil {
			continue
		}
		switch strings.TrimSpace(f[2]) {
		case "raw_syscalls:sys_enter":
			syscalls, found = n, found+1
		case "context-switches":
			switches, found = n, found+1
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("perf stat output without both counters (is raw_syscalls:sys_enter available? try as root or lower kernel.perf_event_paranoid):\n%s", s)
	}
	return syscalls, switches, nil
}

// nginxPIDs returns nginx's master and its workers.
func (b *bench) nginxPIDs() []int {
	master := b.nginx.PID()
	pids := []int{master}
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", master, master))
	for _, f := range strings.Fields(string(data)) {
		if c, err := strconv.Atoi(f); err == nil {
			pids = append(pids, c)
		}
	}
	return pids
}

// nginxCPU is the user+sys time of nginx's processes so far.
func (b *bench) nginxCPU() time.Duration {
	var total time.Duration
	for _, pid := range b.nginxPIDs() {
		total += procCPU(pid)
	}
	return total
}

// procCPU reads utime+stime of pid from /proc/pid/stat.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// fields after the command: state(0) ... utime(11) stime(12)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100
}

// pinNginx sets nginx's CPU affinity for a configuration: CPU 0 pinned,
// all cores unpinned.
func (b *bench) pinNginx(ctx context.Context, config string) error {
	if b.taskset == "" {
		return nil // only unpinned runs: nginx keeps its default affinity
	}
	cpus := fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	if config == cfgPinned {
		cpus = "0"
	}
	for _, pid := range b.nginxPIDs() {
		out, err := exec.CommandContext(ctx, b.taskset, "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput()
		if err != nil {
			return fmt.Errorf("taskset nginx %d: %w\n%s", pid, err, out)
		}
	}
	fmt.Fprintf(b.stderr, "loadbench: %s: nginx on CPUs %s%s\n", config, cpus, map[bool]string{true: ", client on CPU 1", false: ""}[config == cfgPinned])
	return nil
}

func collectEnv(ctx context.Context, wrk, nginx string) env {
	e := env{
		date:      measure.Today(),
		cpu:       measure.CPUModel(),
		cores:     measure.NumCPU(),
		goVersion: runtime.Version(),
		commit:    measure.GitCommit(ctx),
		kernel:    "unknown",
		nginx:     "unknown",
		wrk:       "unknown",
	}
	if out, err := exec.CommandContext(ctx, "uname", "-r").Output(); err == nil {
		e.kernel = strings.TrimSpace(string(out))
	}
	if out, _ := exec.CommandContext(ctx, nginx, "-v").CombinedOutput(); len(out) > 0 {
		if _, v, ok := strings.Cut(strings.TrimSpace(string(out)), "nginx/"); ok {
			e.nginx = v
		}
	}
	if out, _ := exec.CommandContext(ctx, wrk, "-v").CombinedOutput(); len(out) > 0 {
		if f := strings.Fields(string(out)); len(f) > 1 {
			e.wrk = f[1]
		}
	}
	return e
}
