package engines

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/scenario"
)

// ExportOptions shape the exported load: the model, its size and bounds.
type ExportOptions struct {
	// Users is the number of virtual users: Locust's -u, k6's VUs
	// (default loadgen.DefaultConnections).
	Users int
	// Rate, when above 0, is the open model: this many requests per
	// second in all (k6 constant-arrival-rate; Locust paces each of Users
	// at Rate/Users with constant_throughput). 0 is the closed model:
	// Users back to back (k6 constant-vus), with each step's think time.
	Rate float64
	// Duration is the run's length (default 60s).
	Duration time.Duration
	// Timeout bounds each request (default loadgen.DefaultTimeout).
	Timeout time.Duration
	// BaseURL overrides the scenario's base_url.
	BaseURL string
}

func (o ExportOptions) withDefaults() (ExportOptions, error) {
	if o.Users == 0 {
		o.Users = loadgen.DefaultConnections
	}
	if o.Duration == 0 {
		o.Duration = 60 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = loadgen.DefaultTimeout
	}
	switch {
	case o.Users < 1 || o.Users > loadgen.MaxConnections:
		return o, fmt.Errorf("users %d: between 1 and %d", o.Users, loadgen.MaxConnections)
	case o.Rate < 0 || o.Rate > 1e7:
		return o, fmt.Errorf("rate %v: between 0 (closed model) and 10000000 requests per second", o.Rate)
	case o.Duration < time.Second || o.Duration > 24*time.Hour:
		return o, fmt.Errorf("duration %v: between 1s and 24h", o.Duration)
	case o.Timeout <= 0 || o.Timeout > 10*time.Minute:
		return o, fmt.Errorf("timeout %v: above 0, at most 10m", o.Timeout)
	}
	return o, nil
}

// The scenario as the scripts read it: plain JSON data, embedded in the
// script, interpreted by the script's fixed runtime (locustRuntime,
// k6Runtime). Nothing of the scenario becomes code.
type model struct {
	Name       string              `json:"name"`
	BaseURL    string              `json:"base_url"`
	TimeoutS   float64             `json:"timeout_s"`
	Rate       float64             `json:"rate"`
	Users      int                 `json:"users"`
	DurationS  float64             `json:"duration_s"`
	Think      bool                `json:"think"`
	Headers    []namedParts        `json:"headers"`
	Lists      map[string][]string `json:"lists"`
	UserList   string              `json:"user_list"`
	Login      *step               `json:"login"`
	Steps      []step              `json:"steps"`
	PreRun     *preRun             `json:"pre_run"`
	Scoring    scoringModel        `json:"scoring"`
	NeedsHTML  bool                `json:"needs_html"`
	StepNames  []string            `json:"step_names"`
	ErrorKinds []string            `json:"error_kinds"`
}

// part is [kind, value, escape]: value is the text, the list or capture
// name, or [min, max].
type part [3]any

type namedParts struct {
	Name  string `json:"name"`
	Parts []part `json:"parts"`
}

type step struct {
	Index       int            `json:"index"` // in StepNames (Workload order)
	Name        string         `json:"name"`
	Weight      float64        `json:"weight"`
	Method      string         `json:"method"`
	URL         []part         `json:"url"`
	Form        []namedParts   `json:"form"`
	Body        []part         `json:"body"`
	Headers     []namedParts   `json:"headers"`
	Status      []int          `json:"status"`
	Contains    [][]part       `json:"contains"`
	Selector    string         `json:"selector"`
	MinCount    int            `json:"min_count"`
	ThinkS      float64        `json:"think_s"`
	SlowAfterMS float64        `json:"slow_after_ms"`
	Captures    []captureModel `json:"captures"`
	Needs       []string       `json:"needs"`
}

type captureModel struct {
	Name     string `json:"name"`
	Regexp   string `json:"regexp,omitempty"`
	Group    int    `json:"group"`
	Selector string `json:"selector,omitempty"`
	Attr     string `json:"attr,omitempty"`
	JSON     []any  `json:"json,omitempty"`
	Header   string `json:"header,omitempty"`
}

type preRun struct {
	Request  *step    `json:"request,omitempty"`
	Command  []string `json:"command,omitempty"`
	Dir      string   `json:"dir,omitempty"`
	TimeoutS float64  `json:"timeout_s"`
}

type scoringModel struct {
	ErrorRate float64 `json:"error_rate"`
	MeanMS    float64 `json:"mean_ms,omitempty"`
	P50MS     float64 `json:"p50_ms,omitempty"`
	P90MS     float64 `json:"p90_ms,omitempty"`
	P99MS     float64 `json:"p99_ms,omitempty"`
	MaxMS     float64 `json:"max_ms,omitempty"`
}

// errorKinds are the failure kinds a script reports, as loadgen names
// them (the prefix of a Locust failure, a k6 counter's suffix).
var errorKinds = []loadgen.ErrKind{loadgen.ErrConnect, loadgen.ErrTimeout, loadgen.ErrReset, loadgen.ErrProtocol, loadgen.ErrStatus, loadgen.ErrCheck, loadgen.ErrOther}

// prepare is what both exports start with: the options with their
// defaults, the model and its JSON.
func prepare(s *scenario.Scenario, opt ExportOptions) (ExportOptions, *model, []byte, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return o, nil, nil, err
	}
	m, err := buildModel(s, o)
	if err != nil {
		return o, nil, nil, err
	}
	data, err := json.Marshal(m)
	return o, m, data, err
}

func buildModel(s *scenario.Scenario, o ExportOptions) (*model, error) {
	base := s.BaseURL
	if o.BaseURL != "" {
		if err := s.SetBaseURL(o.BaseURL); err != nil {
			return nil, err
		}
		base = o.BaseURL
	}
	m := &model{
		Name: s.Name, BaseURL: base, TimeoutS: o.Timeout.Seconds(), Rate: o.Rate, Users: o.Users,
		DurationS: o.Duration.Seconds(), Think: o.Rate == 0, Lists: map[string][]string{}, UserList: s.UserList(),
		StepNames: s.StepNames(), Steps: []step{}, Headers: []namedParts{},
		Scoring: scoringModel{ErrorRate: s.Scoring.FailIf.ErrorRate, MeanMS: ms(s.Scoring.FailIf.Mean), P50MS: ms(s.Scoring.FailIf.P50),
			P90MS: ms(s.Scoring.FailIf.P90), P99MS: ms(s.Scoring.FailIf.P99), MaxMS: ms(s.Scoring.FailIf.Max)},
	}
	for _, k := range errorKinds {
		m.ErrorKinds = append(m.ErrorKinds, string(k))
	}
	for _, n := range s.ListNames() {
		m.Lists[n] = s.Data[n]
	}
	var err error
	if m.Headers, err = headerParts(s, s.Headers); err != nil {
		return nil, err
	}
	for i, st := range s.AllSteps() {
		ms, err := stepModel(s, st, i)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.Name, err)
		}
		if ms.Selector != "" || slices.ContainsFunc(ms.Captures, func(c captureModel) bool { return c.Selector != "" }) {
			m.NeedsHTML = true
		}
		if s.Login != nil && i == 0 {
			m.Login = &ms
			continue
		}
		m.Steps = append(m.Steps, ms)
	}
	if len(m.Steps) == 0 {
		return nil, errors.New("the scenario has no step")
	}
	if h := s.PreRun; h != nil {
		m.PreRun = &preRun{TimeoutS: h.Timeout.Seconds()}
		if h.Request != nil {
			ms, err := stepModel(s, h.Request, -1)
			if err != nil {
				return nil, fmt.Errorf("pre_run: %w", err)
			}
			m.PreRun.Request = &ms
		} else {
			m.PreRun.Command = h.Command
			if dir, err := filepath.Abs(filepath.Dir(s.File)); err == nil {
				m.PreRun.Dir = dir
			}
		}
	}
	return m, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func headerParts(s *scenario.Scenario, h map[string]string) ([]namedParts, error) {
	out := []namedParts{}
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p, err := parts(s, h[n], false)
		if err != nil {
			return nil, err
		}
		out = append(out, namedParts{n, p})
	}
	return out, nil
}

func parts(s *scenario.Scenario, src string, inURL bool) ([]part, error) {
	tps, err := s.Template(src, inURL)
	if err != nil {
		return nil, err
	}
	out := make([]part, 0, len(tps))
	for _, p := range tps {
		switch p.Kind {
		case scenario.PartText:
			out = append(out, part{p.Kind, p.Text, p.Escape})
		case scenario.PartRand:
			out = append(out, part{p.Kind, [2]int{p.Min, p.Max}, p.Escape})
		default:
			out = append(out, part{p.Kind, p.Name, p.Escape})
		}
	}
	return out, nil
}

func stepModel(s *scenario.Scenario, st *scenario.Step, index int) (step, error) {
	m := step{Index: index, Name: st.Name, Weight: st.Weight, Method: st.Method, Status: st.Expect.Status, Selector: st.Expect.Selector,
		MinCount: st.Expect.MinCount, ThinkS: st.Think.Seconds(), SlowAfterMS: ms(st.SlowAfter), Contains: [][]part{}, Captures: []captureModel{}, Needs: []string{}}
	if m.Status == nil {
		m.Status = []int{}
	}
	if m.Selector != "" && m.MinCount == 0 {
		m.MinCount = 1
	}
	var err error
	if m.URL, err = parts(s, st.URL, true); err != nil {
		return m, err
	}
	if st.Form != nil {
		m.Form = []namedParts{}
		for _, f := range st.Form {
			p, err := parts(s, f.Value, false)
			if err != nil {
				return m, err
			}
			m.Form = append(m.Form, namedParts{f.Name, p})
		}
	}
	if st.Body != "" {
		if m.Body, err = parts(s, st.Body, false); err != nil {
			return m, err
		}
	}
	if m.Headers, err = headerParts(s, st.Headers); err != nil {
		return m, err
	}
	for _, c := range st.Expect.Contains {
		p, err := parts(s, c, false)
		if err != nil {
			return m, err
		}
		m.Contains = append(m.Contains, p)
	}
	for _, c := range st.Captures {
		m.Captures = append(m.Captures, captureModel{Name: c.Name, Regexp: c.Regexp, Group: c.Group, Selector: c.Selector, Attr: c.Attr, JSON: c.JSONPath(), Header: c.Header})
	}
	// A step runs once its session has every capture its request uses.
	add := func(ps []part) {
		for _, p := range ps {
			if p[0] == scenario.PartCapture && !slices.Contains(m.Needs, p[1].(string)) {
				m.Needs = append(m.Needs, p[1].(string))
			}
		}
	}
	add(m.URL)
	add(m.Body)
	for _, f := range m.Form {
		add(f.Parts)
	}
	for _, h := range m.Headers {
		add(h.Parts)
	}
	for _, c := range m.Contains {
		add(c)
	}
	return m, nil
}
