package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/phpfpmconf"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// cpuScript burns some CPU per request, as an app page does: tens of
// milliseconds, above the 10 ms ticks PHP-FPM measures a request's CPU in.
const cpuScript = `<?php $x = 0; for ($i = 0; $i < 3000000; $i++) { $x += $i % 7; } echo $x;`

// TestPHPFPM reads a real pool: its settings with PHP-FPM's defaults,
// its status over FastCGI at the run's start and end (the requests made
// in between are the interval's accepted connections), and the last
// requests' duration and CPU.
func TestPHPFPM(t *testing.T) {
	ctx := context.Background()
	p := sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Pool: map[string]string{"pm": "static", "pm.max_children": "3", "request_terminate_timeout": "30s"},
		Scripts: map[string]string{"cpu.php": cpuScript}})
	waitWorkers(t, p.ConfigPath(), 3)
	c := NewPHPFPM(p.ConfigPath(), 0)
	if err := c.(Starter).Start(ctx); err != nil {
		t.Fatal(err)
	}
	const requests = 12
	for i := 0; i < requests; i++ {
		if resp, err := p.Request(ctx, "cpu.php", ""); err != nil || resp.Status != 200 {
			t.Fatalf("cpu.php: %+v %v", resp, err)
		}
	}
	var s Snapshot
	if err := c.Collect(ctx, &s); err != nil {
		t.Fatal(err)
	}
	l, err := LayerOf[PHPFPM](&s, "php_fpm")
	if err != nil || l == nil || len(l.Pools) != 1 {
		t.Fatalf("layer %+v %v", l, err)
	}
	pool := l.Pools[0]
	for k, want := range map[string]string{"pm": "static", "pm.max_children": "3", "request_terminate_timeout": "30s", "pm.max_requests": "0", "pm.status_path": "/status"} {
		if got, _ := pool.Value(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, set := pool.Settings["pm.max_requests"]; set {
		t.Error("a default reported as set")
	}
	if pool.ListenNetwork != "unix" || pool.ListenAddr != p.Socket() || pool.Name != "www" || pool.File != p.PoolPath() {
		t.Errorf("pool %+v", pool)
	}
	st := pool.Status
	if st == nil || st.ProcessManager != "static" || st.TotalProcesses != 3 || len(st.Processes) != 3 {
		t.Fatalf("status %+v (%s)", st, pool.StatusError)
	}
	// The status request of the second reading is accepted too.
	if iv := pool.Interval; iv == nil || iv.Deltas["accepted_conn"] != requests+1 {
		t.Errorf("interval %+v, want %d accepted connections", pool.Interval, requests+1)
	}
	// The workers' CPU over the same interval, from /proc: about the
	// requests' CPU (each ran on a worker listed at both readings).
	if c := pool.CPU; c == nil || c.Workers != 3 || c.Of != 3 || c.Seconds <= 0 || c.RunQueueSeconds < 0 {
		t.Errorf("pool CPU %+v", pool.CPU)
	}
	d, cpu, n := st.LastRequests()
	// PHP-FPM counts a request's CPU in 10 ms ticks: about the duration,
	// give or take a tick.
	if n == 0 || d <= 0 || cpu <= 0 || cpu > d+0.011 {
		t.Errorf("last requests: %v s, %v s of CPU over %d", d, cpu, n)
	}
}

// waitWorkers waits until the pool's status lists n workers by pid. A
// worker writes its pid into the scoreboard itself once it runs, which on
// a loaded machine can be after the master said it was ready: until then
// the status lists it with pid 0 and the CPU reading cannot count it.
func waitWorkers(t *testing.T, conf string, n int) {
	t.Helper()
	cfg, err := phpfpmconf.Load(conf)
	if err != nil || len(cfg.Pools) != 1 {
		t.Fatal(cfg, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := poolStatus(context.Background(), cfg.Pools[0])
		listed := 0
		if err == nil {
			for _, p := range st.Processes {
				if p.PID > 0 {
					listed++
				}
			}
		}
		if listed == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers listed by pid (%v)", listed, n, err)
		}
	}
}

// TestPHPFPMWithoutStatus: a pool without a status page is read from its
// files and says why it has no status, which is no error; a pool whose
// status page does not answer is.
func TestPHPFPMWithoutStatus(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	conf := filepath.Join(dir, "php-fpm.conf")
	sock := filepath.Join(dir, "none.sock")
	body := fmt.Sprintf("[global]\n[quiet]\nlisten = %s\npm = ondemand\npm.max_children = 8\n[dead]\nlisten = %s\npm = static\npm.max_children = 2\npm.status_path = /status\n", sock, sock)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Run(ctx, []Collector{NewPHPFPM(conf, 0)})
	l, err := LayerOf[PHPFPM](s, "php_fpm")
	if err != nil || l == nil || len(l.Pools) != 2 {
		t.Fatalf("layer %+v %v", l, err)
	}
	if l.Pools[1].Name != "quiet" || !strings.Contains(l.Pools[1].StatusError, "pm.status_path is not set") {
		t.Errorf("quiet: %+v", l.Pools[1])
	}
	if len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error, "pool dead") || !s.Errors[0].Partial {
		t.Errorf("errors %+v", s.Errors)
	}
	if s := Run(ctx, []Collector{NewPHPFPM(filepath.Join(dir, "missing.conf"), 0)}); len(s.Errors) != 1 || s.Has("php_fpm") {
		t.Errorf("a missing file: %+v", s.Errors)
	}
}

func TestParsePHPFPMStatus(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"not JSON", "pool: www\n", "not PHP-FPM's JSON"},
		{"another JSON", `{"status": "ok"}`, "no process manager"},
	}
	for _, tc := range cases {
		if _, err := parsePoolStatus([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	st, err := parsePoolStatus([]byte(`{"pool":"www","process manager":"dynamic","accepted conn":10,"processes":[{"pid":1,"state":"Idle","requests":3,"request duration":20000,"last request cpu":50},{"pid":2,"state":"Running","requests":1,"request duration":99,"last request cpu":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d, cpu, n := st.LastRequests(); n != 1 || d != 0.02 || cpu != 0.01 {
		t.Errorf("last requests %v %v %d", d, cpu, n)
	}
}

func FuzzParsePHPFPMStatus(f *testing.F) {
	f.Add(`{"pool":"www","process manager":"static","processes":[{"pid":1,"state":"Idle","requests":1,"request duration":5,"last request cpu":1}]}`)
	f.Add(`{"process manager":"x","processes":null}`)
	f.Fuzz(func(t *testing.T, in string) {
		st, err := parsePoolStatus([]byte(in))
		if err != nil {
			return
		}
		if len(st.Processes) > maxStatusProcesses {
			t.Fatal("unbounded")
		}
		if d, cpu, n := st.LastRequests(); n < 0 || (n > 0 && d <= 0) || cpu != cpu {
			t.Fatalf("%v %v %d", d, cpu, n)
		}
	})
}
