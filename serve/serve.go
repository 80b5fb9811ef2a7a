package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/ledger"
	"github.com/stacktune/stacktune/report"
)

//go:embed assets/live.js
var assets embed.FS

// DefaultListen is where serve listens unless told otherwise.
const DefaultListen = "127.0.0.1:8737"

// Options configure the server.
type Options struct {
	// Listen is host:port (DefaultListen when "").
	Listen string
	// Token, when set, is required of every request. CheckListen
	// requires one for an address that is not loopback.
	Token string
	// Poll is how often a live page's events look for new runs (500 ms
	// when 0).
	Poll time.Duration
}

// ErrTokenRequired is CheckListen's refusal.
var ErrTokenRequired = errors.New("a listen address that is not loopback needs a token")

// CheckListen refuses an address other than loopback (127.0.0.0/8, ::1,
// localhost) without a token; an empty host means every interface.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrTokenRequired, addr)
}

// Server serves the UI and API of one history.
type Server struct {
	store *history.Store
	opt   Options
	mux   *http.ServeMux
}

// New makes the server's handler.
func New(store *history.Store, opt Options) *Server {
	if opt.Poll <= 0 {
		opt.Poll = 500 * time.Millisecond
	}
	s := &Server{store: store, opt: opt, mux: http.NewServeMux()}
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /{$}":                            s.runsPage,
		"GET /runs/{id}":                      s.runPage,
		"GET /diff":                           s.diffPage,
		"GET /sessions":                       s.sessionsPage,
		"GET /sessions/{id}":                  s.sessionPage,
		"GET /static/live.js":                 s.liveJS,
		"GET /api/{$}":                        s.apiIndex,
		"GET /api/runs":                       s.apiRuns,
		"GET /api/runs/{id}":                  s.apiRun,
		"GET /api/runs/{id}/artefacts/{kind}": s.apiArtefact,
		"GET /api/diff":                       s.apiDiff,
		"GET /api/sessions":                   s.apiSessions,
		"GET /api/sessions/{id}":              s.apiSession,
		"GET /api/sessions/{id}/events":       s.events,
	} {
		s.mux.HandleFunc(pattern, h)
	}
	return s
}

// ServeHTTP checks the token, sets the security headers and serves.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", report.ServeCSP+"; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if s.opt.Token != "" && !s.authorized(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

const cookieName = "stacktune_token"

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	eq := func(got string) bool { return subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.Token)) == 1 }
	if t := r.URL.Query().Get("token"); t != "" {
		if !eq(t) {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && eq(b) {
		return true
	}
	if c, err := r.Cookie(cookieName); err == nil && eq(c.Value) {
		return true
	}
	http.Error(w, "a token is needed (Authorization: Bearer TOKEN, or ?token=TOKEN)", http.StatusUnauthorized)
	return false
}

// Serve listens on opt.Listen (checked by CheckListen) and serves until
// ctx ends; ready, when set, gets the address it listens on.
func Serve(ctx context.Context, store *history.Store, opt Options, ready func(addr string)) error {
	if opt.Listen == "" {
		opt.Listen = DefaultListen
	}
	if err := CheckListen(opt.Listen, opt.Token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: New(store, opt), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return nil
	}
}

func (s *Server) page(w http.ResponseWriter, p *report.ServePage) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := report.WriteServePage(w, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// writeJSON writes v as JSON: the API serves the ledger's own types
// (codes and numbers).
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrNoArtefact) {
		code = http.StatusNotFound
	}
	var be badRequest
	if errors.As(err, &be) {
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}

type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

func idParam(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	if v == "" {
		v = r.URL.Query().Get(name)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest{fmt.Sprintf("%s: not a run or session number", name)}
	}
	return id, nil
}

func listFilter(r *http.Request) (history.ListFilter, error) {
	q := r.URL.Query()
	f := history.ListFilter{Label: q.Get("label"), AppCommit: q.Get("commit"), Scenario: q.Get("scenario"), Command: q.Get("command")}
	for _, p := range []struct {
		name string
		v    *int64
	}{{"before", &f.BeforeID}, {"after", &f.AfterID}, {"session", &f.Session}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return f, badRequest{p.name + ": not a number"}
			}
			*p.v = n
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return f, badRequest{"limit: not a number"}
		}
		f.Limit = n
	}
	return f, nil
}

// pageSize is how many runs a page of the list shows.
const pageSize = 100

// maxTransitionRuns bounds the runs the list's chart is made of.
const maxTransitionRuns = 5000

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	f, err := listFilter(r)
	if err != nil {
		fail(w, err)
		return
	}
	f.Limit = pageSize + 1
	runs, err := s.store.List(r.Context(), f)
	if err != nil {
		fail(w, err)
		return
	}
	l := &report.ServeList{Label: f.Label, Commit: f.AppCommit, Scenario: f.Scenario}
	if len(runs) > pageSize {
		runs = runs[:pageSize]
		q := r.URL.Query()
		q.Set("before", strconv.FormatInt(runs[len(runs)-1].ID, 10))
		l.More = "/?" + q.Encode()
	}
	l.Runs = runs
	// The transitions of the runs the filter selects (the most recent
	// maxTransitionRuns of them, diagnose's left out), oldest first.
	tf := f
	tf.BeforeID, tf.AfterID, tf.Limit = 0, 0, maxTransitionRuns
	all, err := s.store.List(r.Context(), tf)
	if err != nil {
		fail(w, err)
		return
	}
	var scored []history.Run
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Command != history.CommandDiagnose {
			scored = append(scored, all[i])
		}
	}
	l.Steps = history.Transitions(scored)
	s.page(w, report.ServeRunsPage(l))
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err == nil {
		var v *ledger.View
		if v, err = ledger.Load(r.Context(), s.store, id); err == nil {
			s.page(w, report.ServeRunPage(v))
			return
		}
	}
	fail(w, err)
}

// pair reads the two runs of a diff: a= and b=, or two run= (the list's
// checkboxes), the older as A.
func (s *Server) pair(r *http.Request) (*ledger.Comparison, error) {
	q := r.URL.Query()
	var ids []int64
	if runs := q["run"]; len(runs) > 0 {
		if len(runs) != 2 {
			return nil, badRequest{fmt.Sprintf("check two runs to compare (%d checked)", len(runs))}
		}
		for _, v := range runs {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, badRequest{"run: not a number"}
			}
			ids = append(ids, id)
		}
		if ids[0] > ids[1] {
			ids[0], ids[1] = ids[1], ids[0]
		}
	} else {
		a, err := idParam(r, "a")
		if err != nil {
			return nil, err
		}
		b, err := idParam(r, "b")
		if err != nil {
			return nil, err
		}
		ids = []int64{a, b}
	}
	a, err := ledger.Load(r.Context(), s.store, ids[0])
	if err != nil {
		return nil, err
	}
	b, err := ledger.Load(r.Context(), s.store, ids[1])
	if err != nil {
		return nil, err
	}
	return ledger.Compare(a, b), nil
}

func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query(); len(q["run"]) == 2 {
		// The list's form: redirect to the permalink.
		c, err := s.pair(r)
		if err != nil {
			fail(w, err)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/diff?a=%d&b=%d", c.A.Run.ID, c.B.Run.ID), http.StatusSeeOther)
		return
	}
	c, err := s.pair(r)
	if err != nil {
		fail(w, err)
		return
	}
	s.page(w, report.ServeDiffPage(c))
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	ss, err := s.store.Sessions(r.Context(), 200)
	if err != nil {
		fail(w, err)
		return
	}
	s.page(w, report.ServeSessionsPage(ss))
}

func (s *Server) session(r *http.Request) (*history.Session, []history.Run, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return nil, nil, err
	}
	ss, err := s.store.GetSession(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	runs, err := s.store.List(r.Context(), history.ListFilter{Session: id, AfterID: -1 << 62, Limit: 1000})
	return ss, runs, err
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	ss, runs, err := s.session(r)
	if err != nil {
		fail(w, err)
		return
	}
	s.page(w, report.ServeSessionPage(ss, runs))
}

func (s *Server) liveJS(w http.ResponseWriter, r *http.Request) {
	b, _ := assets.ReadFile("assets/live.js") // embedded: cannot fail
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Write(b)
}

// APIRoute is one route of the API, as /api/ lists them.
type APIRoute struct {
	Path string `json:"path"`
	What string `json:"what"`
}

// APIRoutes are the API's routes (docs/serve.md says more).
var APIRoutes = []APIRoute{
	{"/api/runs?label=&commit=&scenario=&command=&session=&before=&after=&limit=", "runs, newest first (after: oldest first), without details"},
	{"/api/runs/ID", "a run read back: ledger.View (endpoints, classes, per-request SQL, findings, functions, flame graph)"},
	{"/api/runs/ID/artefacts/KIND", "an artefact as recorded (digest, http, requests, profile, snapshot, changes, findings)"},
	{"/api/diff?a=ID&b=ID", "run B against run A: ledger.Comparison with the verdict's reason codes"},
	{"/api/sessions", "tune and ab sessions, newest first"},
	{"/api/sessions/ID", "a session with its runs"},
	{"/api/sessions/ID/events", "server-sent events: run (each new run), end (the session's status)"},
}

func (s *Server) apiIndex(w http.ResponseWriter, r *http.Request) { writeJSON(w, APIRoutes) }

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	f, err := listFilter(r)
	if err == nil {
		var runs []history.Run
		if runs, err = s.store.List(r.Context(), f); err == nil {
			if runs == nil {
				runs = []history.Run{}
			}
			writeJSON(w, runs)
			return
		}
	}
	fail(w, err)
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err == nil {
		var v *ledger.View
		if v, err = ledger.Load(r.Context(), s.store, id); err == nil {
			writeJSON(w, v)
			return
		}
	}
	fail(w, err)
}

func (s *Server) apiArtefact(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	a, err := s.store.Artefact(r.Context(), id, r.PathValue("kind"))
	if err != nil {
		fail(w, err)
		return
	}
	if a.TooLarge {
		http.Error(w, "the artefact was over the limit and not kept", http.StatusGone)
		return
	}
	ct := "application/json"
	if a.Kind == history.ArtefactProfile {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", "attachment")
	w.Write(a.Data)
}

func (s *Server) apiDiff(w http.ResponseWriter, r *http.Request) {
	c, err := s.pair(r)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, c)
}

func (s *Server) apiSessions(w http.ResponseWriter, r *http.Request) {
	ss, err := s.store.Sessions(r.Context(), 200)
	if err != nil {
		fail(w, err)
		return
	}
	if ss == nil {
		ss = []history.Session{}
	}
	writeJSON(w, ss)
}

func (s *Server) apiSession(w http.ResponseWriter, r *http.Request) {
	ss, runs, err := s.session(r)
	if err != nil {
		fail(w, err)
		return
	}
	if runs == nil {
		runs = []history.Run{}
	}
	writeJSON(w, struct {
		Session *history.Session `json:"session"`
		Runs    []history.Run    `json:"runs"`
	}{ss, runs})
}

// events streams a session's new runs (after the one given by
// Last-Event-ID or ?after=, else from the start) as "run" events, polling
// the database, and "end" with the session once it is no longer running.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		fail(w, err)
		return
	}
	if _, err := s.store.GetSession(r.Context(), id); err != nil {
		fail(w, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	} else if v := r.URL.Query().Get("after"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	tick := time.NewTicker(s.opt.Poll)
	defer tick.Stop()
	for {
		// Runs first, then the status: a run recorded before the end is
		// sent before it.
		ss, err := s.store.GetSession(r.Context(), id)
		if err != nil {
			return
		}
		runs, err := s.store.List(r.Context(), history.ListFilter{Session: id, AfterID: max(after, -1<<62), Limit: 1000})
		if err != nil {
			return
		}
		for _, run := range runs {
			data, _ := json.Marshal(report.ServeLiveRun(run)) // strings: cannot fail
			fmt.Fprintf(w, "id: %d\nevent: run\ndata: %s\n\n", run.ID, data)
			after = run.ID
		}
		if ss.Status != history.SessionRunning && len(runs) < 1000 {
			data, _ := json.Marshal(ss)
			fmt.Fprintf(w, "event: end\ndata: %s\n\n", data)
			fl.Flush()
			return
		}
		fmt.Fprint(w, ": waiting\n\n")
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
