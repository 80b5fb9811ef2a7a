package guildboardtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/fingerprint"
)

// Bounds of what the readers accept.
const (
	MaxLogBytes  = 256 << 20 // a request log
	maxLineBytes = 1 << 20   // one of its lines
	maxHeader    = 64 << 10  // X-App-Queries
	maxStmts     = 1000      // statement ids in one request
)

// Request is one request as the app measured it.
type Request struct {
	Start   float64          `json:"start"` // unix seconds
	End     float64          `json:"end"`
	PID     int              `json:"pid"` // the PHP-FPM worker
	Method  string           `json:"method"`
	Route   string           `json:"route"` // "GET /guilds/{id}/board"
	Path    string           `json:"path"`
	Status  int              `json:"status"`
	WallMs  float64          `json:"wall_ms"`
	CPUMs   float64          `json:"cpu_ms"` // getrusage user+sys
	DBMs    float64          `json:"db_ms"`  // wall time inside DB calls
	Queries map[string]Query `json:"queries"`
}

// Query is one statement's calls in a request.
type Query struct {
	SQL   string  `json:"sql"` // the app's text, ? for each value
	Calls int     `json:"calls"`
	Ms    float64 `json:"ms"`
}

// ReadRequests reads the app's request log: one JSON object per line,
// every field known and in range. An error names the file and line; the
// log is bounded (MaxLogBytes, a megabyte a line).
func ReadRequests(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("guildboard: request log: %w", err)
	}
	defer f.Close()
	reqs, err := parseRequests(io.LimitReader(f, MaxLogBytes+1))
	if err != nil {
		return reqs, fmt.Errorf("guildboard: request log %s%w", path, err)
	}
	return reqs, nil
}

// parseRequests reads request lines from r; an error starts with
// ":LINE: " (or ": " for the whole input).
func parseRequests(r io.Reader) ([]Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	var reqs []Request
	var read int64
	line := 0
	for sc.Scan() {
		line++
		read += int64(len(sc.Bytes())) + 1
		if read > MaxLogBytes {
			return reqs, fmt.Errorf(": over %d bytes", MaxLogBytes)
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q Request
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return reqs, fmt.Errorf(":%d: %w", line, err)
		}
		if dec.More() {
			return reqs, fmt.Errorf(":%d: more than one JSON value", line)
		}
		if err := q.check(); err != nil {
			return reqs, fmt.Errorf(":%d: %w", line, err)
		}
		reqs = append(reqs, q)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return reqs, fmt.Errorf(":%d: a line over %d bytes", line+1, maxLineBytes)
		}
		return reqs, fmt.Errorf(": %w", err)
	}
	return reqs, nil
}

// check says what is wrong with a logged request.
func (q *Request) check() error {
	switch {
	case q.Route == "" || q.Method == "":
		return errors.New("no method or route")
	case q.Status < 100 || q.Status > 599:
		return fmt.Errorf("status %d", q.Status)
	case !finite(q.Start, q.End, q.WallMs, q.CPUMs, q.DBMs) || q.WallMs < 0 || q.CPUMs < 0 || q.DBMs < 0 || q.End < q.Start:
		return fmt.Errorf("times start %v end %v wall %v cpu %v db %v", q.Start, q.End, q.WallMs, q.CPUMs, q.DBMs)
	case len(q.Queries) > maxStmts:
		return fmt.Errorf("%d statements", len(q.Queries))
	}
	for id, s := range q.Queries {
		if id == "" || s.SQL == "" || s.Calls < 1 || !finite(s.Ms) || s.Ms < 0 {
			return fmt.Errorf("statement %q: %+v", id, s)
		}
	}
	return nil
}

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// Measure is what one response's headers say.
type Measure struct {
	Calls  map[string]int // X-App-Queries: calls per statement id
	DBMs   float64        // X-App-DB-Ms
	CPUMs  float64        // X-App-CPU-Ms
	WallMs float64        // X-App-Wall-Ms
}

// FromHeaders reads the app's measurement headers of one response.
func FromHeaders(h http.Header) (Measure, error) {
	m := Measure{Calls: map[string]int{}}
	for _, f := range []struct {
		name string
		to   *float64
	}{{"X-App-DB-Ms", &m.DBMs}, {"X-App-CPU-Ms", &m.CPUMs}, {"X-App-Wall-Ms", &m.WallMs}} {
		v, err := strconv.ParseFloat(h.Get(f.name), 64)
		if err != nil || v < 0 || !finite(v) {
			return m, fmt.Errorf("guildboard: header %s: %q", f.name, h.Get(f.name))
		}
		*f.to = v
	}
	qs := h.Get("X-App-Queries")
	if len(qs) > maxHeader {
		return m, fmt.Errorf("guildboard: header X-App-Queries: %d bytes", len(qs))
	}
	if qs == "" {
		return m, nil
	}
	for _, part := range strings.Split(qs, ",") {
		id, n, ok := strings.Cut(part, "=")
		calls, err := strconv.Atoi(n)
		if !ok || id == "" || err != nil || calls < 1 {
			return m, fmt.Errorf("guildboard: header X-App-Queries: %q in %q", part, qs)
		}
		if _, dup := m.Calls[id]; dup {
			return m, fmt.Errorf("guildboard: header X-App-Queries: %s twice in %q", id, qs)
		}
		m.Calls[id] = calls
	}
	return m, nil
}

// Endpoint is the requests of one route.
type Endpoint struct {
	Route    string
	Requests int
	Errors   int            // status 400 and above
	Calls    map[string]int // statement id -> calls in all the route's requests
	SQL      map[string]string
	CPUMs    float64 // sums over the requests
	DBMs     float64
	WallMs   float64
}

// PerRequest returns statement id's calls per request.
func (e *Endpoint) PerRequest(id string) float64 {
	if e.Requests == 0 {
		return 0
	}
	return float64(e.Calls[id]) / float64(e.Requests)
}

// MeanCPUMs returns the mean CPU time of a request.
func (e *Endpoint) MeanCPUMs() float64 { return e.mean(e.CPUMs) }

// MeanDBMs returns the mean DB time of a request.
func (e *Endpoint) MeanDBMs() float64 { return e.mean(e.DBMs) }

// MeanWallMs returns the mean wall time of a request in PHP.
func (e *Endpoint) MeanWallMs() float64 { return e.mean(e.WallMs) }

func (e *Endpoint) mean(sum float64) float64 {
	if e.Requests == 0 {
		return 0
	}
	return sum / float64(e.Requests)
}

// Fingerprint returns the fingerprint (package fingerprint) of statement
// id's text, "" for an id the route did not run.
func (e *Endpoint) Fingerprint(id string) string {
	if s, ok := e.SQL[id]; ok {
		return fingerprint.Fingerprint(s)
	}
	return ""
}

// Statements returns the ids of the route's statements, sorted.
func (e *Endpoint) Statements() []string {
	ids := make([]string, 0, len(e.Calls))
	for id := range e.Calls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Summarize groups requests by route.
func Summarize(reqs []Request) map[string]*Endpoint {
	out := map[string]*Endpoint{}
	for _, q := range reqs {
		e := out[q.Route]
		if e == nil {
			e = &Endpoint{Route: q.Route, Calls: map[string]int{}, SQL: map[string]string{}}
			out[q.Route] = e
		}
		e.Requests++
		if q.Status >= 400 {
			e.Errors++
		}
		e.CPUMs += q.CPUMs
		e.DBMs += q.DBMs
		e.WallMs += q.WallMs
		for id, s := range q.Queries {
			e.Calls[id] += s.Calls
			e.SQL[id] = s.SQL
		}
	}
	return out
}
