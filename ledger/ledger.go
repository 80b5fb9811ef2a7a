package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/reqtrace"
)

// Endpoint sources: where an endpoint's figures come from.
const (
	SourceBench     = "bench"      // the load generator's step, as the client saw it
	SourceAccessLog = "access_log" // the access log of the run's window, as the server saw it
)

// Endpoint is one endpoint of a run. Times are seconds.
type Endpoint struct {
	Source string  `json:"source"`
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	P50    float64 `json:"p50_s"`
	P99    float64 `json:"p99_s"`
	Total  float64 `json:"total_s"`
}

// Class is one query class of a run's digest.
type Class struct {
	ID          string  `json:"id"`
	Fingerprint string  `json:"fingerprint"`
	Count       int64   `json:"count"`
	Total       float64 `json:"total_s"`
	P95         float64 `json:"p95_s"`
	RowsExam    int64   `json:"rows_examined"`
}

// Finding is one finding of the run's audit.
type Finding struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	Layer    string `json:"layer"`
}

// View is a run read back.
type View struct {
	Run history.Run `json:"run"`
	// Session is the tune or ab the run belongs to (nil: none).
	Session   *history.Session   `json:"session,omitempty"`
	Artefacts []history.Artefact `json:"artefacts"`
	Endpoints []Endpoint         `json:"endpoints"`
	Classes   []Class            `json:"classes"`
	// Requests is the per-request SQL (nil without it).
	Requests *reqtrace.Report `json:"requests,omitempty"`
	Findings []Finding        `json:"findings"`
	// Functions and Flame are the profile's (empty without one).
	Functions []Function `json:"functions"`
	Flame     *Frame     `json:"flame,omitempty"`
	// CollectorErrors are the collectors that failed or saw part of
	// their layer in the run's snapshot, and the hosts of --hosts that
	// gave none.
	CollectorErrors []string `json:"collector_errors"`
	// Hosts are the hosts collected over the run (--hosts), by role then
	// name.
	Hosts []Host `json:"hosts"`
	// Problems are the artefacts that could not be read (kind: error).
	Problems []string `json:"problems"`
}

// Load reads run id and its artefacts.
func Load(ctx context.Context, s *history.Store, id int64) (*View, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &View{Run: *r, Endpoints: []Endpoint{}, Classes: []Class{}, Findings: []Finding{}, Functions: []Function{},
		CollectorErrors: []string{}, Hosts: []Host{}, Problems: []string{}}
	if r.Session != 0 {
		if v.Session, err = s.GetSession(ctx, r.Session); err != nil && !errors.Is(err, history.ErrNotFound) {
			return nil, err
		}
	}
	v.benchEndpoints()
	if v.Artefacts, err = s.ArtefactKinds(ctx, id); err != nil {
		return nil, err
	}
	for _, a := range v.Artefacts {
		if a.TooLarge {
			continue
		}
		full, err := s.Artefact(ctx, id, a.Kind)
		if err == nil {
			err = v.decode(full)
		}
		if err != nil {
			v.Problems = append(v.Problems, a.Kind+": "+err.Error())
		}
	}
	sort.SliceStable(v.Endpoints, func(i, j int) bool {
		if v.Endpoints[i].Source != v.Endpoints[j].Source {
			return v.Endpoints[i].Source == SourceBench
		}
		return v.Endpoints[i].Total > v.Endpoints[j].Total
	})
	return v, nil
}

// benchEndpoints are the bench's steps from the run's details.
func (v *View) benchEndpoints() {
	if len(v.Run.Details) == 0 {
		return
	}
	var rr benchrun.RunResult
	if json.Unmarshal(v.Run.Details, &rr) != nil {
		return // a TPC-C run's details, or another shape: no steps
	}
	for _, st := range rr.Steps {
		v.Endpoints = append(v.Endpoints, Endpoint{Source: SourceBench, Name: st.Name, Count: st.Requests, Errors: st.Errors,
			P50: st.LatencyMS.P50 / 1000, P99: st.LatencyMS.P99 / 1000, Total: st.LatencyMS.Mean / 1000 * float64(st.Requests)})
	}
}

func (v *View) decode(a history.Artefact) error {
	switch a.Kind {
	case history.ArtefactHTTP:
		var rep httpprof.Report
		if err := json.Unmarshal(a.Data, &rep); err != nil {
			return err
		}
		for _, e := range rep.Endpoints {
			v.Endpoints = append(v.Endpoints, Endpoint{Source: SourceAccessLog, Name: e.Method + " " + e.Path, Count: e.Count,
				Errors: e.Status.S5xx, P50: e.TimeP50, P99: e.TimeP99, Total: e.TimeTotal})
		}
	case history.ArtefactDigest:
		var rep digest.Report
		if err := json.Unmarshal(a.Data, &rep); err != nil {
			return err
		}
		for _, c := range rep.Classes {
			cl := Class{ID: c.ID, Fingerprint: c.Fingerprint, Count: c.Count, Total: c.TimeTotal, RowsExam: c.RowsExaminedTotal}
			if c.TimeP95 != nil {
				cl.P95 = *c.TimeP95
			}
			v.Classes = append(v.Classes, cl)
		}
	case history.ArtefactRequests:
		var rep reqtrace.Report
		if err := json.Unmarshal(a.Data, &rep); err != nil {
			return err
		}
		v.Requests = &rep
	case history.ArtefactFindings:
		var res advise.Result
		if err := json.Unmarshal(a.Data, &res); err != nil {
			return err
		}
		for _, f := range res.Findings {
			v.Findings = append(v.Findings, Finding{ID: f.ID, Title: f.Title, Severity: string(f.Severity), Layer: f.Layer})
		}
	case history.ArtefactSnapshot:
		var snap struct {
			Errors []struct {
				Collector string `json:"collector"`
				Error     string `json:"error"`
			} `json:"collector_errors"`
		}
		if err := json.Unmarshal(a.Data, &snap); err != nil {
			return err
		}
		for _, e := range snap.Errors {
			v.CollectorErrors = append(v.CollectorErrors, e.Collector+": "+e.Error)
		}
	case history.ArtefactFleet:
		var fs fleet.Snapshot
		if err := json.Unmarshal(a.Data, &fs); err != nil {
			return err
		}
		for _, h := range fs.Hosts {
			host := Host{Name: h.Name, Role: h.Role, Stage: string(h.Stage), Error: h.Error, CollectorErrors: []string{}, Layers: []string{}}
			if h.Snapshot != nil {
				host.OK = true
				for _, e := range h.Snapshot.Errors {
					host.CollectorErrors = append(host.CollectorErrors, e.Collector+": "+e.Error)
				}
				seen := map[string]bool{}
				for _, reg := range collect.Registered() {
					if !seen[reg.Layer] && h.Snapshot.Has(reg.Layer) {
						seen[reg.Layer] = true
						host.Layers = append(host.Layers, reg.Layer)
					}
				}
				sort.Strings(host.Layers)
			} else {
				v.CollectorErrors = append(v.CollectorErrors, "host "+h.Name+": "+string(h.Stage)+": "+h.Error)
			}
			v.Hosts = append(v.Hosts, host)
		}
		sort.SliceStable(v.Hosts, func(i, j int) bool {
			if v.Hosts[i].Role != v.Hosts[j].Role {
				return v.Hosts[i].Role < v.Hosts[j].Role
			}
			return v.Hosts[i].Name < v.Hosts[j].Name
		})
	case history.ArtefactProfile:
		fns, root, err := Folded(a.Data)
		if err != nil {
			return err
		}
		v.Functions, v.Flame = fns, root
	}
	return nil
}

// Host is one host collected over the run.
type Host struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// OK says the host answered with a snapshot; else Stage and Error
	// say where it failed.
	OK              bool     `json:"ok"`
	Stage           string   `json:"stage,omitempty"`
	Error           string   `json:"error,omitempty"`
	Layers          []string `json:"layers"`
	CollectorErrors []string `json:"collector_errors"`
}

// Function is one function of a profile: samples where it runs itself
// (Self) and anywhere on the stack (Total).
type Function struct {
	Name  string `json:"name"`
	Self  int64  `json:"self"`
	Total int64  `json:"total"`
}

// Frame is a node of the flame graph: a function under its callers, with
// the samples of its subtree.
type Frame struct {
	Name     string   `json:"name"`
	Value    int64    `json:"value"`
	Children []*Frame `json:"children,omitempty"`
}

// Folded limits: lines read, frames kept in the flame graph.
const (
	maxFoldedLines = 200000
	maxFrames      = 20000
)

// Folded reads folded stacks ("root;caller;callee count" lines, as
// Brendan Gregg's stackcollapse scripts and pprof -raw folded write them)
// into functions (by total samples, then name) and a flame graph. Bad
// lines are skipped and counted in the error only when nothing was read.
func Folded(data []byte) ([]Function, *Frame, error) {
	root := &Frame{Name: "all"}
	fns := map[string]*Function{}
	frames, bad := 1, 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 0; sc.Scan() && n < maxFoldedLines; n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			bad++
			continue
		}
		count, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || count <= 0 {
			bad++
			continue
		}
		stack := strings.Split(line[:i], ";")
		root.Value += count
		node, seen := root, map[string]bool{}
		for j, name := range stack {
			f := fns[name]
			if f == nil {
				f = &Function{Name: name}
				fns[name] = f
			}
			if !seen[name] { // recursion counts once
				f.Total += count
				seen[name] = true
			}
			if j == len(stack)-1 {
				f.Self += count
			}
			var child *Frame
			for _, c := range node.Children {
				if c.Name == name {
					child = c
					break
				}
			}
			if child == nil {
				if frames >= maxFrames {
					break
				}
				frames++
				child = &Frame{Name: name}
				node.Children = append(node.Children, child)
			}
			child.Value += count
			node = child
		}
	}
	if root.Value == 0 {
		return []Function{}, nil, fmt.Errorf("no folded stacks (%d bad lines)", bad)
	}
	out := make([]Function, 0, len(fns))
	for _, f := range fns {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Name < out[j].Name
	})
	return out, root, nil
}
