package diagnose

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/nginxconf"
)

// nameTheFormat is what an access log whose format was not detected
// needs.
var nameTheFormat = "name its format with --http-log-format (" + accesslog.NameList() +
	"), or give --nginx-conf with the access_log that writes it"

// accessLog is one access log read for the run's window: its path, its
// parser (nil: detected from its lines) and its size when the run started.
type accessLog struct {
	path   string
	parser accesslog.Parser
	start  int64
}

// nginxAccessLogs are the access logs an nginx configuration writes, each
// with its log_format: every access_log directive of the http context and
// the blocks in it, "off" and syslog left out, one entry per file.
func nginxAccessLogs(confPath string) ([]accessLog, []string, error) {
	c, err := nginxconf.Load(confPath)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the access logs from %s: %w", confPath, err)
	}
	var http *nginxconf.Directive
	for _, d := range c.Directives() {
		if d.Name() == "http" && d.IsBlock() {
			http = d
			break
		}
	}
	if http == nil {
		return nil, nil, nil
	}
	var logs []accessLog
	var notes []string
	seen := map[string]bool{}
	found := false
	for _, d := range c.Directives() {
		if d.Name() != "access_log" || !d.Within(http) || len(d.Args()) == 0 {
			continue
		}
		found = true
		args := d.Args()
		path := args[0]
		switch {
		case path == "off":
			continue
		case strings.HasPrefix(path, "syslog:"):
			notes = append(notes, fmt.Sprintf("%s:%d: access_log to syslog is not read", d.File(), d.Line()))
			continue
		case strings.Contains(path, "$"):
			notes = append(notes, fmt.Sprintf("%s:%d: access_log %s has variables in its path: give the files with --access-log", d.File(), d.Line(), path))
			continue
		case !filepath.IsAbs(path):
			notes = append(notes, fmt.Sprintf("%s:%d: access_log %s is relative to nginx's prefix: give its full path with --access-log", d.File(), d.Line(), path))
			continue
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		a, _ := nginxconf.ParseAccessLog(args)
		name := a.Format
		text, err := c.LogFormat(name)
		if err != nil {
			return nil, notes, err
		}
		p, err := accesslog.NewNginx(name, text)
		if err != nil {
			return nil, notes, fmt.Errorf("%s:%d: log_format %s: %w", d.File(), d.Line(), name, err)
		}
		logs = append(logs, accessLog{path: path, parser: p})
	}
	if !found {
		// nginx's own default, logs/access.log under its prefix in the
		// combined format: its place depends on how nginx was built.
		notes = append(notes, confPath+" sets no access_log: nginx writes its default log (logs/access.log under its prefix); give it with --access-log")
	}
	return logs, notes, nil
}

// resolveAccessLogs decides which access logs to read: the given files
// (with the given parser, or the format the nginx configuration gives the
// same file), or else the configuration's.
func resolveAccessLogs(given []string, format accesslog.Parser, confPath string) ([]accessLog, []string, error) {
	var fromConf []accessLog
	var notes []string
	if confPath != "" {
		var err error
		if fromConf, notes, err = nginxAccessLogs(confPath); err != nil {
			// The snapshot's nginx collector says what is wrong with
			// the configuration; the run goes on without its logs.
			notes = append(notes, err.Error())
		}
	}
	if len(given) == 0 {
		return fromConf, notes, nil
	}
	logs := []accessLog{}
	for _, p := range given {
		l := accessLog{path: p, parser: format}
		if l.parser == nil {
			for _, c := range fromConf {
				if sameFile(c.path, p) {
					l.parser = c.parser
				}
			}
		}
		logs = append(logs, l)
	}
	return logs, notes, nil
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// window is the run's time window and the steps the attribution cuts it
// into.
type window struct {
	since, until time.Time
	step         time.Duration
	n            int
}

// newWindow covers [started, ended] in whole steps from started's step.
func newWindow(started, ended time.Time, step time.Duration) window {
	since := started.Truncate(step)
	until := ended.Truncate(step).Add(step)
	return window{since: since, until: until, step: step, n: int(until.Sub(since) / step)}
}

// index is the step holding t, -1 outside the window.
func (w window) index(t time.Time) int {
	if t.Before(w.since) || !t.Before(w.until) {
		return -1
	}
	return int(t.Sub(w.since) / w.step)
}

// sectionOf opens the part of a log written since its size at the run's
// start: from start to its end now (from its beginning when it is
// smaller than that, rotated during the run).
func sectionOf(path string, start int64) (*os.File, *io.SectionReader, bool, error) {
	f, st, err := input.OpenFile(path)
	if err != nil {
		return nil, nil, false, err
	}
	rotated := st.Size() < start
	if rotated {
		start = 0
	}
	return f, io.NewSectionReader(f, start, st.Size()-start), rotated, nil
}

// requestSeries counts each endpoint's requests per step of the window.
type requestSeries struct {
	counts map[string][]float64 // "METHOD path" → requests per step
}

// profileWindow profiles the lines of the access logs written during the
// window (the part of each file after its size at the start, and only
// lines whose time falls in the window), and counts each endpoint's
// requests per step with the same grouping; seed are positions known to
// be values (the scenario's paths), grouped from the start.
func profileWindow(ctx context.Context, logs []accessLog, w window, started, ended time.Time, seed []string) (*httpprof.Report, *requestSeries, []string, error) {
	var notes []string
	popt := httpprof.Options{Since: started.Truncate(time.Second), Until: ended.Truncate(time.Second).Add(time.Second), Values: seed}
	var merged *httpprof.Result
	var parser accesslog.Parser
	var names []string
	var used []accessLog
	for _, l := range logs {
		f, sec, rotated, err := sectionOf(l.path, l.start)
		if err != nil {
			notes = append(notes, fmt.Sprintf("access log %s: %v", l.path, err))
			continue
		}
		if rotated {
			notes = append(notes, fmt.Sprintf("access log %s is smaller than at the start of the run (rotated?): read whole, its lines of the run's window kept", l.path))
		}
		// A nil parser is detected from the lines written during the
		// run, numbered from the run's start.
		in := input.Input{Name: l.path, R: sec}
		if !rotated && l.start > 0 {
			in.Name = fmt.Sprintf("%s from byte %d", l.path, l.start)
		}
		res, err := httpprof.FromLogs(ctx, []input.Input{in}, l.parser, httpprof.LogOptions{Profile: popt})
		f.Close()
		var de *accesslog.DetectError
		switch {
		case res == nil && errors.As(err, &de) && de.Empty(): // nothing written during the run
			continue
		case res == nil && errors.As(err, &de):
			notes = append(notes, fmt.Sprintf("access log %s: %v; %s", l.path, err, nameTheFormat))
			continue
		case err != nil:
			return nil, nil, notes, fmt.Errorf("reading the access log %s: %w", l.path, err)
		}
		p := res.Parser
		if merged == nil {
			merged, parser = res, p
		} else {
			merged.Profiler.Merge(res.Profiler)
			merged.Bytes += res.Bytes
			merged.Skipped.Merge(res.Skipped)
		}
		names = append(names, l.path)
		l.parser = p
		used = append(used, l)
	}
	if merged == nil {
		return nil, nil, notes, nil
	}
	rep, err := merged.Report(parser, httpprof.ReportOptions{Sort: "total"})
	if err != nil {
		return nil, nil, notes, err
	}
	rep.Overall.Inputs = names
	series, err := countRequests(ctx, used, w, rep.LearnedPatterns())
	if err != nil {
		return rep, nil, notes, err
	}
	return rep, series, notes, nil
}

// countRequests reads the logs' window once more, feeding each step's
// requests to a profiler of its own seeded with the whole profile's
// learned groups, so the steps' endpoints are the profile's.
func countRequests(ctx context.Context, logs []accessLog, w window, learned []string) (*requestSeries, error) {
	profs := make([]*httpprof.Profiler, w.n)
	for i := range profs {
		profs[i] = httpprof.NewProfiler(httpprof.Options{Collapse: learned, Slowest: 1})
	}
	for _, l := range logs {
		if err := eachRecord(ctx, l, func(r *accesslog.Record) {
			if r.Has&accesslog.HasTime == 0 {
				return
			}
			if i := w.index(r.Time); i >= 0 {
				profs[i].Add(r)
			}
		}); err != nil {
			return nil, err
		}
	}
	s := &requestSeries{counts: map[string][]float64{}}
	for i, p := range profs {
		rep, err := p.Report(httpprof.ReportOptions{})
		if err != nil {
			return nil, err
		}
		for _, e := range rep.Endpoints {
			k := endpointKey(e.Method, e.Path)
			if s.counts[k] == nil {
				s.counts[k] = make([]float64, w.n)
			}
			s.counts[k][i] += float64(e.Count)
		}
	}
	return s, nil
}

func endpointKey(method, path string) string { return strings.TrimSpace(method + " " + path) }

// maxLine is the longest access-log line read (httpprof's bound).
const maxLine = httpprof.MaxLineBytes

// eachRecord parses the log's lines written since the run's start.
func eachRecord(ctx context.Context, l accessLog, fn func(*accesslog.Record)) error {
	f, sec, _, err := sectionOf(l.path, l.start)
	if err != nil {
		return err
	}
	defer f.Close()
	p := l.parser.Clone()
	br := bufio.NewReaderSize(sec, 64<<10)
	var rec accesslog.Record
	var long []byte
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if len(long) <= maxLine {
					long = append(long, line...)
				}
			}
			line = long
		}
		if len(line) > 0 && len(line) <= maxLine {
			line = bytes.TrimRight(line, "\r\n")
			if ok, _ := p.Parse(line, &rec); ok {
				fn(&rec)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
