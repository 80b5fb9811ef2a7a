package advise

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
)

// withPool adds a PHP-FPM layer with one pool "www": its settings, and
// with requests > 0 an interval of 10 s in which it accepted them (one
// more: the collector's own status request), every worker's last request
// lasting wall ms.
func withPool(settings map[string]string, requests, reached float64, wallMS int64) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		p := collect.PHPFPMPool{Name: "www", File: "/etc/php/8.2/fpm/pool.d/www.conf", Line: 1, Settings: settings,
			Defaults: map[string]string{"pm.max_requests": "0", "request_terminate_timeout": "0"}}
		for k := range settings {
			delete(p.Defaults, k)
		}
		if requests > 0 {
			p.Status = &collect.PHPFPMStatus{ProcessManager: settings["pm"], AcceptedConn: 100000, ActiveProcesses: 3}
			for i := 0; i < 5; i++ {
				p.Status.Processes = append(p.Status.Processes, collect.PHPFPMProcess{PID: int64(100 + i), State: "Idle", Requests: 40, RequestDurationUS: wallMS * 1000, LastRequestCPU: 40})
			}
			p.Interval = &collect.CounterInterval{Seconds: 10, Deltas: map[string]float64{"accepted_conn": requests + 1, "max_children_reached": reached}}
		}
		if err := s.SetLayer("php_fpm", collect.PHPFPM{Config: "/etc/php/8.2/fpm/php-fpm.conf", Pools: []collect.PHPFPMPool{p}}); err != nil {
			panic(err)
		}
	}
}

// phpCPU gives the host busy share and php-fpm's CPU over a 10 s interval
// (cores busy), with runQueue seconds spent waiting for a CPU.
func phpCPU(busy, cores, runQueue float64) func(s *collect.Snapshot) {
	return func(s *collect.Snapshot) {
		withCPU(s, busy, map[string]float64{"php-fpm*": cores})
		for i := range s.Linux.Services {
			s.Linux.Services[i].Processes, s.Linux.Services[i].Workers = 51, 50
			if runQueue > 0 {
				q := runQueue
				s.Linux.Services[i].RunQueueSeconds = &q
			}
		}
	}
}

func both(fs ...func(*collect.Snapshot)) func(*collect.Snapshot) {
	return func(s *collect.Snapshot) {
		for _, f := range fs {
			f(s)
		}
	}
}

func TestAppWorkers(t *testing.T) {
	static50 := map[string]string{"pm": "static", "pm.max_children": "50", "pm.status_path": "/status"}
	runRuleCases(t, appWorkers, []ruleCase{
		{name: "no PHP-FPM, no app server: silent", fires: false},
		// The smartphone game backend: 8 cores, 1800 requests in 10 s using 72 CPU seconds
		// (40 ms each, the host 90% busy); a request lasts 100 ms, none of
		// it waiting for a CPU: 8 × 100 / 40 = 20 workers, not 50.
		{name: "the smartphone game backend: 50 children on 8 cores, CPU-bound: decrease to 20", setup: both(phpCPU(0.9, 7.2, 0), withPool(static50, 1800, 0, 100)), fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantSeverity(t, fs, Warning)
				wantChange(t, fs, "pm.max_children", "20")
				if fs[0].Change.Direction != Decrease || fs[0].Change.Target != "php-fpm pool www" || fs[0].Layer != LayerApp {
					t.Errorf("change %+v layer %s", fs[0].Change, fs[0].Layer)
				}
				wantText(t, describe(fs), "50 workers, more than the 20 that 8 cores keep busy")
			}},
		// The same, but the 100 ms include 60 ms waiting for a CPU
		// (oversubscribed): 40 ms of real response time, 8 workers.
		{name: "time waiting for a CPU is not counted as I/O", setup: both(phpCPU(0.95, 7.2, 108), withPool(static50, 1800, 0, 100)), fires: true,
			check: func(t *testing.T, fs []Finding) { wantChange(t, fs, "pm.max_children", "8") }},
		{name: "the CPU has room: no decrease", setup: both(phpCPU(0.3, 2.4, 0), withPool(static50, 600, 0, 100)), fires: false},
		{name: "within a quarter of the sizing: silent", setup: both(phpCPU(0.9, 7.2, 0), withPool(map[string]string{"pm": "static", "pm.max_children": "24", "pm.status_path": "/status"}, 1800, 0, 100)), fires: false},
		// I/O-bound: 5 children always full, 2 ms of CPU in a 200 ms
		// request, CPU 10% busy: up to 10 (twice), the cores could use 800.
		{name: "every child busy while the CPU is idle: increase", setup: both(phpCPU(0.1, 0.1, 0), withPool(map[string]string{"pm": "dynamic", "pm.max_children": "5", "pm.status_path": "/status"}, 500, 37, 200)), fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "pm.max_children", "10")
				wantText(t, fs[0].Risk.Memory, "memory")
			}},
		{name: "a dynamic pool keeps its spare servers below the new maximum", setup: both(phpCPU(0.9, 7.2, 0),
			withPool(map[string]string{"pm": "dynamic", "pm.max_children": "50", "pm.start_servers": "30", "pm.min_spare_servers": "10", "pm.max_spare_servers": "35", "pm.status_path": "/status"}, 1800, 0, 100)),
			fires: true, check: func(t *testing.T, fs []Finding) {
				wantChange(t, fs, "pm.max_children", "20")
				wantChange(t, fs, "pm.start_servers", "20")
				wantChange(t, fs, "pm.max_spare_servers", "20")
				if change(fs, "pm.min_spare_servers") != nil {
					t.Error("min_spare_servers 10 is below 20 already")
				}
			}},
		{name: "no status page: nothing measured, silent", setup: both(phpCPU(0.9, 7.2, 0), withPool(map[string]string{"pm": "static", "pm.max_children": "50"}, 0, 0, 0)), fires: false},
		{name: "children full but no CPU measured: said, no number", setup: both(withPool(static50, 1800, 12, 100), func(s *collect.Snapshot) { s.Linux.Cores = 0 }), fires: true,
			check: func(t *testing.T, fs []Finding) {
				wantNoChange(t, fs)
				wantText(t, fs[0].Effect, "CPU per request")
			}},
		{name: "unicorn with 40 workers on 8 saturated cores: information, no number", setup: func(s *collect.Snapshot) {
			withCPU(s, 0.95, map[string]float64{})
			cores, secs := 7.5, 75.0
			s.Linux.Services = []collect.Service{{Name: "unicorn", Processes: 41, Workers: 40, Threads: 82, CPUCores: &cores, CPUSeconds: &secs, BusiestCores: &cores}}
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "unicorn runs 40 workers on 8 cores")
			wantText(t, fs[0].Change.To, "stacktune plan --cores --cpu-per-request")
		}},
	})
}

func TestPHPFPMLimits(t *testing.T) {
	runRuleCases(t, phpfpmLimits, []ruleCase{
		{name: "no PHP-FPM: silent", fires: false},
		{name: "the smartphone game backend's settings: silent", setup: withPool(map[string]string{"pm": "static", "pm.max_children": "20", "pm.max_requests": "2000", "request_terminate_timeout": "30"}, 0, 0, 0), fires: false},
		{name: "the defaults: recycle after 2000, stop at 30 s", setup: withPool(map[string]string{"pm": "dynamic", "pm.max_children": "5"}, 100, 0, 50), fires: true,
			check: func(t *testing.T, fs []Finding) {
				if len(fs) != 2 {
					t.Fatalf("%d findings", len(fs))
				}
				wantChange(t, fs, "pm.max_requests", "2000")
				wantChange(t, fs, "request_terminate_timeout", "30s")
				wantText(t, fs[0].Evidence[0].Source, "not set: PHP-FPM's default")
				wantText(t, describe(fs), "never recycles")
			}},
		{name: "0s is no limit too", setup: withPool(map[string]string{"pm": "static", "pm.max_children": "5", "pm.max_requests": "500", "request_terminate_timeout": "0s"}, 0, 0, 0), fires: true,
			check: func(t *testing.T, fs []Finding) {
				if len(fs) != 1 || !strings.Contains(fs[0].Title, "request_terminate_timeout") {
					t.Errorf("%s", describe(fs))
				}
			}},
	})
}
