// Command profbench measures what the app-CPU profiler (package appcpu,
// `stacktune endpoints --profile`) costs a trace run: the reference app
// (refstack/refapp, with its profiling pages) in a process of its own on
// a throwaway MariaDB through the trace run's MySQL proxy, and trace runs
// of one scenario (a logged-in user's home page, /friends, a page that
// burns CPU and one that waits on SQL, one request at a time) without a
// profiler, with perf and with Go's pprof, in rotating order round after
// round. It prints, per mode, the median over rounds of the requests'
// mean latency and of the trace call's wall time (the profiler's start,
// its stop and perf script's reading included), and their ratios to the
// run without a profiler.
//
//	go run ./bench/profbench                  # 5 rounds of 4 s runs
//	go run ./bench/profbench --markdown       # + Markdown for docs/benchmarks.md
//
// See bench/README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sandbox"
)

func main() { os.Exit(measure.Main("profbench", parseFlags, run)) }

type config struct {
	rounds   int
	duration time.Duration
	user     int
	markdown bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("profbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.rounds, "rounds", 5, "rounds: each makes one trace run per mode, in rotating order")
	fs.DurationVar(&c.duration, "d", 4*time.Second, "each trace run's duration")
	fs.IntVar(&c.user, "user", 7, "the user logged in (1 to 100)")
	fs.BoolVar(&c.markdown, "markdown", false, "also print the results as Markdown for docs/benchmarks.md")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	if c.rounds < 1 || c.duration < time.Second || c.user < 1 || c.user > 100 {
		return c, errors.New("--rounds at least 1, -d at least 1s, --user 1 to 100")
	}
	return c, nil
}

// modes are the trace runs compared.
var modes = []string{"off", "perf", "pprof"}

type result struct {
	requests   int64
	meanMs     float64 // the requests' mean latency
	traceS     float64 // the Trace call's wall time
	samples    int64
	attributed int64
}

func run(ctx context.Context, c config, stdout, stderr io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "profbench: "+format+"\n", a...) }
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf is not installed (Debian: linux-perf)")
	}
	work, err := os.MkdirTemp("", "profbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	say("building testdata/refappd")
	bin := filepath.Join(work, "refappd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/stacktune/stacktune/testdata/refappd").CombinedOutput(); err != nil {
		return fmt.Errorf("go build testdata/refappd: %v: %s", err, out)
	}
	db, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{})
	if err != nil {
		return err
	}
	defer db.Stop()
	say("generating the reference app's small data set")
	root, err := refapp.Load(ctx, db.DB(), db.DSN("refapp"), 0)
	if err != nil {
		return err
	}
	defer root.Close()
	tap := reqtrace.NewTap()
	proxy, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Network: "unix", Address: db.Socket(), OnStatement: tap.Statement})
	if err != nil {
		return err
	}
	defer proxy.Close()
	tap.Watch(proxy)
	dsn, err := proxy.DSN(db.DSN("refapp"))
	if err != nil {
		return err
	}
	url, pid, stop, err := startApp(bin, refapp.Config{DSN: dsn, Profiling: true})
	if err != nil {
		return err
	}
	defer stop()
	sc := filepath.Join(work, "scenario.yaml")
	if err := os.WriteFile(sc, []byte(scenario(url, c.user)), 0o600); err != nil {
		return err
	}
	results := map[string][]result{}
	for r := 0; r < c.rounds; r++ {
		for k := range modes {
			mode := modes[(r+k)%len(modes)]
			var s appcpu.Sampler
			switch mode {
			case "perf":
				s = appcpu.NewPerf(appcpu.PerfOptions{PIDs: []int{pid}})
			case "pprof":
				s = &appcpu.PProf{URL: url + "/debug/pprof/profile"}
			}
			start := time.Now()
			rep, _, err := reqtrace.Trace(ctx, reqtrace.TraceOptions{Tap: tap, Sampler: s,
				Bench: benchrun.Options{Scenario: sc, Load: loadgen.Options{Duration: c.duration, KeepAlive: true, Timeout: 30 * time.Second}}})
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, mode, err)
			}
			res := result{requests: rep.Requests, traceS: time.Since(start).Seconds()}
			var n int64
			for _, e := range rep.Endpoints {
				res.meanMs += e.RequestTimeS * 1000 * float64(e.Requests)
				n += e.Requests
			}
			if n > 0 {
				res.meanMs /= float64(n)
			}
			if rep.Profile != nil {
				res.samples, res.attributed = rep.Profile.Samples, rep.Profile.Attributed
			}
			results[mode] = append(results[mode], res)
			say("round %d, %s: %d requests, %.2f ms mean, trace call %.2f s, %d samples (%d in requests)", r+1, mode, res.requests, res.meanMs, res.traceS, res.samples, res.attributed)
		}
	}
	med := func(mode string, f func(result) float64) float64 {
		var v []float64
		for _, r := range results[mode] {
			v = append(v, f(r))
		}
		return measure.MedianOf(v)
	}
	offMs, offS := med("off", func(r result) float64 { return r.meanMs }), med("off", func(r result) float64 { return r.traceS })
	var rows [][]string
	for _, m := range modes {
		ms, s := med(m, func(r result) float64 { return r.meanMs }), med(m, func(r result) float64 { return r.traceS })
		rows = append(rows, []string{m, fmt.Sprintf("%.0f", med(m, func(r result) float64 { return float64(r.requests) })), fmt.Sprintf("%.2f", ms),
			fmt.Sprintf("%.3fx", ms/offMs), fmt.Sprintf("%.2f", s), fmt.Sprintf("%.3fx", s/offS), fmt.Sprintf("%.0f", med(m, func(r result) float64 { return float64(r.samples) }))})
	}
	heads := []string{"profiler", "requests/run", "mean request ms", "latency ratio", "trace call s", "wall ratio", "samples/run"}
	fmt.Fprintf(stdout, "%d rounds of %s trace runs (one request at a time), medians over rounds:\n", c.rounds, c.duration)
	tw := make([]int, len(heads))
	for i, h := range heads {
		tw[i] = len(h)
		for _, r := range rows {
			tw[i] = max(tw[i], len(r[i]))
		}
	}
	for _, r := range append([][]string{heads}, rows...) {
		for i, cell := range r {
			fmt.Fprintf(stdout, "%-*s  ", tw[i], cell)
		}
		fmt.Fprintln(stdout)
	}
	if c.markdown {
		fmt.Fprintf(stdout, "\n| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---:|", len(heads)))
		for _, r := range rows {
			fmt.Fprintf(stdout, "| %s |\n", strings.Join(r, " | "))
		}
	}
	return nil
}

// scenario logs in as user and browses what a trace run of the reference
// app sees, with the profiling pages.
func scenario(base string, user int) string {
	return fmt.Sprintf(`name: profbench
base_url: %s
data:
  users: [%s]
  passwords: [%s]
session:
  login:
    url: /login
    form: {email: "{{users}}@example.com", password: "{{passwords}}"}
    expect: {status: 302}
steps:
  - {name: home, url: /, expect: {status: 200}}
  - {name: friends, url: /friends, expect: {status: 200}}
  - {name: burn, url: /work/burn, expect: {status: 200}}
  - {name: wait, url: /work/wait, expect: {status: 200}}
`, base, refapp.AccountName(user), refapp.Password(user))
}

// startApp runs testdata/refappd: its URL, its pid and how to stop it.
func startApp(bin string, cfg refapp.Config) (string, int, func(), error) {
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "REFAPPD_CONFIG="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case u, ok := <-line:
		if ok && strings.HasPrefix(u, "http://") {
			return u, cmd.Process.Pid, stop, nil
		}
	case <-time.After(60 * time.Second):
	}
	stop()
	return "", 0, nil, errors.New("the app's process did not start")
}
