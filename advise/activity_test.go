package advise

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/collect"
)

// withCPU gives the fixture's Linux layer an interval of 10 s with the
// host busy at busy (share of all cores) and services using the cores
// given (name → cores; the busiest process of each takes all of it).
func withCPU(s *collect.Snapshot, busy float64, cores map[string]float64) {
	l := s.Linux
	l.IntervalSeconds = 10
	l.CPU = &collect.HostCPU{Busy: busy, BusyCores: busy * float64(l.Cores)}
	l.Services = nil
	for _, name := range []string{"mysqld", "mariadbd", "nginx", "php-fpm*", "redis-server", "memcached", "myapp"} {
		c, ok := cores[name]
		if !ok {
			continue
		}
		cs, cc, b := c*10, c, c
		l.Services = append(l.Services, collect.Service{Name: name, Processes: 1, Threads: 4, CPUSeconds: &cs, CPUCores: &cc, BusiestCores: &b})
	}
}

// TestIdleSaysSo: an interval in which the server ran almost nothing is
// said to be idle, naming the rules that read its rates, instead of
// their silence passing for a healthy server.
func TestIdleSaysSo(t *testing.T) {
	cases := []struct {
		name  string
		setup func(s *collect.Snapshot)
		want  []string // substrings of one NotSeen line; nil: no idle line
	}{
		{name: "busy MySQL: nothing said", setup: func(s *collect.Snapshot) { setDelta(s, "Questions", 50000) }},
		{name: "idle MySQL: said, with the rules", setup: func(s *collect.Snapshot) { setDelta(s, "Questions", 4) },
			want: []string{"mysql: the server was idle during the 10 s interval (3 client statements)", "mysql-tmp-table-size", "mysql-aborted-connects", "under its usual load"}},
		{name: "one reading: the interval note, no idle one", setup: func(s *collect.Snapshot) {
			setDelta(s, "Questions", 4)
			s.MySQL.Status.Second = nil
		}},
		{name: "idle host CPU", setup: func(s *collect.Snapshot) {
			setDelta(s, "Questions", 50000)
			withCPU(s, 0.01, map[string]float64{"mysqld": 0.01})
		}, want: []string{"linux: the host's CPUs were 1% busy during the 10 s interval", "linux-cpu-by-service"}},
		{name: "idle memcached", setup: func(s *collect.Snapshot) {
			setDelta(s, "Questions", 50000)
			s.Memcached = &collect.Memcached{Addr: "127.0.0.1:11211", Stats: map[string]string{}, Settings: map[string]string{},
				Interval: &collect.CounterInterval{Seconds: 10, Deltas: map[string]float64{"cmd_get": 2, "cmd_set": 1}}}
		}, want: []string{"memcached: 3 gets and sets during the 10 s interval", "memcached-hit-ratio"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := snapFor(serverNamed(t, ""))
			tc.setup(s)
			res := Audit(s, Options{})
			var line string
			for _, n := range res.NotSeen {
				if strings.Contains(n, "idle") || strings.Contains(n, "gets and sets during") || strings.Contains(n, "busy during") {
					line = n
				}
			}
			if tc.want == nil {
				if line != "" {
					t.Errorf("said idle: %s", line)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q does not say %q (not seen: %q)", line, w, res.NotSeen)
				}
			}
		})
	}
}

func TestLinuxCPUByService(t *testing.T) {
	runRuleCases(t, linuxCPUByService, []ruleCase{
		{name: "no interval: silent", fires: false},
		{name: "idle host: silent (the idle note says it)", setup: func(s *collect.Snapshot) { withCPU(s, 0.01, map[string]float64{"mysqld": 0.05}) }, fires: false},
		{name: "the ISUCON5 runner-up: MySQL at 300% on a saturated host", setup: func(s *collect.Snapshot) {
			s.Linux.Cores = 4
			withCPU(s, 0.95, map[string]float64{"mysqld": 3.0, "nginx": 0.2, "php-fpm*": 0.5})
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Title, "The CPU is the bottleneck: 3.8 of 4 cores busy over the interval, 3.0 of them mysqld")
			wantText(t, fs[0].Effect, "stacktune digest")
			wantNoChange(t, fs)
			if fs[0].Evidence[1].What != "mysqld (1 processes, 4 threads)" || fs[0].Evidence[1].Value != "3.00 cores (300%)" {
				t.Errorf("the busiest service first: %+v", fs[0].Evidence)
			}
		}},
		{name: "the app is the busiest, host not saturated: information", setup: func(s *collect.Snapshot) {
			withCPU(s, 0.4, map[string]float64{"mysqld": 0.3, "php-fpm*": 2.5})
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Info)
			wantText(t, fs[0].Title, "php-fpm used 2.50 cores")
			wantText(t, fs[0].Effect, "app-workers")
		}},
		{name: "Redis at 97% of its one thread on an idle-ish host", setup: func(s *collect.Snapshot) {
			withCPU(s, 0.15, map[string]float64{"redis-server": 0.97, "mysqld": 0.1})
		}, fires: true, check: func(t *testing.T, fs []Finding) {
			wantSeverity(t, fs, Warning)
			wantText(t, fs[0].Title, "A redis-server process used 97% of one core")
			wantText(t, fs[0].Effect, "one thread")
		}},
		{name: "an app given with --app-process", setup: func(s *collect.Snapshot) {
			s.Linux.AppProcesses = []string{"myapp"}
			withCPU(s, 0.5, map[string]float64{"myapp": 3.5})
		}, fires: true, check: func(t *testing.T, fs []Finding) { wantText(t, fs[0].Effect, "app-workers") }},
	})
}
