package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/scenario"
)

// shopServer is the app of testdata/shop/shop.yaml. It checks what each
// request must carry (the session cookie, the header of every request, the
// CSRF token and SKU captured from the item page, the id captured from
// the JSON) and counts the requests that carried it.
type shopServer struct {
	mu     sync.Mutex
	counts map[string]int
}

func (s *shopServer) count(what string) {
	s.mu.Lock()
	s.counts[what]++
	s.mu.Unlock()
}

func (s *shopServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Client") != "stacktune export" {
		http.Error(w, "no X-Client", http.StatusBadRequest)
		return
	}
	user := ""
	if c, err := r.Cookie("sess"); err == nil {
		user = c.Value
	}
	switch {
	case r.URL.Path == "/login" && r.Method == http.MethodPost:
		u := r.FormValue("user")
		if u == "" || r.FormValue("password") != "pw-"+u {
			http.Error(w, "bad login", http.StatusForbidden)
			return
		}
		s.count("login")
		http.SetCookie(w, &http.Cookie{Name: "sess", Value: u, Path: "/"})
		http.Redirect(w, r, "/home", http.StatusFound)
	case user == "":
		http.Error(w, "log in first", http.StatusUnauthorized)
	case strings.HasPrefix(r.URL.Path, "/items/"):
		sku := strings.TrimPrefix(r.URL.Path, "/items/")
		if q := r.URL.Query(); q.Get("q") == "" || !strings.HasSuffix(q.Get("who"), " "+user) {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `<html><body><h1>Item %s</h1><span id="price">10</span><form id="cart"><input name="csrf" value="tok-%s"></form><div data-sku="%s"></div></body></html>`, sku, user, sku)
	case r.URL.Path == "/cart" && r.Method == http.MethodPost:
		if r.FormValue("csrf") != "tok-"+user || !strings.HasPrefix(r.FormValue("sku"), "sku-") || r.FormValue("who") != user {
			http.Error(w, "bad cart", http.StatusBadRequest)
			return
		}
		s.count("cart")
		http.Redirect(w, r, "/cart", http.StatusFound)
	case r.URL.Path == "/api/me":
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"user": map[string]any{"id": 42, "name": user}}})
	case r.URL.Path == "/users/42/orders":
		s.count("orders")
		fmt.Fprint(w, "[]")
	case r.URL.Path == "/broken":
		http.Error(w, "broken", http.StatusInternalServerError)
	case r.URL.Path == "/plain":
		fmt.Fprint(w, "hello")
	case r.URL.Path == "/slow":
		time.Sleep(100 * time.Millisecond)
		fmt.Fprint(w, "slow")
	default:
		http.NotFound(w, r)
	}
}

// TestLocustRuntime runs the Locust export of a second app's scenario (a
// single Locust process, a few seconds) and checks, from the server's side
// and from the imported result, that the runtime does what stacktune bench
// does: logins bound to rows, captured values (selector attribute, regexp,
// JSON, header) sent back, every request's header, failures classified by
// kind, slow responses counted; then it runs stacktune bench on the same
// scenario and wants the same classification.
func TestLocustRuntime(t *testing.T) {
	srv := &shopServer{counts: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sc, err := scenario.Load("testdata/shop/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "locustfile.py")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Locust(f, sc, ExportOptions{Users: 6, Rate: 30, Duration: 8 * time.Second, BaseURL: ts.URL}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run, err := sandbox.RunLocust(context.Background(), sandbox.LocustOptions{File: file, Host: ts.URL, Users: 6, RunTime: 8 * time.Second, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sc2, _ := scenario.Load("testdata/shop/shop.yaml")
	im, err := ImportLocustCSV(run.CSVPrefix, sc2, ImportOptions{Rate: 30, Users: 6})
	if err != nil {
		t.Fatal(err)
	}
	checkShop(t, "locust", im.Result, im.Slow)
	// What the server accepted is what Locust counted as a success, but
	// for the requests out when the run stopped (one per user at most):
	// the server answered them, Locust stopped its users before it read
	// the answers.
	srv.mu.Lock()
	t.Logf("server: %v", srv.counts)
	for _, c := range []struct{ server, step string }{{"cart", "add to cart"}, {"orders", "orders"}, {"login", "login"}} {
		if d := srv.counts[c.server] - int(stepOf(im.Result, c.step).Requests); d < 0 || d > 6 {
			t.Errorf("the server accepted %d %s requests with the right values, Locust counted %d", srv.counts[c.server], c.step, stepOf(im.Result, c.step).Requests)
		}
	}
	srv.mu.Unlock()
	score := im.Score(sc2)
	if score.SlowByStep["slow"] != stepOf(im.Result, "slow").Requests || score.SlowPenalty != float64(score.Slow) {
		t.Errorf("slow: %+v", score)
	}

	sum, err := benchrun.Run(context.Background(), benchrun.Options{Scenario: "testdata/shop/shop.yaml", BaseURL: ts.URL, Seed: 1,
		Load: loadgen.Options{Connections: 6, Rate: 30, Duration: 4 * time.Second, Timeout: 5 * time.Second, KeepAlive: true}})
	if err != nil {
		t.Fatal(err)
	}
	br := &loadgen.Result{ErrorsByKind: map[loadgen.ErrKind]int64{}}
	var slow []int64
	for _, st := range sum.Steps {
		kinds := map[loadgen.ErrKind]int64{}
		for k, n := range st.ErrorsByKind {
			kinds[loadgen.ErrKind(k)] = n
		}
		br.Steps = append(br.Steps, loadgen.StepResult{Name: st.Name, Requests: st.Requests, Errors: st.Errors, ErrorsByKind: kinds})
		slow = append(slow, st.Slow)
	}
	checkShop(t, "bench", br, slow)
}

func stepOf(r *loadgen.Result, name string) loadgen.StepResult {
	for _, st := range r.Steps {
		if st.Name == name {
			return st
		}
	}
	return loadgen.StepResult{}
}

// checkShop wants the shop's steps to pass or fail as the app makes them.
func checkShop(t *testing.T, engine string, r *loadgen.Result, slow []int64) {
	t.Helper()
	for i, st := range r.Steps {
		t.Logf("%s: %-12s %3d requests, errors %v %v, slow %d", engine, st.Name, st.Requests, st.ErrorsByKind, st.Details, slow[i])
		want := map[string]loadgen.ErrKind{"broken": loadgen.ErrStatus, "no marker": loadgen.ErrCheck}[st.Name]
		switch {
		case st.Requests == 0:
			t.Errorf("%s: step %s never ran", engine, st.Name)
		case want == "" && st.Errors != 0:
			t.Errorf("%s: step %s: %d errors %v %v", engine, st.Name, st.Errors, st.ErrorsByKind, st.Details)
		case want != "" && (st.Errors != st.Requests || st.ErrorsByKind[want] != st.Requests):
			t.Errorf("%s: step %s: errors %v, want all %s", engine, st.Name, st.ErrorsByKind, want)
		}
		if wantSlow := st.Name == "slow"; wantSlow != (slow[i] > 0) || (wantSlow && slow[i] != st.Requests) {
			t.Errorf("%s: step %s: %d slow of %d", engine, st.Name, slow[i], st.Requests)
		}
	}
}
