package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
)

// HTTPLog is the layer of the web server's access logs (--http-log; their
// format --http-log-format, or detected from their lines as `stacktune
// http` detects it, lines longer than 1 MiB skipped and counted): the
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
	// RequestLengths are the lengths of the requests that may carry a
	// body (every method but GET and HEAD), when the log has them
	// ($request_length, Apache's %I, the labels request_length and
	// reqsize); nil when it has none.
	RequestLengths *HTTPLengths `json:"request_lengths,omitempty"`
	Skipped        int64        `json:"skipped"`
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

// HTTPLengths counts request lengths (bytes received: request line,
// headers and body) by power of two.
type HTTPLengths struct {
	Requests int64 `json:"requests"`
	Max      int64 `json:"max"`
	// Buckets[i] counts the lengths of i bits: Buckets[0] the zeros,
	// Buckets[i] those from 2^(i-1) to 2^i - 1; up to the last bucket
	// that is not empty.
	Buckets []int64 `json:"buckets"`
}

// Add counts a request of n bytes.
func (l *HTTPLengths) Add(n int64) {
	i := bits.Len64(uint64(max(n, 0)))
	for len(l.Buckets) <= i {
		l.Buckets = append(l.Buckets, 0)
	}
	l.Buckets[i]++
	l.Requests++
	l.Max = max(l.Max, n)
}

// Over is at least how many requests were longer than n bytes: those of
// the buckets that start above n (a bucket holding n is not counted).
func (l *HTTPLengths) Over(n int64) int64 {
	var sum int64
	for i, c := range l.Buckets {
		low := int64(0) // the bucket's smallest length
		if i > 0 {
			low = int64(1) << min(i-1, 62)
		}
		if low > n {
			sum += c
		}
	}
	return sum
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
	format   accesslog.Parser // nil: detected from the lines
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
		return fileMark{}, &input.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	m := fileMark{size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.dev, m.ino = uint64(st.Dev), st.Ino
	}
	return m, nil
}

// NewHTTPLog returns the collector of the access logs files, their
// format detected from their lines.
func NewHTTPLog(files []string, interval time.Duration) Collector {
	return NewHTTPLogFormat(files, interval, nil)
}

// NewHTTPLogFormat returns the collector of the access logs files written
// in format (nil: detected from their lines).
func NewHTTPLogFormat(files []string, interval time.Duration, format accesslog.Parser) Collector {
	return &httpLogCollector{files: files, interval: interval, format: format}
}

// httpLogFormatHint is what a log whose format was not detected needs.
var httpLogFormatHint = "name its format with --http-log-format (" + accesslog.NameList() + ")"

var _ Starter = (*httpLogCollector)(nil)

func (c *httpLogCollector) Name() string { return "http_log" }

func init() {
	register(Registration{
		Name:  "http_log",
		Layer: "http_log",
		Order: 70,
		Flags: []Flag{
			{Name: "http-log", Kind: FlagString, Usage: "access logs to profile over the interval (comma-separated; the lines written during it, or the last 16 MiB of a log that does not grow)"},
			{Name: "http-log-format", Kind: FlagString, Usage: "the access logs' format: auto (detected from their lines), " + accesslog.NameList()},
		},
		AskedBy: "http-log",
		New: func(cfg Config) (Collector, error) {
			var files []string
			for _, f := range strings.Split(cfg.Value("http-log"), ",") {
				if f = strings.TrimSpace(f); f != "" {
					files = append(files, f)
				}
			}
			format, err := HTTPLogFormat(cfg)
			if err != nil {
				return nil, err
			}
			return NewHTTPLogFormat(files, cfg.Duration("interval"), format), nil
		},
	})
}

// HTTPLogFormat is the access logs' format cfg names (--http-log-format),
// nil for none or "auto": detected from the lines.
func HTTPLogFormat(cfg Config) (accesslog.Parser, error) {
	v := cfg.Value("http-log-format")
	if v == "" || v == "auto" {
		return nil, nil
	}
	f, ok := accesslog.Lookup(v)
	if !ok {
		return nil, fmt.Errorf("--http-log-format %q: use auto, %s", v, accesslog.NameList())
	}
	return f.New()
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
		parser      = c.format
		sample      = accesslog.Sample{MaxLine: httpMaxLine}
		prof        = httpprof.NewProfiler(httpprof.Options{Slowest: 1})
		polls       = map[string]*pollStats{}
		first, last time.Time
	)
	if parser != nil {
		h.Format = parser.Format()
	}
	add := func(l []byte) {
		var r accesslog.Record
		if ok, _ := parser.Parse(l, &r); !ok {
			h.Skipped++
			return
		}
		prof.Add(&r)
		if r.Has&accesslog.HasRequestLength != 0 && !bytes.Equal(r.Method, []byte("GET")) && !bytes.Equal(r.Method, []byte("HEAD")) {
			if h.RequestLengths == nil {
				h.RequestLengths = &HTTPLengths{Buckets: []int64{}}
			}
			h.RequestLengths.Add(r.RequestLength)
		}
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
	// Until the format is known, the lines go to the sample, which keeps
	// those the parser will read (and they are added once it is known);
	// lines too long to read are counted as skipped either way. The
	// format nginx's configuration gives the file comes first (it may log
	// $request_length, which no detected format has).
	detect := func() error {
		p := c.configured(s, sample.Lines())
		if p == nil {
			var err error
			if p, err = sample.Detect(); err != nil {
				return fmt.Errorf("http log: %w; %s", err, httpLogFormatHint)
			}
		}
		parser, h.Format = p, p.Format()
		for _, l := range sample.Lines() {
			add(l)
		}
		return nil
	}
	long := func(n int64) {
		h.Skipped += n
		if parser == nil {
			sample.SkipLong(n)
		}
	}
	line := func(l []byte) error {
		if len(l) > httpMaxLine {
			long(1)
			return nil
		}
		l = bytes.TrimSpace(l)
		switch {
		case parser == nil:
			if sample.Add(l) {
				return detect()
			}
		case len(l) > 0:
			add(l)
		}
		return nil
	}
	for _, p := range parts {
		f, _, err := input.OpenFile(p.path)
		if err != nil {
			return fmt.Errorf("http log: %w", err)
		}
		skip := p.off > 0 && window == "tail" // the tail starts mid-line
		if parser == nil {
			// The sample numbers the lines of the part read.
			name := p.path
			if p.off > 0 {
				name = fmt.Sprintf("%s from byte %d", p.path, p.off)
				if skip {
					name += " (after its first line, cut)"
				}
			}
			sample.Begin(name)
		}
		var longBefore int64
		var failed error // detection's
		cs, err := chunk.Split(io.NewSectionReader(f, p.off, p.end-p.off), chunk.Options{MaxRecord: httpMaxLine}, chunk.LineBoundaries, func(c chunk.Chunk) error {
			defer c.Release()
			n := c.TooLargeBefore
			longBefore += n
			if skip && n > 0 {
				n-- // the cut line was too long: dropped already
				skip = false
			}
			long(n)
			chunk.Lines(c.Data, func(_ int, l []byte) {
				if skip {
					skip = false
					return
				}
				if failed == nil {
					failed = line(l)
				}
			})
			return failed
		})
		f.Close()
		if failed != nil {
			return failed
		}
		h.Bytes += cs.Bytes
		if n := cs.TooLarge - longBefore; n > 0 && skip {
			long(n - 1) // the cut line was too long
		} else {
			long(n)
		}
		if err != nil {
			h.Notes = append(h.Notes, fmt.Sprintf("%s: %v: the rest was not read", p.path, err))
		}
	}
	if parser == nil {
		if err := detect(); err != nil {
			var de *accesslog.DetectError
			if errors.As(err, &de) && de.Empty() {
				return s.SetLayer("http_log", h)
			}
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

// configured is the parser of the log_format the snapshot's nginx
// configuration names for one of the logs, when that format logs
// $request_length (which no format Detect tries has) and reads most of
// the sample; nil otherwise.
func (c *httpLogCollector) configured(s *Snapshot, sample [][]byte) accesslog.Parser {
	if s.Nginx == nil {
		return nil
	}
	for _, l := range s.Nginx.AccessLogs {
		if l.Off || !l.RequestLength || l.FormatText == "" || !filepath.IsAbs(l.Path) {
			continue
		}
		cfg, err := os.Stat(l.Path)
		if err != nil {
			continue
		}
		for _, f := range c.files {
			if fi, err := os.Stat(f); err != nil || !os.SameFile(cfg, fi) {
				continue
			}
			p, err := accesslog.NewNginx(l.Format, l.FormatText)
			if err != nil {
				return nil
			}
			var r accesslog.Record
			n := 0
			for _, line := range sample {
				if ok, _ := p.Parse(line, &r); ok {
					n++
				}
			}
			if float64(n) >= float64(len(sample))*accesslog.DetectMajority {
				return p
			}
		}
	}
	return nil
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
