package advise

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestAppWorkersReal: a real PHP-FPM pool of 16 static workers running a
// page that only computes, kept busy by 3 clients on this host's cores,
// collected (the workers' CPU and run-queue time read with the pool's
// status at the run's start and end, the host's CPU) and audited: the CPU
// per request and the response time without the wait for a CPU say the
// cores keep about as many workers busy as they are (a few more when the
// clients, starved on a busy machine, keep workers waiting), so 16 is too many:
// decrease. Nothing is asserted about speed (the machine is shared); the
// decision needs the CPU busy, which 3 spinning clients and their workers
// make it on a host with 2 cores.
func TestAppWorkersReal(t *testing.T) {
	ctx := context.Background()
	p := sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Pool: map[string]string{"pm": "static", "pm.max_children": "16"},
		Scripts: map[string]string{"cpu.php": `<?php $x = 0; for ($i = 0; $i < 500000; $i++) { $x += $i % 7; } echo $x;`}})
	lin := collect.NewLinux(collect.LinuxOptions{Processes: []string{"php-fpm*"}, Interval: 2 * time.Second})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served, failed atomic.Int64
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if resp, err := p.Request(ctx, "cpu.php", ""); err != nil || resp.Status != 200 {
					failed.Add(1)
				} else {
					served.Add(1)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the workers are busy before the first reading
	s := collect.Run(ctx, []collect.Collector{lin, collect.NewPHPFPM(p.ConfigPath(), 0)})
	close(stop)
	wg.Wait()
	if len(s.Errors) > 0 || failed.Load() > 0 {
		t.Fatalf("collector errors %+v, %d failed requests", s.Errors, failed.Load())
	}
	if s.Linux.Cores >= 6 {
		t.Skipf("%d cores: 3 clients do not make the CPU busy here", s.Linux.Cores) // documented bound of the test
	}
	res := audit(s, Options{}, []Rule{appWorkers})
	var f *Finding
	for i := range res.Findings {
		if res.Findings[i].ID == "app-workers" {
			f = &res.Findings[i]
		}
	}
	if f == nil || f.Change == nil {
		l, _ := collect.LayerOf[collect.PHPFPM](s, "php_fpm")
		b, _ := json.Marshal(map[string]any{"cpu": s.Linux.CPU, "interval": s.Linux.IntervalSeconds, "services": s.Linux.Services, "pools": l})
		t.Fatalf("no app-workers change after %d requests:%s\n%s", served.Load(), describe(res.Findings), b)
	}
	to, _ := strconv.Atoi(f.Change.To)
	if f.Change.Kind != changeset.PHPFPM || f.Change.Name != "pm.max_children" || f.Change.Direction != Decrease || to < s.Linux.Cores || to >= 16 {
		t.Errorf("change %+v on %d cores", f.Change, s.Linux.Cores)
	}
	t.Logf("%d requests; %s", served.Load(), describe([]Finding{*f}))
	for _, e := range f.Evidence {
		t.Logf("  %s", e)
	}
}
