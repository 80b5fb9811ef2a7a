package scenario

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// app is a tiny web app: POST /login sets a session cookie, every page
// needs it, /flaky fails every third request, /broken lacks the friends list.
type app struct {
	mu    sync.Mutex
	log   []string // "GET /profile/alice as alice", "think 100ms", ...
	flaky int
	conns int
}

func (a *app) record(s string) {
	a.mu.Lock()
	a.log = append(a.log, s)
	a.mu.Unlock()
}

func (a *app) events() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	who := ""
	if c, err := r.Cookie("session"); err == nil {
		who = c.Value
	}
	a.record(fmt.Sprintf("%s %s as %q", r.Method, r.URL.RequestURI(), who))
	if r.URL.Path == "/login" {
		user, _, _ := strings.Cut(r.PostFormValue("email"), "@")
		if r.Method != "POST" || user == "" || r.PostFormValue("password") != user {
			http.Error(w, "bad login", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: user, Path: "/"})
		http.Redirect(w, r, "/", http.StatusFound)
		return
	}
	if who == "" {
		http.Error(w, "log in first", http.StatusForbidden)
		return
	}
	switch {
	case r.URL.Path == "/":
		fmt.Fprintf(w, `<html><body><h1>Welcome, %s</h1><ul id="friends"><li>bob</li><li>carol</li></ul></body></html>`, who)
	case strings.HasPrefix(r.URL.Path, "/profile/"):
		fmt.Fprintf(w, `<html><body><h1>profile of %s</h1></body></html>`, strings.TrimPrefix(r.URL.Path, "/profile/"))
	case r.URL.Path == "/flaky":
		a.mu.Lock()
		a.flaky++
		n := a.flaky
		a.mu.Unlock()
		if n%3 == 0 {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	case r.URL.Path == "/broken":
		fmt.Fprint(w, `<html><body><h1>Welcome</h1><ul id="enemies"><li>x</li></ul></body></html>`)
	case r.URL.Path == "/comment" && r.Method == "POST":
		if r.PostFormValue("c") != "hi" {
			http.Error(w, "no comment", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "/", http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

func (a *app) connections() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conns
}

func newApp(t *testing.T) (*app, *httptest.Server) {
	a := &app{}
	srv := httptest.NewUnstartedServer(a)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			a.mu.Lock()
			a.conns++
			a.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return a, srv
}

const appScenario = `
name: tiny app
base_url: http://set.by.test/
data:
  users: [alice, bob]
session:
  login:
    url: /login
    form: {email: "{{users}}@example.com", password: "{{users}}"}
    expect: {status: 302}
steps:
  - name: home
    weight: 4
    url: /
    expect: {status: 200, contains: Welcome, selector: "#friends li", min_count: 2}
    think: 100ms
  - name: profile
    weight: 2
    url: /profile/{{user}}
    expect: {contains: profile of}
  - name: flaky
    url: /flaky
    expect: {status: 200}
  - name: broken
    url: /broken
    expect: {selector: "#friends li"}
  - name: comment
    url: /comment
    form: {c: hi}
    expect: {status: 302}
`

// loadApp parses src and points it at srv.
func loadApp(t *testing.T, src string, srv *httptest.Server) *Scenario {
	t.Helper()
	s, err := Parse("app.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseURL(srv.URL); err != nil {
		t.Fatal(err)
	}
	return s
}

// drive runs n Do calls of user id and returns the samples.
func drive(t *testing.T, ps *planState, id, n int) []loadgen.Sample {
	t.Helper()
	u, err := ps.newUser(id)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var out []loadgen.Sample
	for range n {
		out = append(out, u.Do(context.Background(), time.Now()))
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	a, srv := newApp(t)
	s := loadApp(t, appScenario, srv)
	plan, err := s.Workload(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 1, ThinkTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"login", "home", "profile", "flaky", "broken", "comment"}; !slices.Equal(plan.Steps, want) {
		t.Fatalf("plan steps %q", plan.Steps)
	}
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 1, ThinkTime: true})
	if err != nil {
		t.Fatal(err)
	}
	ps.sleep = func(_ context.Context, d time.Duration) { a.record("think " + d.String()) }

	const n = 200
	samples := drive(t, ps, 1, n) // user 1 logs in as bob
	byStep := map[string][]loadgen.Sample{}
	for _, x := range samples {
		name := plan.Steps[x.Step]
		byStep[name] = append(byStep[name], x)
	}
	if first := samples[0]; first.Step != 0 || first.Err != loadgen.OK || first.Status != 302 {
		t.Fatalf("first sample %+v, want a successful login", first)
	}
	if len(byStep["login"]) != 1 {
		t.Errorf("%d logins, want 1", len(byStep["login"]))
	}
	for _, name := range plan.Steps {
		if len(byStep[name]) == 0 {
			t.Errorf("step %q never ran in %d requests", name, n)
		}
	}
	// Steps are picked by weight (4:2:1:1:1).
	if h, p := len(byStep["home"]), len(byStep["profile"]); h < p || p < len(byStep["broken"])/2 {
		t.Errorf("home %d profile %d broken %d: not in proportion to the weights", h, p, len(byStep["broken"]))
	}
	kinds := map[string]map[loadgen.ErrKind]int{}
	for name, xs := range byStep {
		kinds[name] = map[loadgen.ErrKind]int{}
		for _, x := range xs {
			kinds[name][x.Err]++
			switch {
			case x.Err == loadgen.ErrStatus && x.Detail != "status 500, want 200":
				t.Errorf("%s: status detail %q", name, x.Detail)
			case x.Err == loadgen.ErrCheck && x.Detail != `selector "#friends li" matched 0 elements, want at least 1`:
				t.Errorf("%s: check detail %q", name, x.Detail)
			case x.Err == loadgen.OK && x.Bytes == 0 && name != "login" && name != "comment":
				t.Errorf("%s: no bytes counted", name)
			}
		}
	}
	for _, name := range []string{"login", "home", "profile", "comment"} {
		if len(kinds[name]) != 1 || kinds[name][loadgen.OK] == 0 {
			t.Errorf("%s: outcomes %v, want all OK", name, kinds[name])
		}
	}
	if k := kinds["broken"]; len(k) != 1 || k[loadgen.ErrCheck] == 0 {
		t.Errorf("broken: outcomes %v, want all check errors", k)
	}
	if k := kinds["flaky"]; k[loadgen.ErrStatus] != len(byStep["flaky"])/3 || k[loadgen.OK] == 0 {
		t.Errorf("flaky: outcomes %v of %d, want every third a status error", k, len(byStep["flaky"]))
	}

	// The server saw: the login without a cookie, then every request with
	// bob's cookie, each home page followed by its think time, on one
	// connection.
	ev := a.events()
	if !strings.HasPrefix(ev[0], `POST /login as ""`) {
		t.Errorf("first request %q", ev[0])
	}
	thinks := 0
	for i, e := range ev[1:] {
		if e == "think 100ms" {
			thinks++
			if prev := ev[i]; !strings.HasPrefix(prev, "GET / ") {
				t.Errorf("think after %q, want after the home page", prev)
			}
			continue
		}
		if !strings.HasSuffix(e, `as "bob"`) {
			t.Errorf("request %d %q: cookie not kept", i+1, e)
		}
		if strings.HasPrefix(e, "GET /profile/") && e != `GET /profile/bob as "bob"` {
			t.Errorf("{{user}}: %q", e)
		}
	}
	if thinks != len(byStep["home"]) {
		t.Errorf("%d think pauses for %d home pages", thinks, len(byStep["home"]))
	}
	if a.connections() != 1 {
		t.Errorf("%d connections with keep-alive, want 1", a.connections())
	}
}

func TestEndToEndOptions(t *testing.T) {
	a, srv := newApp(t)
	s := loadApp(t, appScenario, srv)

	// Without think time and keep-alive: no pauses, a connection per request.
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps.sleep = func(_ context.Context, d time.Duration) { a.record("think " + d.String()) }
	samples := drive(t, ps, 0, 30) // user 0 logs in as alice
	if slices.Contains(a.events(), "think 100ms") {
		t.Errorf("think time with ThinkTime false")
	}
	if n := a.connections(); n != 30 {
		t.Errorf("%d connections without keep-alive, want 30", n)
	}

	// The same seed and user id pick the same steps; another seed does not.
	steps := func(xs []loadgen.Sample) []int {
		var out []int
		for _, x := range xs {
			out = append(out, x.Step)
		}
		return out
	}
	ps2, _ := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 1})
	if again := drive(t, ps2, 0, 30); !slices.Equal(steps(samples), steps(again)) {
		t.Errorf("same seed, different steps:\n%v\n%v", steps(samples), steps(again))
	}
	ps3, _ := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 2})
	if other := drive(t, ps3, 0, 30); slices.Equal(steps(samples), steps(other)) {
		t.Errorf("different seeds, same steps")
	}
}

func TestLoginFailure(t *testing.T) {
	_, srv := newApp(t)
	s := loadApp(t, strings.Replace(appScenario, `password: "{{users}}"`, `password: wrong`, 1), srv)
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	// A failed login is a sample of step 0, and the next Do tries again.
	for i, x := range drive(t, ps, 0, 3) {
		if x.Step != 0 || x.Err != loadgen.ErrStatus || x.Status != 401 || x.Detail != "status 401, want 302" {
			t.Errorf("sample %d: %+v", i, x)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	hijack := func(w http.ResponseWriter, write string) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.WriteString(write)
		buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok && write == "" {
			tc.SetLinger(0) // close with a RST
		}
		conn.Close()
	}
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) { hijack(w, "") })
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { hijack(w, "HELLO THERE\r\n\r\n") })
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		hijack(w, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", MaxBody)))
		w.Write([]byte("needle"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	src := `
steps:
  - {name: slow, url: "BASE/slow"}
  - {name: reset, url: "BASE/reset"}
  - {name: garbage, url: "BASE/garbage"}
  - {name: short, url: "BASE/short"}
  - {name: big, url: "BASE/big", expect: {contains: needle}}
  - {name: refused, url: "DEAD/"}
  - {name: missing, url: "BASE/missing"}
`
	src = strings.ReplaceAll(strings.ReplaceAll(src, "BASE", srv.URL), "DEAD", deadURL)
	s, err := Parse("kinds.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.newPlanState(WorkloadOptions{Timeout: 300 * time.Millisecond, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ps.newUser(0)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	us := u.(*user)
	tests := []struct {
		step   int
		kind   loadgen.ErrKind
		detail string // prefix
	}{
		{0, loadgen.ErrTimeout, "no complete response within 300ms"},
		{1, loadgen.ErrReset, "read: connection reset by peer"},
		{2, loadgen.ErrProtocol, "net/http: HTTP/1.x transport connection broken: malformed HTTP"},
		{3, loadgen.ErrReset, "unexpected EOF"},
		{4, loadgen.ErrCheck, `first 4 MiB of the body lacks "needle"`},
		{5, loadgen.ErrConnect, "dial tcp"},
		{6, loadgen.ErrStatus, "status 404, want < 400"},
	}
	for _, tt := range tests {
		t.Run(s.Steps[tt.step].Name, func(t *testing.T) {
			x := us.send(context.Background(), time.Now(), &s.Steps[tt.step], false)
			if x.Err != tt.kind || !strings.HasPrefix(x.Detail, tt.detail) {
				t.Errorf("got %s %q, want %s %q…", x.Err, x.Detail, tt.kind, tt.detail)
			}
			if len(x.Detail) > 130 {
				t.Errorf("detail too long: %d bytes", len(x.Detail))
			}
			if tt.step == 4 && x.Bytes != MaxBody+6 {
				t.Errorf("big body: %d bytes counted, want %d", x.Bytes, MaxBody+6)
			}
		})
	}

	// Latency counts from the intended time (open model).
	x := us.send(context.Background(), time.Now().Add(-time.Second), &s.Steps[6], false)
	if x.Latency < time.Second {
		t.Errorf("latency %v from an intended time 1s ago", x.Latency)
	}
	// A stopped run: no request, no think.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if x := u.Do(ctx, time.Now()); x.Err != loadgen.ErrOther || x.Detail != "canceled: the run stopped" {
		t.Errorf("canceled: %+v", x)
	}
}

// TestConcurrentUsers drives users from the public Plan at once, as loadgen
// does: each keeps its own session.
func TestConcurrentUsers(t *testing.T) {
	a, srv := newApp(t)
	s := loadApp(t, appScenario, srv)
	plan, err := s.Workload(WorkloadOptions{Timeout: 5 * time.Second, KeepAlive: true, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	const users, each = 4, 50
	var wg sync.WaitGroup
	results := make([][]loadgen.Sample, users)
	for id := range users {
		u, err := plan.NewUser(id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer u.Close()
			for range each {
				results[id] = append(results[id], u.Do(context.Background(), time.Now()))
			}
		}()
	}
	wg.Wait()
	for id, xs := range results {
		if xs[0].Step != 0 || xs[0].Err != loadgen.OK {
			t.Errorf("user %d: first sample %+v, want a login", id, xs[0])
		}
		for _, x := range xs[1:] {
			if x.Step == 0 || x.Step >= len(plan.Steps) {
				t.Errorf("user %d: step %d after the login", id, x.Step)
			}
		}
	}
	// Users 0 and 2 log in as alice, 1 and 3 as bob; nobody browses anonymously.
	count := map[string]int{}
	for _, e := range a.events() {
		_, who, _ := strings.Cut(e, " as ")
		count[who]++
	}
	if count[`""`] != users || count[`"alice"`] != count[`"bob"`] || count[`"alice"`] != 2*(each-1) {
		t.Errorf("requests by session: %v", count)
	}
}
