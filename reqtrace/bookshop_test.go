package reqtrace

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// avgRatingID is the bookshop's N+1: one average per book of an author.
var avgRatingID = fingerprint.MergedID(fingerprint.Fingerprint("SELECT AVG(rating) FROM reviews WHERE book_id = ?"))

// startBookshop builds and starts testdata/bookshop on dsn with extra
// flags, loads its data and returns its base URL.
func startBookshop(t *testing.T, dsn string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bookshop")
	if out, err := exec.Command("go", "build", "-o", bin, "../testdata/bookshop").CombinedOutput(); err != nil {
		t.Fatalf("building the bookshop: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-listen", addr, "-dsn", dsn}, flags...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Post(base+"/initialize", "text/plain", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("initialize: %s", resp.Status)
			}
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bookshop did not start: %v", err)
		}
	}
}

// booksShown fetches an author's page and counts the books it lists.
func booksShown(t *testing.T, base string, author int, header http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/authors/%d", base, author), nil)
	maps := req.Header
	for k, v := range header {
		maps[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Count(string(b), "<li class=book>")
}

// TestTraceBookshopProxy is the trace run on the second app, one request
// at a time: the average rating per book of /authors/{id} is reported as
// many times per request as the page lists books.
func TestTraceBookshopProxy(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if _, err := m.DB().Exec("CREATE DATABASE bookshop"); err != nil {
		t.Fatal(err)
	}
	tap := NewTap()
	p, err := mysqlproxy.Start(context.Background(), mysqlproxy.Options{Network: "unix", Address: m.Socket(), OnStatement: tap.Statement})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dsn, _ := p.DSN(m.DSN("bookshop"))
	base := startBookshop(t, dsn)
	n := booksShown(t, base, 17, nil)
	if n < 2 {
		t.Fatalf("the author page lists %d books", n)
	}
	scen := filepath.Join(t.TempDir(), "bookshop.yaml")
	os.WriteFile(scen, []byte("name: bookshop\nbase_url: "+base+"\nsteps:\n  - name: author\n    url: /authors/{{rand 1 200}}\n    weight: 3\n  - name: book\n    url: /books/{{rand 1 2000}}\n    weight: 2\n"), 0o644)
	rep, _, err := Trace(context.Background(), TraceOptions{
		Bench: benchrun.Options{Scenario: scen, Load: loadgen.Options{Duration: 2 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		Tap:   tap,
	})
	if err != nil {
		t.Fatal(err)
	}
	ep, c, ok := endpointClass(rep, "GET /authors/:num", avgRatingID)
	if !ok || ep.Requests < 2 || c.Mean != float64(n) || c.Max != int64(n) {
		t.Errorf("GET /authors/:num: %d requests, the average rating %v per request (max %d), want %d: %+v", ep.Requests, c.Mean, c.Max, n, rep.Endpoints)
	}
	np, ok := findNPlusOne(rep, "GET /authors/:num", avgRatingID)
	if !ok || !strings.Contains(np.Rewrite, "GROUP BY book_id") {
		t.Errorf("N+1: %+v", np)
	}
	for _, x := range rep.NPlusOne {
		if x.Endpoint == "GET /books/:num" {
			t.Errorf("a book page flagged: %+v", x)
		}
	}
}

// TestTagsBookshopSlowLog: the bookshop tags its statements as a Rails
// app with marginalia does (controller, action, request_id) or as one
// with sqlcommenter does (route, traceparent), eight clients at once;
// every request's averages are its page's books.
func TestTagsBookshopSlowLog(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"slow_query_log": "ON", "long_query_time": "0"}})
	if _, err := m.DB().Exec("CREATE DATABASE bookshop"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format, endpoint string
		header           func(c, r int) (string, string, string) // header, value, request key
	}{
		{"marginalia", "authors#show", func(c, r int) (string, string, string) {
			id := fmt.Sprintf("req-%d-%d", c, r)
			return "X-Request-Id", id, "request:" + id
		}},
		{"sqlcommenter", "GET /authors/{id}", func(c, r int) (string, string, string) {
			trace := fmt.Sprintf("%016x%016x", c+1, r+1)
			return "traceparent", "00-" + trace + "-00f067aa0ba902b7-01", "trace:" + trace
		}},
	} {
		t.Run(c.format, func(t *testing.T) {
			base := startBookshop(t, m.DSN("bookshop"), "-sql-tags", c.format)
			start, _ := fileSize(m.SlowLogPath())
			want := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for cl := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range 4 {
						h, v, key := c.header(cl, r)
						n := booksShown(t, base, 1+(cl*37+r*11)%200, http.Header{h: {v}})
						mu.Lock()
						want[key] = n
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			end, _ := fileSize(m.SlowLogPath())
			f, err := os.Open(m.SlowLogPath())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := map[string]int64{}
			rep, err := FromSlowLog(context.Background(), []input.Input{{Name: "slow.log", R: ioSection(f, start, end)}}, Options{OnRequest: func(rc RequestCalls) {
				if rc.Endpoint == c.endpoint {
					got[rc.Request] = rc.Calls[avgRatingID]
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			for id, n := range want {
				if got[id] != int64(n) || n < 2 {
					t.Errorf("%s: %d averages, the page lists %d books", id, got[id], n)
				}
			}
			ep, cl, ok := endpointClass(rep, c.endpoint, avgRatingID)
			if !ok || ep.Requests != int64(len(want)) || cl.Max < 2 || ep.RequestTimeS != 0 {
				t.Errorf("%s: %+v %+v", c.endpoint, ep, cl)
			}
			if np, ok := findNPlusOne(rep, c.endpoint, avgRatingID); !ok || np.RequestShare != 0 {
				t.Errorf("N+1: %+v", np)
			}
		})
	}
}
