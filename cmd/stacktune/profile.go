package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/appcpu"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/scenario"
)

// profileFlags are the app-CPU profiler's flags (endpoints, diagnose).
type profileFlags struct {
	on       bool
	pprof    string
	pids     []int
	listen   string
	flameDir string
}

func (p *profileFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&p.on, "profile", false, "sample the app's CPU during the trace run: per endpoint its app CPU, DB and other time per request, top functions and a flame graph (perf on the app's processes, or Go's pprof with --pprof)")
	f.StringVar(&p.pprof, "pprof", "", "with --profile: the Go app's profile handler (http://host:port/debug/pprof/profile) instead of perf")
	f.IntSliceVar(&p.pids, "app-pid", nil, "with --profile: the app's processes (repeatable or comma-separated; their children are sampled too); default: the processes listening on --app-listen or on the URL's port")
	f.StringVar(&p.listen, "app-listen", "", "with --profile: the app's own address when something else listens on the URL's port (php-fpm's socket path, the app server's host:port)")
	f.StringVar(&p.flameDir, "flame-dir", "", "with --profile: where the flame graphs (SVG) are written (default: next to -o, else a new directory under the system's temporary one)")
}

// sampler is the sampler the flags ask for (nil without --profile);
// target is the trace run's URL, or the scenario's base URL.
func (p *profileFlags) sampler(url, scenarioFile, baseURL string, say func(string)) (appcpu.Sampler, error) {
	if !p.on {
		if p.pprof != "" || len(p.pids) > 0 || p.listen != "" || p.flameDir != "" {
			return nil, errors.New("--pprof, --app-pid, --app-listen and --flame-dir go with --profile")
		}
		return nil, nil
	}
	target := url
	if target == "" {
		target = baseURL
	}
	if target == "" && scenarioFile != "" {
		if sc, err := scenario.Load(scenarioFile); err == nil {
			target = sc.BaseURL
		}
	}
	s, line, err := appcpu.NewSampler(appcpu.SamplerOptions{PProfURL: p.pprof, PIDs: p.pids, Listen: p.listen, Target: target})
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	say("profiling the app: " + line)
	return s, nil
}

// writeFlameGraphs writes each profiled endpoint's flame graph into the
// flame directory and records its path in the report.
func (p *profileFlags) writeFlameGraphs(rep *reqtrace.Report, output string, stderr io.Writer) error {
	if rep == nil || rep.Profile == nil {
		return nil
	}
	dir, err := flameDir(p.flameDir, output)
	if err != nil {
		return err
	}
	n := 0
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		if e.Usage == nil || len(e.Stacks) == 0 {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("%02d-%s.svg", i+1, fileSafe(e.Endpoint)))
		title := fmt.Sprintf("%s: app CPU %.2f ms per request (%s)", e.Endpoint, e.AppCPUMsPerRequest, rep.Profile.Sampler)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return report.FlameGraph(w, title, e.Stacks) }); err != nil {
			return err
		}
		e.FlameGraph = path
		n++
	}
	if n > 0 {
		fmt.Fprintf(stderr, "stacktune: %d flame graph(s) written to %s\n", n, dir)
	}
	return nil
}

// flameDir is the flame graphs' directory: the one given, else
// OUTPUT.flame beside the report file, else a new temporary one.
func flameDir(given, output string) (string, error) {
	dir := given
	switch {
	case dir != "":
	case output != "" && output != "-":
		dir = strings.TrimSuffix(output, filepath.Ext(output)) + ".flame"
	default:
		return os.MkdirTemp("", "stacktune-flame-")
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// fileSafe is an endpoint as a file name: letters, digits, '.', '-'.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	return strings.Trim(b.String(), "_.")
}

// endpointsDiffOptions are the flags of `stacktune endpoints diff`.
type endpointsDiffOptions struct {
	format, output, flameDir string
}

func newEndpointsDiffCmd() *cobra.Command {
	var o endpointsDiffOptions
	cmd := &cobra.Command{
		Use:   "diff BEFORE.json AFTER.json",
		Short: "Compare two profiled runs (endpoints --profile --format json): per endpoint, the functions whose CPU grew or shrank",
		Long: `diff reads two reports of stacktune endpoints --profile --format json (before and after a
change) and shows, per endpoint, the app CPU, DB and other time per request in each, the
functions whose own CPU per request grew or shrank the most, and a differential flame graph
(SVG, red grew, blue shrank) of each endpoint, written to --flame-dir.`,
		Example: `  stacktune endpoints diff before.json after.json
  stacktune endpoints diff before.json after.json --format markdown -o diff.md`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEndpointsDiff(o, args[0], args[1], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.EndpointsDiffFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of standard output")
	f.StringVar(&o.flameDir, "flame-dir", "", "where the differential flame graphs are written (default: next to -o, else a new temporary directory)")
	return cmd
}

// maxReportBytes bounds a report read back.
const maxReportBytes = 256 << 20

func readProfiled(path string) ([]appcpu.Usage, error) {
	b, err := input.ReadFile(path, maxReportBytes)
	if err != nil {
		return nil, err
	}
	var rep reqtrace.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: not a report of stacktune endpoints --format json: %w", path, err)
	}
	if rep.Profile == nil {
		return nil, fmt.Errorf("%s: no profile in it (run stacktune endpoints with --profile)", path)
	}
	var out []appcpu.Usage
	for _, e := range rep.Endpoints {
		if e.Usage != nil {
			u := *e.Usage
			u.Endpoint = e.Endpoint
			out = append(out, u)
		}
	}
	return out, nil
}

func runEndpointsDiff(o endpointsDiffOptions, a, b string, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.EndpointsDiffFormats...); err != nil {
		return err
	}
	before, err := readProfiled(a)
	if err != nil {
		return err
	}
	after, err := readProfiled(b)
	if err != nil {
		return err
	}
	v := &report.EndpointsDiffView{Before: a, After: b, Endpoints: appcpu.Diff(before, after), FlameGraphs: map[string]string{}}
	dir, err := flameDir(o.flameDir, o.output)
	if err != nil {
		return err
	}
	for i, d := range v.Endpoints {
		if len(d.Stacks) == 0 {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("%02d-%s.diff.svg", i+1, fileSafe(d.Endpoint)))
		title := fmt.Sprintf("%s: app CPU %.2f → %.2f ms per request (red grew, blue shrank)", d.Endpoint, d.Before.AppCPUMs, d.After.AppCPUMs)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return report.FlameDiffGraph(w, title, d.Stacks) }); err != nil {
			return err
		}
		v.FlameGraphs[d.Endpoint] = path
	}
	if len(v.FlameGraphs) > 0 {
		fmt.Fprintf(stderr, "stacktune endpoints diff: %d differential flame graph(s) written to %s\n", len(v.FlameGraphs), dir)
	}
	render := func(w io.Writer) error { return report.EndpointsDiff(w, v, o.format) }
	if o.output == "" || o.output == "-" {
		return render(stdout)
	}
	return writeReportFile(o.output, "endpoints diff", stderr, render)
}
