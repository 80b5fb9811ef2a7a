package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// summary is the median of one client's runs in one configuration.
type summary struct {
	tool, config        string
	runs                int
	rps, cpuPerM, nginx float64
	others              float64
	p50, p99            float64
	errors              int64
	noisy               int     // runs kept although other load was above --max-other-load
	syscalls, switches  float64 // per request, 0 without --syscalls
}

// summarise takes per-figure medians of each client's runs, in the order
// configurations and clients were measured.
func summarise(res *results) []summary {
	var out []summary
	for _, c := range res.cfg.configs {
		for _, tool := range []string{toolWrk, toolOurs} {
			s := summary{tool: tool, config: c}
			var rps, cpu, ng, oth, p50, p99 []float64
			for _, m := range res.runs {
				if m.config != c || m.tool != tool {
					continue
				}
				s.runs++
				rps = append(rps, m.rps)
				cpu = append(cpu, m.cpuPerM())
				ng = append(ng, m.nginxCores())
				oth = append(oth, m.otherCores())
				p50 = append(p50, m.p50)
				p99 = append(p99, m.p99)
				s.errors += m.errors
				if m.noisy {
					s.noisy++
				}
			}
			if s.runs == 0 {
				continue
			}
			s.rps, s.cpuPerM, s.nginx = measure.MedianOf(rps), measure.MedianOf(cpu), measure.MedianOf(ng)
			s.p50, s.p99 = measure.MedianOf(p50), measure.MedianOf(p99)
			s.others = measure.MedianOf(oth)
			for _, sc := range res.syscalls {
				if sc.config == c && sc.tool == tool {
					s.syscalls, s.switches = per(sc.syscalls, sc.requests), per(sc.switches, sc.requests)
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// ratio formats a/b as "0.95x".
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func find(sums []summary, config, tool string) (summary, bool) {
	for _, s := range sums {
		if s.config == config && s.tool == tool {
			return s, true
		}
	}
	return summary{}, false
}

func configLabel(c string) string {
	if c == cfgPinned {
		return "pinned (nginx CPU 0, client CPU 1)"
	}
	return "unpinned (all cores shared)"
}

// rows renders the summary table: a header, then per configuration the
// two clients and the ours/wrk ratios.
func rows(res *results) [][]string {
	sc := len(res.syscalls) > 0
	head := []string{"configuration", "client", "runs", "req/s", "client CPU s / 1M req", "nginx cores", "other load cores", "p50 ms", "p99 ms", "errors"}
	if sc {
		head = append(head, "syscalls / req", "context switches / req")
	}
	out := [][]string{head}
	sums := summarise(res)
	for _, s := range sums {
		runs := fmt.Sprint(s.runs)
		if s.noisy > 0 {
			runs += fmt.Sprintf(" (%d noisy)", s.noisy)
		}
		row := []string{s.config, s.tool, runs, measure.GroupInt(int64(s.rps + 0.5)), f2(s.cpuPerM), f2(s.nginx), f2(s.others), f2(s.p50), f2(s.p99), fmt.Sprint(s.errors)}
		if sc {
			row = append(row, f2(s.syscalls), fmt.Sprintf("%.3f", s.switches))
		}
		out = append(out, row)
		if s.tool != toolOurs {
			continue
		}
		if wrk, ok := find(sums, s.config, toolWrk); ok {
			row := []string{s.config, "ours / wrk", "", ratio(s.rps, wrk.rps), ratio(s.cpuPerM, wrk.cpuPerM), ratio(s.nginx, wrk.nginx), "", "", "", ""}
			if sc {
				row = append(row, ratio(s.syscalls, wrk.syscalls), ratio(s.switches, wrk.switches))
			}
			out = append(out, row)
			if rps, cpu, ng, n := paired(res, s.config); n > 1 {
				row := []string{s.config, "paired", fmt.Sprint(n), fmt.Sprintf("%.2fx", rps), fmt.Sprintf("%.2fx", cpu), fmt.Sprintf("%.2fx", ng), "", "", "", ""}
				if sc {
					row = append(row, "", "")
				}
				out = append(out, row)
			}
		}
	}
	return out
}

// paired returns the medians of the per-run ratios ours/wrk of req/s,
// CPU per request and nginx cores, pairing run i of each client (they ran
// one after the other, so they saw about the same machine), and the number
// of pairs.
func paired(res *results, config string) (rps, cpu, nginx float64, n int) {
	by := map[string][]measurement{}
	for _, m := range res.runs {
		if m.config == config {
			by[m.tool] = append(by[m.tool], m)
		}
	}
	w, o := by[toolWrk], by[toolOurs]
	var rr, cc, nn []float64
	for i := 0; i < len(w) && i < len(o); i++ {
		if w[i].rps == 0 || w[i].cpuPerM() == 0 || w[i].nginxCores() == 0 {
			continue
		}
		rr = append(rr, o[i].rps/w[i].rps)
		cc = append(cc, o[i].cpuPerM()/w[i].cpuPerM())
		nn = append(nn, o[i].nginxCores()/w[i].nginxCores())
	}
	if len(rr) == 0 {
		return 0, 0, 0, 0
	}
	return measure.MedianOf(rr), measure.MedianOf(cc), measure.MedianOf(nn), len(rr)
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

const goals = "goals: achieved req/s ours/wrk >= 0.90x, client CPU per request ours/wrk <= 1.50x"

func printText(w io.Writer, res *results) {
	e, c := res.env, res.cfg
	fmt.Fprintf(w, "nginx %s (1 worker, access_log off) serving a %d-byte file on loopback; %d connections, %s per run, %d runs per client and configuration, alternating (medians)\n",
		e.nginx, c.size, c.connections, c.duration, c.runs)
	fmt.Fprintf(w, "machine: %d cores, %s, Linux %s; wrk %s; Go %s; stacktune %s\n\n", e.cores, e.cpu, e.kernel, e.wrk, e.goVersion, e.commit)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range rows(res) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s\nours / wrk: ratio of the medians; paired: median of the ratios of run i of each client (run back to back); a noisy run had other processes keeping more than %.2f cores busy even after %d retries\n", goals, c.maxOther, c.retries)
}

func printMarkdown(w io.Writer, res *results) {
	e, c := res.env, res.cfg
	fmt.Fprintf(w, "## Load generator: `stacktune bench` client vs wrk\n\n")
	fmt.Fprintf(w, "%s, `go run ./bench/loadbench` at %s. %d cores (%s), Linux %s; nginx %s with 1 worker and `access_log off` serving a %d-byte static file on loopback; wrk %s; Go %s. "+
		"Each client ran %d times per configuration for %s with %d keep-alive connections, alternating with the other; figures are medians. "+
		"Client CPU is the client process's user+sys time (rusage) per million requests; nginx cores is nginx's CPU over the run; "+
		"other load is what the rest of the machine used meanwhile (a run above %.2f cores is repeated up to %d times, and flagged noisy if kept). "+
		"wrk runs with one thread per core it may use; ours with max(1, GOMAXPROCS-1) event loops. "+
		"The ours / wrk row is the ratio of the medians; paired is the median of the ratios of run i of each client, which ran back to back.\n\n",
		e.date, e.commit, e.cores, e.cpu, e.kernel, e.nginx, c.size, e.wrk, e.goVersion, c.runs, c.duration, c.connections, c.maxOther, c.retries)
	all := rows(res)
	for i, row := range all {
		cells := append([]string(nil), row...)
		if i > 0 {
			cells[0] = configLabel(cells[0])
			if cells[1] == "ours / wrk" || cells[1] == "paired" {
				for j := 1; j < len(cells); j++ {
					if cells[j] != "" {
						cells[j] = "**" + cells[j] + "**"
					}
				}
			}
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		if i == 0 {
			sep := make([]string, len(row))
			for j := range sep {
				sep[j] = "---:"
			}
			sep[0], sep[1] = "---", "---"
			fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
		}
	}
	fmt.Fprintln(w, "\nGoals: achieved req/s at least 0.90x wrk's, client CPU per request at most 1.50x wrk's.")
}
