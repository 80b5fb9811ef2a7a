package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// WorkloadOptions shapes the users of a plan.
type WorkloadOptions struct {
	// Timeout bounds each request (connect, send, response, body); 0 uses
	// the run's timeout (loadgen.RequestTimeout of Do's context).
	Timeout time.Duration
	// KeepAlive reuses each user's connection; false opens one per request.
	KeepAlive bool
	// Seed makes step choices and {{list}}/{{rand}} values reproducible:
	// user id draws from a PRNG seeded with Seed+id.
	Seed uint64
	// ThinkTime makes a user pause for its step's think time after the
	// step (closed model); false ignores think times (open model, where
	// the engine sets the pace).
	ThinkTime bool
}

// MaxBody is how much of a response body is kept for checks; the rest is
// read (and counted in Sample.Bytes) but not checked.
const MaxBody = 4 << 20

// Workload returns a loadgen plan running the scenario. Workload.Steps are the step
// names, with "login" first when the scenario has a login; Sample.Step
// indexes them.
//
// Each user has its own HTTP/1.1 client (its own connection, MaxConnsPerHost
// 1), cookie jar, session values and PRNG, and does not follow redirects.
// Its first Do sends the login (retried by the next Do until it succeeds);
// every other Do picks a step by weight among those whose captured values
// the session has, fills its templates, sends it, reads the body, checks
// the expectations and takes the step's captures.
//
// Slow responses are counted only by the workloads of Plan.Run.
func (s *Scenario) Workload(opt WorkloadOptions) (loadgen.Workload, error) {
	p, err := s.Plan(opt)
	if err != nil {
		return loadgen.Workload{}, err
	}
	w, _ := p.Run()
	return w, nil
}

// Plan is the scenario's plan for a series of runs; see Scenario.Plan.
type Plan struct {
	ps    *planState
	names []string
}

// Plan returns the plan of a series of runs (the runs of one bench): they
// share the positions of {{list.seq}}; each run (Plan.Run) has its own
// users, sessions and Tally.
func (s *Scenario) Plan(opt WorkloadOptions) (*Plan, error) {
	ps, err := s.newPlanState(opt)
	if err != nil {
		return nil, err
	}
	return &Plan{ps: ps, names: s.StepNames()}, nil
}

// Run returns the workload of one loadgen.Run and the Tally its users
// fill; do not use the workload for another run.
func (p *Plan) Run() (loadgen.Workload, *Tally) {
	t := newTally(len(p.names))
	return loadgen.Workload{
		Steps:   p.names,
		NewUser: func(id int) (loadgen.User, error) { return p.ps.newRunUser(id, t) },
		Check:   t.check,
	}, t
}

func (s *Scenario) newPlanState(opt WorkloadOptions) (*planState, error) {
	if s == nil || len(s.Steps) == 0 {
		return nil, errors.New("scenario: no steps")
	}
	if opt.Timeout < 0 {
		return nil, fmt.Errorf("scenario: negative timeout %v", opt.Timeout)
	}
	weights := make([]float64, len(s.Steps))
	gated := false
	for i, st := range s.Steps {
		weights[i] = st.Weight
		gated = gated || len(st.needs) > 0
	}
	ps := &planState{
		opt:     opt,
		base:    s.base,
		login:   s.Login,
		steps:   s.Steps,
		headers: s.headers,
		lists:   s.lists,
		seq:     make([]atomic.Uint64, len(s.lists)),
		user:    s.userList,
		picker:  newPicker(weights),
		gated:   gated,
		caps:    len(s.Captures),
		sleep:   sleep,
	}
	if s.Login != nil {
		ps.offset = 1
	}
	return ps, nil
}

// planState is shared by the users of one plan.
type planState struct {
	opt     WorkloadOptions
	base    *url.URL
	login   *Step
	steps   []Step
	headers []header
	lists   [][]string
	seq     []atomic.Uint64
	user    int // the list {{user}} comes from, or -1
	picker  picker
	// gated is set when some step uses captured values: a user then
	// picks among the steps whose values its session has.
	gated  bool
	caps   int // number of captures
	offset int // 1 when Workload.Steps starts with "login"
	// sleep pauses for a think time; tests replace it.
	sleep func(ctx context.Context, d time.Duration)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// picker chooses an index with probability proportional to its weight.
type picker struct {
	cum []float64 // running sums of the weights
}

func newPicker(weights []float64) picker {
	cum := make([]float64, len(weights))
	total := 0.0
	for i, w := range weights {
		total += w
		cum[i] = total
	}
	return picker{cum: cum}
}

func (p picker) pick(r *rand.Rand) int {
	x := r.Float64() * p.cum[len(p.cum)-1]
	i := sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > x })
	return min(i, len(p.cum)-1)
}

func (ps *planState) newUser(id int) (loadgen.User, error) { return ps.newRunUser(id, nil) }

// newRunUser makes user id of a run whose slow responses t counts (nil:
// not counted).
func (ps *planState) newRunUser(id int, t *Tally) (loadgen.User, error) {
	seed := ps.opt.Seed + uint64(id)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: ps.opt.Timeout, KeepAlive: 30 * time.Second}
	var protocols http.Protocols
	protocols.SetHTTP1(true) // one connection per user: no HTTP/2 multiplexing
	tr := &http.Transport{
		Protocols:             &protocols,
		DialContext:           dialer.DialContext,
		DisableKeepAlives:     !ps.opt.KeepAlive,
		MaxConnsPerHost:       1,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   ps.opt.Timeout,
		ResponseHeaderTimeout: ps.opt.Timeout,
	}
	u := &user{
		ps: ps,
		id: id,
		tr: tr,
		client: &http.Client{
			Transport:     tr,
			Jar:           jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		fill: newFiller(rng, ps.lists, ps.seq),
		rng:  rng,
		have: make([]bool, ps.caps),
	}
	u.fill.row = id
	u.fill.caps = make([]string, ps.caps)
	if t != nil {
		u.tally = t.newUser()
	}
	if ps.user >= 0 {
		vals := ps.lists[ps.user]
		u.fill.user = vals[id%len(vals)]
	}
	if ps.login == nil {
		u.loggedIn = true
	}
	return u, nil
}

type user struct {
	ps       *planState
	id       int
	tr       *http.Transport
	client   *http.Client
	fill     *filler
	rng      *rand.Rand
	loggedIn bool
	body     bytes.Buffer
	// have says which captures the session holds (their values are in
	// fill.caps).
	have  []bool
	tally *userTally // nil when slow responses are not counted
}

// Close closes the user's idle connection.
func (u *user) Close() error {
	u.tr.CloseIdleConnections()
	return nil
}

// Do sends the login if the user is not logged in yet, else a step picked
// by weight, then pauses for the step's think time when enabled.
func (u *user) Do(ctx context.Context, intended time.Time) loadgen.Sample {
	var st *Step
	var idx int
	login := !u.loggedIn
	if login {
		st = u.ps.login
	} else {
		i := u.pick()
		st, idx = &u.ps.steps[i], i+u.ps.offset
	}
	if u.tally != nil {
		u.tally.begin(intended)
	}
	s := u.send(ctx, intended, st, login)
	s.Step = idx
	// The request is over: a run ending during a pause counts it rather
	// than taking it for one still in flight, and the tally judges it by
	// the same time as loadgen.
	s.End = time.Now()
	if login && s.Err == loadgen.OK {
		u.loggedIn = true
	}
	if u.tally != nil && st.SlowAfter > 0 && s.Latency > st.SlowAfter && isResponse(s.Err) {
		u.tally.slow(idx, intended, s.End)
	}
	if u.ps.opt.ThinkTime && st.Think > 0 && ctx.Err() == nil {
		u.ps.sleep(ctx, st.Think)
	}
	return s
}

// isResponse says whether a sample of kind k got a whole response (a slow
// one is counted whatever its status or check).
func isResponse(k loadgen.ErrKind) bool {
	return k == loadgen.OK || k == loadgen.ErrStatus || k == loadgen.ErrCheck
}

// pick chooses a step by weight among those the session can run: all of
// them, unless some use captured values the session does not have yet
// (there is always one it can: Load checks that every step can run).
func (u *user) pick() int {
	if !u.ps.gated {
		return u.ps.picker.pick(u.rng)
	}
	total := 0.0
	for i := range u.ps.steps {
		if u.ready(&u.ps.steps[i]) {
			total += u.ps.steps[i].Weight
		}
	}
	x := u.rng.Float64() * total
	last := 0
	for i := range u.ps.steps {
		st := &u.ps.steps[i]
		if !u.ready(st) {
			continue
		}
		last = i
		if x -= st.Weight; x < 0 {
			return i
		}
	}
	return last
}

// ready says whether the session has every value st uses.
func (u *user) ready(st *Step) bool {
	for _, c := range st.needs {
		if !u.have[c] {
			return false
		}
	}
	return true
}

func (u *user) send(ctx context.Context, intended time.Time, st *Step, login bool) loadgen.Sample {
	timeout := u.ps.opt.Timeout
	if timeout == 0 {
		timeout = loadgen.RequestTimeout(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := u.request(rctx, st, login)
	if err != nil {
		return loadgen.Sample{Err: loadgen.ErrOther, Detail: short(err.Error())}
	}
	start := time.Now()
	from := intended
	if from.IsZero() || from.After(start) {
		from = start
	}
	fail := func(err error) loadgen.Sample {
		k, d := classify(err, ctx, rctx, timeout)
		return loadgen.Sample{Latency: time.Since(from), Err: k, Detail: d}
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return fail(err)
	}
	u.body.Reset()
	n, err := u.body.ReadFrom(io.LimitReader(resp.Body, MaxBody))
	truncated := false
	if err == nil {
		var extra int64
		extra, err = io.Copy(io.Discard, resp.Body)
		n += extra
		truncated = extra > 0
	}
	resp.Body.Close()
	if err != nil {
		s := fail(err)
		s.Status, s.Bytes = resp.StatusCode, n
		return s
	}
	s := loadgen.Sample{Latency: time.Since(from), Status: resp.StatusCode, Bytes: n}
	r := &response{status: resp.StatusCode, header: resp.Header, body: u.body.Bytes(), of: bodyName(truncated)}
	var vals []string
	s.Err, s.Detail, vals = check(st, u.fill, r)
	if s.Err == loadgen.OK {
		for i, c := range st.Captures {
			u.fill.caps[c.index] = vals[i]
			u.have[c.index] = true
		}
	}
	return s
}

func bodyName(truncated bool) string {
	if truncated {
		return fmt.Sprintf("first %d MiB of the body", MaxBody>>20)
	}
	return "body"
}

// request builds the HTTP request of st with its templates filled.
func (u *user) request(ctx context.Context, st *Step, login bool) (*http.Request, error) {
	f := u.fill
	f.reset()
	f.bind = -1
	if login {
		f.bind = u.id
	}
	return newRequest(ctx, st, f, u.ps.base, u.ps.headers)
}

// newRequest builds the HTTP request of st with its templates filled by f,
// its URL resolved against base, the headers global then st's own.
func newRequest(ctx context.Context, st *Step, f *filler, base *url.URL, global []header) (*http.Request, error) {
	raw := st.url.string(f)
	ref, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q", loadgen.MaskURL(raw))
	}
	if !ref.IsAbs() {
		if base == nil {
			return nil, fmt.Errorf("relative URL %q and no base URL", loadgen.MaskURL(raw))
		}
		ref = base.ResolveReference(ref)
	}
	var body io.Reader
	contentType := ""
	switch {
	case len(st.form) > 0:
		vals := url.Values{}
		for _, ft := range st.form {
			vals.Add(ft.name, ft.value.string(f))
		}
		body = strings.NewReader(vals.Encode())
		contentType = "application/x-www-form-urlencoded"
	case st.Body != "":
		body = strings.NewReader(st.body.string(f))
	}
	req, err := http.NewRequestWithContext(ctx, st.Method, ref.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "stacktune")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := setHeaders(req, f, global, st.headers); err != nil {
		return nil, err
	}
	return req, nil
}

// setHeaders fills header templates into req, later lists winning.
func setHeaders(req *http.Request, f *filler, lists ...[]header) error {
	for _, hs := range lists {
		for _, h := range hs {
			v := h.value.string(f)
			if strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("header %s: the value has a line break (from %q)", h.name, shortString(h.value.src, 40))
			}
			if http.CanonicalHeaderKey(h.name) == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(h.name, v)
		}
	}
	return nil
}

// check applies st's expectations to a response, its templates filled by f
// (with the values of the request), then takes st's captures: their values
// in st.Captures order when everything succeeded.
func check(st *Step, f *filler, r *response) (loadgen.ErrKind, string, []string) {
	k, d := expect(st, f, r)
	if k != loadgen.OK || len(st.Captures) == 0 {
		return k, d, nil
	}
	vals := make([]string, len(st.Captures))
	for i := range st.Captures {
		v, err := st.Captures[i].take(r)
		if err != nil {
			return loadgen.ErrCheck, err.Error(), nil
		}
		vals[i] = v
	}
	return loadgen.OK, "", vals
}

func expect(st *Step, f *filler, r *response) (loadgen.ErrKind, string) {
	x := &st.Expect
	status, body, of := r.status, r.body, r.of
	if len(x.Status) == 0 {
		if status >= 400 {
			return loadgen.ErrStatus, fmt.Sprintf("status %d, want < 400", status)
		}
	} else if !containsInt(x.Status, status) {
		want := make([]string, len(x.Status))
		for i, c := range x.Status {
			want[i] = strconv.Itoa(c)
		}
		if len(want) == 1 {
			return loadgen.ErrStatus, fmt.Sprintf("status %d, want %s", status, want[0])
		}
		return loadgen.ErrStatus, fmt.Sprintf("status %d, want one of %s", status, strings.Join(want, ", "))
	}
	for i, c := range x.Contains {
		want := c
		if i < len(st.contains) && !st.contains[i].constant() {
			want = st.contains[i].string(f)
		}
		if !bytes.Contains(body, []byte(want)) {
			if want != c {
				return loadgen.ErrCheck, fmt.Sprintf("%s lacks %q (contains %q)", of, shortString(want, 40), shortString(c, 40))
			}
			return loadgen.ErrCheck, fmt.Sprintf("%s lacks %q", of, shortString(c, 40))
		}
	}
	if st.sel != nil {
		doc, err := r.html()
		if err != nil {
			return loadgen.ErrCheck, fmt.Sprintf("%s is not HTML: %v", of, err)
		}
		if n := len(st.sel.MatchAll(doc)); n < x.MinCount {
			return loadgen.ErrCheck, fmt.Sprintf("selector %q matched %d elements, want at least %d", shortString(x.Selector, 40), n, x.MinCount)
		}
	}
	return loadgen.OK, ""
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// classify maps a client error to an error kind and a short detail. ctx is
// the run's context, rctx the request's (with the timeout).
func classify(err error, ctx, rctx context.Context, timeout time.Duration) (loadgen.ErrKind, string) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	var ne net.Error
	var oe *net.OpError
	var dns *net.DNSError
	if errors.As(err, &oe) && oe.Op != "dial" && oe.Err != nil {
		// "read tcp 127.0.0.1:53412->127.0.0.1:8080: read: connection reset
		// by peer": the ephemeral port would make every detail distinct.
		msg = oe.Err.Error()
	}
	switch {
	case ctx.Err() != nil:
		return loadgen.ErrOther, "canceled: the run stopped"
	case rctx.Err() == context.DeadlineExceeded, errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return loadgen.ErrTimeout, fmt.Sprintf("no complete response within %v", timeout)
	case errors.As(err, &dns), errors.As(err, &oe) && oe.Op == "dial":
		return loadgen.ErrConnect, short(msg)
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "server response headers exceeded"),
		strings.Contains(msg, "transfer encoding"), strings.Contains(msg, "Content-Length"),
		strings.Contains(msg, "tls:"):
		return loadgen.ErrProtocol, short(msg)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isReset(err),
		strings.Contains(msg, "server closed idle connection"), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"):
		return loadgen.ErrReset, short(msg)
	}
	return loadgen.ErrOther, short(msg)
}

// short cuts a detail to 120 bytes, so details stay readable and few, and
// masks URL passwords in it.
func short(s string) string { return shortString(loadgen.MaskCredentials(s), 120) }

func shortString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 { // do not split a UTF-8 sequence
		n--
	}
	return s[:n] + "…"
}
