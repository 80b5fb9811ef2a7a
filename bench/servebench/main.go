// Command servebench measures `stacktune serve` on a large ledger: it
// fills a history with --runs runs (10,000 by default: bench runs with
// their steps, in sessions and under labels, commits and scenarios like
// a contest's day; the last runs with a digest, an access-log profile
// and a profile as artefacts), then times each page and API route the
// UI uses, in the server (the handler's time, no network), and prints
// the median, the 90th percentile and the slowest of --repeat requests,
// and the process's CPU per request, against the limit (200 ms). It fails
// when a route's median or CPU per request is over the limit; the 90th
// percentile and the slowest are shown (on a shared machine they are
// requests that waited for a core).
//
//	go run ./bench/servebench --markdown
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/serve"
)

func main() { os.Exit(measure.Main("servebench", parseFlags, run)) }

type config struct {
	runs, repeat, withArtefacts int
	limit                       time.Duration
	markdown                    bool
	db                          string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("servebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.runs, "runs", 10000, "runs in the ledger")
	fs.IntVar(&c.withArtefacts, "artefacts", 1000, "the last runs that have artefacts (the default retention keeps 1000)")
	fs.IntVar(&c.repeat, "repeat", 20, "requests per route")
	fs.DurationVar(&c.limit, "limit", 200*time.Millisecond, "the server time no route may exceed")
	fs.BoolVar(&c.markdown, "markdown", false, "print the result as Markdown")
	fs.StringVar(&c.db, "db", "", "history database to fill (default: a temporary one, removed)")
	return c, fs.Parse(args)
}

func run(ctx context.Context, c config, stdout, stderr io.Writer) error {
	db := c.db
	if db == "" {
		dir, err := os.MkdirTemp("", "servebench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, "history.db")
	}
	store, err := history.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	store.Retention = history.Retention{} // the bench decides which runs have artefacts
	start := time.Now()
	ids, err := fill(ctx, store, c)
	if err != nil {
		return err
	}
	fi, _ := os.Stat(db)
	fmt.Fprintf(stderr, "servebench: %d runs written in %s (%.1f MiB)\n", len(ids), time.Since(start).Round(time.Millisecond), float64(fi.Size())/(1<<20))
	h := serve.New(store, serve.Options{})
	last, prev := ids[len(ids)-1], ids[len(ids)-2]
	routes := []struct{ name, path string }{
		{"run list (first page, transitions chart of 5,000 runs)", "/"},
		{"run list filtered by label", "/?label=step+7"},
		{"run list filtered by commit", "/?commit=c0ffee12"},
		{"run list, an older page", fmt.Sprintf("/?before=%d", ids[len(ids)/2])},
		{"run page (with artefacts)", fmt.Sprintf("/runs/%d", last)},
		{"diff of two runs (with artefacts)", fmt.Sprintf("/diff?a=%d&b=%d", prev, last)},
		{"diff of the first and the last run", fmt.Sprintf("/diff?a=%d&b=%d", ids[0], last)},
		{"session page", "/sessions/1"},
		{"API: runs", "/api/runs?limit=100"},
		{"API: diff", fmt.Sprintf("/api/diff?a=%d&b=%d", prev, last)},
	}
	type row struct {
		name               string
		median, p90, worst time.Duration
		cpu                time.Duration // the process's CPU per request
		bytes              int
	}
	var rows []row
	over := 0
	for _, r := range routes {
		var times []time.Duration
		size := 0
		cpu0 := cpuTime()
		for range c.repeat {
			req := httptest.NewRequestWithContext(ctx, "GET", r.path, nil)
			w := httptest.NewRecorder()
			t0 := time.Now()
			h.ServeHTTP(w, req)
			times = append(times, time.Since(t0))
			if w.Code != http.StatusOK {
				return fmt.Errorf("%s: status %d: %.200s", r.path, w.Code, w.Body)
			}
			size = w.Body.Len()
		}
		cpu := (cpuTime() - cpu0) / time.Duration(c.repeat)
		slices.Sort(times)
		rw := row{r.name, times[len(times)/2], times[len(times)*9/10], times[len(times)-1], cpu, size}
		if rw.median > c.limit || rw.cpu > c.limit {
			over++
		}
		rows = append(rows, rw)
	}
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(stdout, "servebench: load average %s", load)
	fmt.Fprintf(stdout, "servebench: %d runs (%d with artefacts), %d requests per route, %d cores, %s, %s\n\n", len(ids), c.withArtefacts, c.repeat, runtime.NumCPU(), runtime.Version(), host)
	if c.markdown {
		fmt.Fprintln(stdout, "| route | median ms | p90 ms | slowest ms | CPU ms per request | page KiB |")
		fmt.Fprintln(stdout, "|---|---:|---:|---:|---:|---:|")
	}
	for _, r := range rows {
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		if c.markdown {
			fmt.Fprintf(stdout, "| %s | %.1f | %.1f | %.1f | %.1f | %.0f |\n", r.name, ms(r.median), ms(r.p90), ms(r.worst), ms(r.cpu), float64(r.bytes)/1024)
		} else {
			fmt.Fprintf(stdout, "%-55s median %7.1f ms  p90 %7.1f ms  slowest %7.1f ms  CPU %6.1f ms  %6.0f KiB\n", r.name, ms(r.median), ms(r.p90), ms(r.worst), ms(r.cpu), float64(r.bytes)/1024)
		}
	}
	if over > 0 {
		return fmt.Errorf("%d route(s) over %s (median or CPU per request)", over, c.limit)
	}
	return nil
}

// fill writes the runs: five steps each, 40 labels, a commit per 50 runs,
// two scenarios, a tune session per 200 runs; artefacts on the last ones.
func fill(ctx context.Context, s *history.Store, c config) ([]int64, error) {
	var ids []int64
	t0 := time.Now().Add(-time.Duration(c.runs) * time.Minute)
	digest := artefact(120, func(i int) any {
		return map[string]any{"id": fmt.Sprintf("%016X", i*7919), "fingerprint": fmt.Sprintf("select * from t%d where a = ? and b in(?+) order by c limit ?", i),
			"count": 1000 + i, "time_total_s": float64(i) * 0.37, "time_p95_s": 0.002 * float64(i%17), "rows_examined_total": i * 1000}
	}, "classes")
	access := artefact(60, func(i int) any {
		return map[string]any{"method": "GET", "path": fmt.Sprintf("/api/items/%d/:num", i), "count": 5000 - i, "time_total_s": float64(60-i) * 1.3,
			"time_p50_s": 0.004, "time_p99_s": 0.05, "status": map[string]int{"2xx": 5000 - i}}
	}, "endpoints")
	var folded strings.Builder
	for i := range 400 {
		fmt.Fprintf(&folded, "main;http.serve;app.handler%d;db.query;net.read %d\n", i%40, 1+i%13)
	}
	var session int64
	for i := range c.runs {
		if i%200 == 0 {
			if session != 0 {
				if err := s.EndSession(ctx, session, history.SessionDone); err != nil {
					return nil, err
				}
			}
			var err error
			if session, err = s.StartSession(ctx, history.CommandTune, fmt.Sprintf("tune %d", i/200)); err != nil {
				return nil, err
			}
			s.SetNoise(ctx, session, 0.03)
		}
		rr := benchrun.RunResult{Score: 1000 + float64(i%300), Passed: i%37 != 0, Requests: 20000, RPS: 660, ElapsedS: 30}
		for k, name := range []string{"home", "friends", "profile", "login", "entry"} {
			rr.Steps = append(rr.Steps, benchrun.Step{Name: name, Requests: int64(4000 + k*10 + i%50), LatencyMS: benchrun.LatencyMS{Mean: 5 + float64(k), P50: 4, P99: 40}})
		}
		details, _ := json.Marshal(rr)
		r := history.Run{Label: fmt.Sprintf("step %d", i/250%40), Started: t0.Add(time.Duration(i) * time.Minute), Target: "http://127.0.0.1:8080/",
			Scenario: "isucon", Score: rr.Score, Passed: rr.Passed, Requests: rr.Requests, RPS: rr.RPS, P50: 4 * time.Millisecond, P99: 40 * time.Millisecond,
			Details: details, Command: history.CommandTune, ScenarioHash: []string{"5ce9a1ab01", "5ce9a1ab02"}[i/5000%2], DataReset: "POST /initialize",
			AppCommit: fmt.Sprintf("c0ffee%02d%032d", i/50%100, i/50), Duration: 30 * time.Second, Session: session, Arm: []string{"a", "b"}[i%2]}
		if i >= c.runs-c.withArtefacts {
			r.Artefacts = []history.Artefact{{Kind: history.ArtefactDigest, Data: digest}, {Kind: history.ArtefactHTTP, Data: access},
				{Kind: history.ArtefactProfile, Data: []byte(folded.String())}}
		}
		if _, err := s.Add(ctx, &r); err != nil {
			return nil, err
		}
		ids = append(ids, r.ID)
	}
	return ids, s.EndSession(ctx, session, history.SessionDone)
}

func artefact(n int, row func(i int) any, key string) []byte {
	var rows []any
	for i := range n {
		rows = append(rows, row(i))
	}
	b, _ := json.Marshal(map[string]any{key: rows})
	return b
}

// cpuTime is the process's user and system CPU so far (the server's work,
// whatever else the machine runs; includes the GC's).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
