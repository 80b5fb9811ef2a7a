package collect

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/httpprof"
)

// HTTPLog is the layer of the web server's access logs (--http-log): the
// requests logged during the collection interval, profiled as `stacktune
// http` does (endpoints grouped, time per endpoint, upstream time where
// logged, static and dynamic shares), and the clients that poll one URL
// at a fixed pace (load balancers' health checks). The collector notes
// each log's size when the run starts and reads what was appended by its
// end; a log that did not grow (or was rotated) is read from its last
// 16 MiB instead, and Window says which.
type HTTPLog struct {
	Files  []string `json:"files"`
	Format string   `json:"format"`
	// Window is "interval" (the lines written during the run) or "tail"
	// (the log did not grow: its last lines); Bytes were read.
	Window string `json:"window"`
	Bytes  int64  `json:"bytes"`
	// Seconds is the time the requests read span (first to last).
	Seconds   float64 `json:"seconds"`
	Requests  int64   `json:"requests"`
	Timed     int64   `json:"timed"`
	TimeTotal float64 `json:"time_total_s"`
	// Upstream counts the requests that logged an upstream time, with the
	// sum of those times (UpstreamTotal) and of their request times
	// (UpstreamRequestTotal): the difference is the time nginx itself
	// added to proxied requests.
	Upstream             int64   `json:"upstream"`
	UpstreamTotal        float64 `json:"upstream_total_s"`
	UpstreamRequestTotal float64 `json:"upstream_request_total_s"`
	// StaticRequests and StaticTime are the requests for static files
	// (by extension, as `stacktune http` tells them).
	StaticRequests int64          `json:"static_requests"`
	StaticTime     float64        `json:"static_time_s"`
	Endpoints      []HTTPEndpoint `json:"endpoints"`
	Pollers        []HTTPPoller   `json:"pollers"`
	Skipped        int64          `json:"skipped"`
	// Notes say what limits the reading (a log cut at the limit).
	Notes []string `json:"notes,omitempty"`
}

// HTTPEndpoint is one endpoint of the profile (the 30 with the most time).
type HTTPEndpoint struct {
	Method        string  `json:"method"`
	Path          string  `json:"path"`
	Count         int64   `json:"count"`
	TimeTotal     float64 `json:"time_total_s"`
	Upstream      int64   `json:"upstream"`
	UpstreamTotal float64 `json:"upstream_total_s"`
	Static        bool    `json:"static"`
}

// HTTPPoller is one client asking one URL at a steady pace: at least
// pollMin requests whose gaps vary by at most pollCV of their mean.
type HTTPPoller struct {
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Client    string  `json:"client"`
	UserAgent string  `json:"user_agent"`
	Count     int64   `json:"count"`
	TimeTotal float64 `json:"time_total_s"`
	// Every is the mean gap between its requests, in seconds; Spread the
	// gaps' standard deviation over their mean.
	Every  float64 `json:"every_s"`
	Spread float64 `json:"spread"`
}

// Bounds of the HTTP log collector.
const (
	httpLogMaxBytes = 64 << 20 // read at most this much of the interval
	httpLogTail     = 16 << 20 // a log that did not grow: its last bytes
	httpMaxLine     = 1 << 20
	pollKeys        = 4096 // client × URL pairs followed
	pollMin         = 5
	pollCV          = 0.25
	httpEndpoints   = 30
	httpPollers     = 20
)

type httpLogCollector struct {
	files    []string
	interval time.Duration
	start    map[string]fileMark
	startAt  time.Time
}

// fileMark is a log's identity and size when the run started.
type fileMark struct {
	dev, ino uint64
	size     int64
}

func markOf(path string) (fileMark, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileMark{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileMark{}, fmt.Errorf("%s is not a regular file", path)
	}
	m := fileMark{size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.dev, m.ino = uint64(st.Dev), st.Ino
	}
	return m, nil
}

// NewHTTPLog returns the collector of the access logs files.
func NewHTTPLog(files []string, interval time.Duration) Collector {
	return &httpLogCollector{files: files, interval: interval}
}

var _ Starter = (*httpLogCollector)(nil)

func (c *httpLogCollector) Name() string { return "http_log" }

func init() {
	register(Registration{
		Name:  "http_log",
		Layer: "http_log",
		Order: 70,
		Flags: []Flag{
			{Name: "http-log", Kind: FlagString, Usage: "access logs to profile over the interval (comma-separated; the lines written during it, or the last 16 MiB of a log that does not grow)"},
		},
		AskedBy: "http-log",
		New: func(cfg Config) (Collector, error) {
			var files []string
			for _, f := range strings.Split(cfg.Value("http-log"), ",") {
				if f = strings.TrimSpace(f); f != "" {
					files = append(files, f)
				}
			}
			return NewHTTPLog(files, cfg.Duration("interval")), nil
		},
	})
}

// Start notes each log's size.
func (c *httpLogCollector) Start(context.Context) error {
	c.start, c.startAt = map[string]fileMark{}, time.Now()
	for _, f := range c.files {
		if m, err := markOf(f); err == nil {
			c.start[f] = m
		}
	}
	return nil
}

// Collect reads what the logs gained since Start (or their tails) and
// profiles it.
func (c *httpLogCollector) Collect(ctx context.Context, s *Snapshot) error {
	if c.start != nil {
		if err := waitSince(ctx, c.startAt, c.interval); err != nil {
			return fmt.Errorf("http log: %w", err)
		}
	}
	type part struct {
		path     string
		off, end int64
	}
	var parts []part
	window := "interval"
	var notes []string
	for _, f := range c.files {
		now, err := markOf(f)
		if err != nil {
			return fmt.Errorf("http log: %w", err)
		}
		was, ok := c.start[f]
		switch {
		case ok && was.dev == now.dev && was.ino == now.ino && now.size > was.size:
			off := was.size
			if now.size-off > httpLogMaxBytes {
				off = now.size - httpLogMaxBytes
				notes = append(notes, fmt.Sprintf("%s: more than %d MiB written during the interval: its last %d MiB were read", f, httpLogMaxBytes>>20, httpLogMaxBytes>>20))
			}
			parts = append(parts, part{f, off, now.size})
		default:
			window = "tail"
			parts = append(parts, part{f, max(0, now.size-httpLogTail), now.size})
		}
	}
	if window == "tail" {
		notes = append(notes, fmt.Sprintf("a log did not grow during the interval (or was rotated): the last %d MiB of each log were read, not the interval", httpLogTail>>20))
	}
	h := &HTTPLog{Files: c.files, Window: window, Endpoints: []HTTPEndpoint{}, Pollers: []HTTPPoller{}, Notes: notes}
	var (
		parser      accesslog.Parser
		sample      [][]byte
		prof        = httpprof.NewProfiler(httpprof.Options{Slowest: 1})
		polls       = map[string]*pollStats{}
		first, last time.Time
	)
	add := func(l []byte) {
		var r accesslog.Record
		if ok, _ := parser.Parse(l, &r); !ok {
			h.Skipped++
			return
		}
		prof.Add(&r)
		if r.Has&accesslog.HasUpstreamTime != 0 {
			h.Upstream++
			h.UpstreamTotal += r.UpstreamTime
			h.UpstreamRequestTotal += r.RequestTime
		}
		if r.Has&accesslog.HasTime != 0 {
			if first.IsZero() || r.Time.Before(first) {
				first = r.Time
			}
			if r.Time.After(last) {
				last = r.Time
			}
			trackPoll(polls, &r)
		}
	}
	var detect func() error
	line := func(l []byte) error {
		if parser != nil {
			add(l)
			return nil
		}
		sample = append(sample, append([]byte(nil), l...))
		if len(sample) < 20 {
			return nil
		}
		return detect()
	}
	detect = func() error {
		p, err := accesslog.Detect(sample)
		if err != nil {
			return fmt.Errorf("http log: %w", err)
		}
		parser, h.Format = p, p.Format()
		for _, l := range sample {
			add(l)
		}
		return nil
	}
	for _, p := range parts {
		f, err := os.Open(p.path)
		if err != nil {
			return fmt.Errorf("http log: %w", err)
		}
		sc := bufio.NewScanner(io.NewSectionReader(f, p.off, p.end-p.off))
		sc.Buffer(make([]byte, 0, 64<<10), httpMaxLine)
		skip := p.off > 0 && window == "tail" // the tail starts mid-line
		for sc.Scan() {
			h.Bytes += int64(len(sc.Bytes())) + 1
			if skip {
				skip = false
				continue
			}
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				if err := line(l); err != nil {
					f.Close()
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			h.Notes = append(h.Notes, fmt.Sprintf("%s: %v: the rest was not read", p.path, err))
		}
		f.Close()
	}
	if parser == nil {
		if len(sample) == 0 {
			return s.SetLayer("http_log", h)
		}
		if err := detect(); err != nil {
			return err
		}
	}
	rep, err := prof.Report(httpprof.ReportOptions{Sort: "total", Limit: httpEndpoints})
	if err != nil {
		return fmt.Errorf("http log: %w", err)
	}
	o := rep.Overall
	h.Requests, h.Timed, h.TimeTotal = o.Requests, o.Timed, o.TimeTotal
	h.StaticRequests, h.StaticTime = o.Static.Requests, o.Static.TimeTotal
	if !first.IsZero() {
		h.Seconds = last.Sub(first).Seconds()
	}
	for _, e := range rep.Endpoints {
		he := HTTPEndpoint{Method: e.Method, Path: e.Path, Count: e.Count, TimeTotal: e.TimeTotal, Static: e.Static}
		if e.Upstream != nil {
			he.Upstream, he.UpstreamTotal = e.Upstream.Count, e.Upstream.Total
		}
		h.Endpoints = append(h.Endpoints, he)
	}
	h.Pollers = pollers(polls)
	return s.SetLayer("http_log", h)
}

// pollStats follows one client asking one URL: count, time, and the gaps
// between its requests (Welford's running mean and variance).
type pollStats struct {
	method, path, client, agent string
	count                       int64
	time                        float64
	last                        time.Time
	gaps                        int64
	mean, m2                    float64
}

func trackPoll(m map[string]*pollStats, r *accesslog.Record) {
	path, _, _ := bytes.Cut(r.URI, []byte("?"))
	key := string(r.Method) + " " + string(path) + "\x00" + string(r.Client) + "\x00" + string(r.UserAgent)
	p := m[key]
	if p == nil {
		if len(m) >= pollKeys {
			return
		}
		p = &pollStats{method: string(r.Method), path: string(path), client: string(r.Client), agent: string(r.UserAgent)}
		m[key] = p
	}
	p.count++
	p.time += r.RequestTime
	if !p.last.IsZero() && !r.Time.Before(p.last) {
		g := r.Time.Sub(p.last).Seconds()
		p.gaps++
		d := g - p.mean
		p.mean += d / float64(p.gaps)
		p.m2 += d * (g - p.mean)
	}
	p.last = r.Time
}

// pollers are the steady ones, by time spent, at most httpPollers.
func pollers(m map[string]*pollStats) []HTTPPoller {
	out := []HTTPPoller{}
	for _, p := range m {
		if p.count < pollMin || p.gaps < pollMin-1 || p.mean < 1 {
			continue
		}
		cv := math.Sqrt(p.m2/float64(p.gaps)) / p.mean
		if cv > pollCV {
			continue
		}
		out = append(out, HTTPPoller{Method: p.method, Path: p.path, Client: p.client, UserAgent: p.agent, Count: p.count, TimeTotal: p.time, Every: p.mean, Spread: cv})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TimeTotal != out[j].TimeTotal {
			return out[i].TimeTotal > out[j].TimeTotal
		}
		return out[i].Path+out[i].Client < out[j].Path+out[j].Client
	})
	if len(out) > httpPollers {
		out = out[:httpPollers]
	}
	return out
}
