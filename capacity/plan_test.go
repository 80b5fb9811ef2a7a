package capacity

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// timeWaitPlan is the TIME_WAIT write-up's plan: 100 Apache web servers × 255 workers, each to
// serve 900 req/s (90000 in all), PHP without persistent connections, one
// MySQL server. The write-up gives no response time for the plan; 10.289 ms is
// the mean of its own ab run. Live sockets are the write-up's 1024 = 4 × 256
// httpd (it counts 256 there but 255 for max_connections).
func timeWaitPlan() Options {
	o := DefaultOptions()
	o.Rate = 90000
	o.Servers = 100
	o.Workers = 255
	o.ResponseTime = 10289 * time.Microsecond
	o.LiveSockets = 1024
	return o
}

func find(p *Report, id string) *Result {
	for i := range p.Results {
		if p.Results[i].ID == id {
			return &p.Results[i]
		}
	}
	return nil
}

func TestCompute(t *testing.T) {
	cases := []struct {
		name    string
		opts    func(o *Options)
		values  map[string]float64 // result ID → value
		setting map[string]string  // result ID → setting value
		warn    map[string]string  // result ID → substring of a warning
		nowarn  []string           // result IDs that must have no warning
		absent  []string           // result IDs that must not be there
	}{
		{
			// The write-up's worked numbers, exactly: 25500 connections, 30349
			// files, 54000 TIME_WAIT + 1024 live = 55024 sockets,
			// tcp_max_tw_buckets 65536. The port range differs by one from
			// the write-up's 10511 65535, see TestTimeWaitPortArithmetic.
			name: "the PHP + MySQL TIME_WAIT write-up",
			opts: func(o *Options) {},
			values: map[string]float64{
				IDMaxConnections: 25500, IDOpenFilesLimit: 30349, IDMySQLLimitNOFILE: 30349,
				IDTimeWaitWeb: 54000, IDSocketsWeb: 55024, IDPortRange: 55024, IDTimeWaitDB: 0,
				IDConcurrency: 926.01, IDThreadCacheSize: 927, IDCacheConnections: 25532,
			},
			setting: map[string]string{
				IDMaxConnections: "25500", IDOpenFilesLimit: "30349", IDMySQLLimitNOFILE: "30349",
				IDTimeWaitWeb: "65536", IDPortRange: "10512 65535", IDTimeWaitDB: "4096",
				IDThreadCacheSize: "927", IDCacheConnections: "25532",
			},
			warn:   map[string]string{IDTimeWaitWeb: "tcp_max_tw_buckets 4096 is below the 54000", IDPortRange: "gives 28232 ports, fewer than 55024"},
			nowarn: []string{IDConcurrency, IDMaxConnections, IDOpenFilesLimit, IDTimeWaitDB},
			absent: []string{IDServersNeeded},
		},
		{
			// Without the write-up's explicit 1024, live sockets are 4 per
			// worker: 4 × 255 = 1020.
			name:    "the PHP + MySQL TIME_WAIT write-up, live sockets derived from workers",
			opts:    func(o *Options) { o.LiveSockets = 0 },
			values:  map[string]float64{IDSocketsWeb: 55020, IDPortRange: 55020},
			setting: map[string]string{IDPortRange: "10516 65535"},
		},
		{
			// The TIME_WAIT write-up's ab run: 1555.02 req/s at a mean of 10.289 ms
			// with concurrency 16. Little's law gives back the 16.
			name: "the PHP + MySQL TIME_WAIT write-up ab run, Little's law",
			opts: func(o *Options) {
				o.Rate, o.Servers, o.Workers = 1555.02, 1, 16
			},
			values:  map[string]float64{IDConcurrency: 15.9996},
			setting: map[string]string{IDConcurrency: "20"},
			warn:    map[string]string{IDConcurrency: "100.0% busy"},
		},
		{
			name:    "persistent connections leave no TIME_WAIT per request",
			opts:    func(o *Options) { o.Persistent = true },
			values:  map[string]float64{IDTimeWaitWeb: 0, IDTimeWaitDB: 0, IDSocketsWeb: 1024, IDPortRange: 1024, IDMaxConnections: 25500, IDThreadCacheSize: 100},
			setting: map[string]string{IDPortRange: "32768 60999", IDTimeWaitWeb: "4096", IDTimeWaitDB: "4096", IDThreadCacheSize: "100"},
			nowarn:  []string{IDTimeWaitWeb, IDPortRange, IDTimeWaitDB},
		},
		{
			// If MySQL closed first, the 90000 × 60 TIME_WAITs land on
			// the one MySQL server, and the web servers need only live
			// ports.
			name:    "MySQL closes first",
			opts:    func(o *Options) { o.Closer = CloserDB },
			values:  map[string]float64{IDTimeWaitWeb: 0, IDTimeWaitDB: 5400000, IDSocketsWeb: 1024},
			setting: map[string]string{IDTimeWaitDB: "8388608", IDTimeWaitWeb: "4096", IDPortRange: "32768 60999"},
			warn:    map[string]string{IDTimeWaitDB: "below the 5400000 TIME_WAIT sockets on the MySQL server"},
			nowarn:  []string{IDPortRange},
		},
		{
			// 1080 req/s per server × 60 s + 1024 = 65824 ports: more
			// than 1024..65535 holds. (64512 - 1024) / 60 = 1058.13 req/s
			// per server fits, so 108000 req/s needs 103 servers.
			name:    "headroom 1.2 on the PHP + MySQL TIME_WAIT write-up runs out of ports",
			opts:    func(o *Options) { o.Headroom = 1.2 },
			values:  map[string]float64{IDTimeWaitWeb: 64800, IDSocketsWeb: 65824, IDMaxConnections: 25500, IDConcurrency: 1111.21},
			setting: map[string]string{IDPortRange: "1024 65535", IDTimeWaitWeb: "65536"},
			warn:    map[string]string{IDPortRange: "no range is enough. Spread the rate over more web servers (103 keep each under 1058.13 req/s)"},
		},
		{
			name:    "workers are the bottleneck",
			opts:    func(o *Options) { o.Rate, o.Servers, o.Workers, o.ResponseTime = 1000, 2, 10, 50*time.Millisecond },
			values:  map[string]float64{IDConcurrency: 50},
			setting: map[string]string{IDConcurrency: "32"},
			warn:    map[string]string{IDConcurrency: "workers are the bottleneck: 50 requests are in flight on average but there are only 20 workers"},
		},
		{
			name:    "workers busy but not saturated",
			opts:    func(o *Options) { o.Rate, o.Servers, o.Workers, o.ResponseTime = 340, 2, 10, 50*time.Millisecond },
			values:  map[string]float64{IDConcurrency: 17},
			setting: map[string]string{IDConcurrency: "11"},
			warn:    map[string]string{IDConcurrency: "85.0% busy"},
		},
		{
			name:    "servers needed, the TIME_WAIT write-up's 935 req/s per server",
			opts:    func(o *Options) { o.PerServerRate = 935 },
			values:  map[string]float64{IDServersNeeded: 97},
			setting: map[string]string{IDServersNeeded: "97"},
			nowarn:  []string{IDServersNeeded},
		},
		{
			// The smartphone game backend does not give its rates; made up: a 12000 req/s
			// peak at 300 req/s per server needs its 40 servers.
			name: "servers needed, the smartphone game backend before tuning (made-up rates)",
			opts: func(o *Options) {
				o.Rate, o.Servers, o.Workers, o.ResponseTime, o.PerServerRate = 12000, 40, 20, 50*time.Millisecond, 300
			},
			values: map[string]float64{IDServersNeeded: 40},
			nowarn: []string{IDServersNeeded},
		},
		{
			name: "servers needed, the smartphone game backend after tuning (made-up rates)",
			opts: func(o *Options) {
				o.Rate, o.Servers, o.Workers, o.ResponseTime, o.PerServerRate = 12000, 40, 20, 20*time.Millisecond, 1000
			},
			values: map[string]float64{IDServersNeeded: 12},
		},
		{
			// ceil(12000 × 1.2 / 1000) = ceil(14.4) = 15.
			name: "servers needed with headroom",
			opts: func(o *Options) {
				o.Rate, o.Servers, o.Workers, o.ResponseTime, o.PerServerRate, o.Headroom = 12000, 40, 20, 20*time.Millisecond, 1000, 1.2
			},
			values: map[string]float64{IDServersNeeded: 15},
		},
		{
			name: "too few servers",
			opts: func(o *Options) {
				o.Rate, o.Servers, o.Workers, o.ResponseTime, o.PerServerRate = 12000, 10, 20, 20*time.Millisecond, 300
			},
			values: map[string]float64{IDServersNeeded: 40},
			warn:   map[string]string{IDServersNeeded: "the 10 servers given are 30 short"},
		},
		{
			name:   "no cache",
			opts:   func(o *Options) { o.CacheClientsPerWorker = 0 },
			absent: []string{IDCacheConnections},
		},
		{
			name:    "small fleet keeps memcached's default -c",
			opts:    func(o *Options) { o.Servers, o.Workers, o.CacheClientsPerWorker = 4, 20, 2 },
			values:  map[string]float64{IDCacheConnections: 192},
			setting: map[string]string{IDCacheConnections: "1024"},
		},
		{
			name:    "current range and buckets are enough",
			opts:    func(o *Options) { o.Rate, o.TWBuckets = 10000, 262144 },
			values:  map[string]float64{IDTimeWaitWeb: 6000, IDSocketsWeb: 7024},
			setting: map[string]string{IDPortRange: "32768 60999", IDTimeWaitWeb: "262144"},
			nowarn:  []string{IDPortRange, IDTimeWaitWeb},
		},
		{
			name:    "admin connections",
			opts:    func(o *Options) { o.AdminConnections = 10 },
			values:  map[string]float64{IDMaxConnections: 25510, IDOpenFilesLimit: 30359},
			setting: map[string]string{IDMaxConnections: "25510"},
		},
		{
			name:   "max_connections above MySQL's maximum",
			opts:   func(o *Options) { o.Servers, o.Workers = 1000, 200 },
			values: map[string]float64{IDMaxConnections: 200000},
			warn:   map[string]string{IDMaxConnections: "above max_connections' maximum of 100000"},
		},
		{
			// 16384 caps the cache: 90000 req/s × 0.5 s = 45000 in flight.
			name:    "thread cache capped at MySQL's maximum",
			opts:    func(o *Options) { o.ResponseTime = 500 * time.Millisecond },
			values:  map[string]float64{IDThreadCacheSize: 16384, IDConcurrency: 45000},
			setting: map[string]string{IDThreadCacheSize: "16384"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := timeWaitPlan()
			tc.opts(&o)
			p, err := Compute(o)
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range tc.values {
				r := find(p, id)
				if r == nil {
					t.Errorf("%s: missing", id)
					continue
				}
				if math.Abs(r.Value-want) > 1e-9*math.Max(1, want) {
					t.Errorf("%s = %v, want %v (%s)", id, r.Value, want, r.Calculation)
				}
			}
			for id, want := range tc.setting {
				r := find(p, id)
				if r == nil || r.Setting == nil {
					t.Errorf("%s: no setting", id)
					continue
				}
				if r.Setting.Value != want {
					t.Errorf("%s setting %s = %q, want %q", id, r.Setting.Name, r.Setting.Value, want)
				}
			}
			for id, want := range tc.warn {
				r := find(p, id)
				if r == nil || !strings.Contains(strings.Join(r.Warnings, "\n"), want) {
					t.Errorf("%s: no warning containing %q in %+v", id, want, r)
				}
			}
			for _, id := range tc.nowarn {
				if r := find(p, id); r == nil || len(r.Warnings) > 0 {
					t.Errorf("%s: unexpected warnings %+v", id, r)
				}
			}
			for _, id := range tc.absent {
				if find(p, id) != nil {
					t.Errorf("%s present", id)
				}
			}
			for _, r := range p.Results {
				if r.Formula == "" || r.Calculation == "" || r.Source == "" || r.Title == "" || r.Unit == "" {
					t.Errorf("%s lacks its evidence: %+v", r.ID, r)
				}
			}
		})
	}
}

// TestTimeWaitPortArithmetic documents where the TIME_WAIT write-up's port arithmetic is off
// by one and why plan's range differs from the write-up's.
func TestTimeWaitPortArithmetic(t *testing.T) {
	// The write-up: "32768 - 60999 = 28231". Both ends are in the range, so
	// it holds one more; the kernel's own comment in __inet_hash_connect
	// reads "[32768, 60999] -> [32768, 61000[".
	if n := DefaultPortRange.Count(); n != 28232 {
		t.Errorf("32768..60999 holds %d ports, want 28232 (the write-up's 28231 forgets the +1)", n)
	}
	// The write-up: 65535 - 55024 = 10511, so 10511..65535. That is 55025
	// ports, one more than needed; connect() rounds the count down to an
	// even number (remaining &= ~1U), so 55024 are usable all the same.
	writeUp := PortRange{Low: 10511, High: 65535}
	if writeUp.Count() != 55025 || writeUp.Usable() != 55024 {
		t.Errorf("the write-up's range: %d ports, %d usable; want 55025 and 55024", writeUp.Count(), writeUp.Usable())
	}
	// plan: exactly 55024, starting on an even port (ends of different
	// parity), every port usable.
	ours, ok := rangeFor(55024)
	if !ok || ours != (PortRange{Low: 10512, High: 65535}) || ours.Count() != 55024 || ours.Usable() != 55024 {
		t.Errorf("rangeFor(55024) = %v (ok %v), %d ports", ours, ok, ours.Count())
	}
	// An odd need is made even so the range still starts on an even port.
	if r, _ := rangeFor(55023); r.Low != 10512 {
		t.Errorf("rangeFor(55023) = %v, want 10512 65535", r)
	}
	if r, ok := rangeFor(70000); ok || r != (PortRange{Low: 1024, High: 65535}) {
		t.Errorf("rangeFor(70000) = %v, %v; want the widest range and false", r, ok)
	}
	if MaxEphemeralPorts != 64512 {
		t.Errorf("MaxEphemeralPorts = %d", MaxEphemeralPorts)
	}
}

func TestParsePortRange(t *testing.T) {
	cases := []struct {
		in      string
		want    PortRange
		wantErr string
	}{
		{in: "32768 60999", want: PortRange{32768, 60999}},
		{in: "32768\t60999\n", want: PortRange{32768, 60999}}, // as sysctl -n prints it
		{in: "10512-65535", want: PortRange{10512, 65535}},
		{in: "1024,65535", want: PortRange{1024, 65535}},
		{in: "32768", wantErr: "want two ports"},
		{in: "1 2 3", wantErr: "want two ports"},
		{in: "low high", wantErr: `"low" is not a port number`},
		{in: "60999 32768", wantErr: "the first port is above the last"},
		{in: "0 100", wantErr: "ports run from 1 to 65535"},
		{in: "70000 80000", wantErr: "ports run from 1 to 65535"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePortRange(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		opts func(o *Options)
		want []string
	}{
		{"zero rate", func(o *Options) { o.Rate = 0 }, []string{"rate must be above 0"}},
		{"negative rate", func(o *Options) { o.Rate = -5 }, []string{"rate must be above 0"}},
		{"NaN rate", func(o *Options) { o.Rate = math.NaN() }, []string{"rate must be above 0"}},
		{"absurd rate", func(o *Options) { o.Rate = 5e9 }, []string{"beyond any web stack"}},
		{"zero servers", func(o *Options) { o.Servers = 0 }, []string{"servers must be at least 1 (got 0)"}},
		{"absurd servers", func(o *Options) { o.Servers = 1e6 }, []string{"servers 1000000 is more than 100000"}},
		{"negative workers", func(o *Options) { o.Workers = -1 }, []string{"workers per server must be at least 1 (got -1)"}},
		{"zero response time", func(o *Options) { o.ResponseTime = 0 }, []string{"response time must be above 0"}},
		{"absurd response time", func(o *Options) { o.ResponseTime = 2 * time.Hour }, []string{"response time 2h0m0s is more than 1h0m0s"}},
		{"unknown closer", func(o *Options) { o.Closer = "client" }, []string{`closer "client"`}},
		{"negative other files", func(o *Options) { o.OtherFiles = -1 }, []string{"other files must be 0 to 1048576"}},
		{"negative per-server rate", func(o *Options) { o.PerServerRate = -1 }, []string{"per-server rate must be 0"}},
		{"a per-server rate so small the servers overflow", func(o *Options) { o.PerServerRate = 1e-300 }, []string{"need more than 100000 servers"}},
		{"negative cache clients", func(o *Options) { o.CacheClientsPerWorker = -1 }, []string{"cache clients per worker must be 0"}},
		{"zero TIME_WAIT", func(o *Options) { o.TimeWait = 0 }, []string{"TIME_WAIT must be above 0", "on Linux it is 60s"}},
		{"reversed port range", func(o *Options) { o.PortRange = PortRange{60999, 32768} }, []string{"the first port is above the last"}},
		{"negative live sockets", func(o *Options) { o.LiveSockets = -1 }, []string{"live sockets must be 0"}},
		{"negative admin", func(o *Options) { o.AdminConnections = -1 }, []string{"admin connections must be 0"}},
		{"negative tw buckets", func(o *Options) { o.TWBuckets = -1 }, []string{"tcp_max_tw_buckets must be 0"}},
		{"headroom below 1", func(o *Options) { o.Headroom = 0.5 }, []string{"headroom must be at least 1", "less than the target rate"}},
		{"absurd headroom", func(o *Options) { o.Headroom = 50 }, []string{"headroom 50 is more than 10 times"}},
		{"zero value", func(o *Options) { *o = Options{} }, []string{"rate must", "servers must", "workers per server must", "response time must",
			"closer", "TIME_WAIT must", "port range 0 0", "headroom must"}},
		{"every problem in one message", func(o *Options) { o.Servers, o.Workers = 0, 0 }, []string{"servers must be at least 1 (got 0); workers per server must"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := timeWaitPlan()
			tc.opts(&o)
			p, err := Compute(o)
			if err == nil || p != nil {
				t.Fatalf("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if err := timeWaitPlan().Validate(); err != nil {
		t.Errorf("the PHP + MySQL TIME_WAIT write-up rejected: %v", err)
	}
}

func TestNum(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{{25500, "25500"}, {90000 * 0.010289, "926.01"}, {0.010289, "0.010289"}, {1e6, "1000000"}, {96.25668449, "96.2567"}, {0, "0"}}
	for _, c := range cases {
		if got := Num(c.in); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if ceil(900*60.000000000001) != 54000 || ceil(96.01) != 97 || nextPow2(54000) != 65536 || nextPow2(65536) != 65536 {
		t.Error("ceil or nextPow2")
	}
}

// TestMySQLOpenFiles: the one derivation of open_files_limit that plan
// and the audit share, against the TIME_WAIT write-up's worked figures.
func TestMySQLOpenFiles(t *testing.T) {
	cases := []struct {
		name          string
		toc, conns, n int64
	}{
		{"the PHP + MySQL TIME_WAIT write-up: the floor, 4849 + 25500", 0, 25500, 30349},
		{"the PHP + MySQL TIME_WAIT write-up with MySQL 5.6/5.7's table cache of 2000: still the floor", 2000, 25500, 30349},
		{"MySQL 8.0's 4000 tables: 8010 + 25500", 4000, 25500, 33510},
		{"the defaults: 4849 + 151 = 5000, MySQL's own floor", 400, 151, 5000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, formula := MySQLOpenFiles(tc.toc, tc.conns)
			if n != tc.n || !strings.Contains(formula, fmt.Sprint(tc.n)) {
				t.Errorf("MySQLOpenFiles(%d, %d) = %d (%s), want %d", tc.toc, tc.conns, n, formula, tc.n)
			}
			o := DefaultOptions()
			o.Rate, o.Servers, o.Workers, o.ResponseTime, o.TableOpenCache = 90000, int(tc.conns), 1, time.Millisecond, int(tc.toc)
			p, err := Compute(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Result(IDOpenFilesLimit).Value; got != float64(tc.n) {
				t.Errorf("plan: %v, want %d", got, tc.n)
			}
		})
	}
}

// TestCPUWorkers: workers sized to the cores from the CPU per request,
// with the smartphone game backend's 50 → 20 on 8 cores; plan says decrease.
func TestCPUWorkers(t *testing.T) {
	cases := []struct {
		name       string
		cores      int
		cpu, wall  time.Duration
		workers    int
		want       int
		warn, note string
	}{
		{"the smartphone game backend: 8 cores, 40 ms of CPU in 100 ms, 50 children: decrease to 20", 8, 40 * time.Millisecond, 100 * time.Millisecond, 50, 20, "decrease workers from 50 to 20", ""},
		{"within 25%: kept", 8, 40 * time.Millisecond, 100 * time.Millisecond, 24, 20, "", ""},
		{"I/O-bound: 5 ms of CPU in 200 ms, 16 workers: up to 320 help", 8, 5 * time.Millisecond, 200 * time.Millisecond, 16, 320, "", "up to 320 raise throughput"},
		{"pure CPU: one per core", 4, 30 * time.Millisecond, 30 * time.Millisecond, 4, 4, "", ""},
		{"wall measured below CPU counts as CPU", 4, 30 * time.Millisecond, 20 * time.Millisecond, 4, 4, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, formula := CPUWorkers(tc.cores, tc.cpu, tc.wall)
			if n != tc.want || !strings.Contains(formula, fmt.Sprint(tc.want)) {
				t.Errorf("CPUWorkers = %d (%s), want %d", n, formula, tc.want)
			}
			o := DefaultOptions()
			o.Rate, o.Servers, o.Workers, o.ResponseTime, o.Cores, o.CPUPerRequest = 10, 1, tc.workers, tc.wall, tc.cores, tc.cpu
			if tc.wall < tc.cpu {
				o.ResponseTime = tc.cpu
			}
			p, err := Compute(o)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Result(IDCPUWorkers)
			if r == nil || r.Value != float64(tc.want) {
				t.Fatalf("plan: %+v", r)
			}
			all := strings.Join(append(r.Warnings, r.Notes...), "\n")
			if (tc.warn != "") != (len(r.Warnings) > 0) || !strings.Contains(all, tc.warn) || !strings.Contains(all, tc.note) {
				t.Errorf("warnings %q notes %q, want %q / %q", r.Warnings, r.Notes, tc.warn, tc.note)
			}
		})
	}
	// The cores cap the rate: 800 req/s at 40 ms each is 4 times what 8
	// cores serve; the concurrency result no longer says raise workers.
	o := DefaultOptions()
	o.Rate, o.Servers, o.Workers, o.ResponseTime, o.Cores, o.CPUPerRequest = 800, 1, 50, 100*time.Millisecond, 8, 40*time.Millisecond
	p, err := Compute(o)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(p.Result(IDCPUWorkers).Warnings, "\n"); !strings.Contains(w, "add servers (5 at 80% CPU)") {
		t.Errorf("cpu-workers warnings %q", w)
	}
	if c := p.Result(IDConcurrency); c.Setting != nil || !strings.Contains(strings.Join(c.Warnings, ""), "only queue for the CPU") {
		t.Errorf("concurrency still says raise workers: %+v", c)
	}
	for _, bad := range []func(*Options){
		func(o *Options) { o.CPUPerRequest = 0 },
		func(o *Options) { o.Cores = 0 },
		func(o *Options) { o.CPUPerRequest = time.Second },
		func(o *Options) { o.Cores = -1 },
	} {
		o2 := o
		bad(&o2)
		if _, err := Compute(o2); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v accepted", o2)
		}
	}
}
