package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlanCLI(t *testing.T) {
	// The PHP + MySQL TIME_WAIT write-up: 100 web servers × 255 Apache workers at 900 req/s each,
	// non-persistent PHP, the write-up's 1024 live sockets per web server.
	seed := []string{"plan", "--rate", "90000", "--servers", "100", "--workers", "255", "--response-time", "10.289ms", "--live-sockets", "1024"}
	with := func(extra ...string) []string { return append(append([]string{}, seed...), extra...) }
	cases := []struct {
		name    string
		args    []string
		wantOut []string // substrings of stdout
		wantErr string   // substring of the error, "" for none
		check   func(t *testing.T, out string)
	}{
		{name: "the PHP + MySQL TIME_WAIT write-up text", args: seed, wantOut: []string{
			"max_connections = 25500", "open_files_limit = 30349", "LimitNOFILE=30349",
			"90000 × 1 / 100 × 60 s = 900 req/s × 60 s = 54000", "54000 + 1024 = 55024",
			"net.ipv4.tcp_max_tw_buckets = 65536", "net.ipv4.ip_local_port_range = 10512 65535", "now 32768 60999",
			"tcp_fin_timeout sets FIN-WAIT-2, not TIME_WAIT", "tcp_tw_recycle", "stateless packet filter", "-c 25532",
		}},
		{name: "markdown", args: with("--format", "markdown"), wantOut: []string{"# Capacity plan", "| set | web servers | `net.ipv4.ip_local_port_range = 10512 65535` |"}},
		{name: "json", args: with("--format", "json", "--per-server-rate", "935", "--headroom", "1.2"),
			check: func(t *testing.T, out string) {
				var p struct {
					Inputs struct {
						Headroom      float64 `json:"headroom"`
						PerServerRate float64 `json:"per_server_rate"`
					} `json:"inputs"`
					Results []struct {
						ID      string  `json:"id"`
						Value   float64 `json:"value"`
						Setting *struct {
							Kind, Name, Value string
						} `json:"setting"`
					} `json:"results"`
				}
				if err := json.Unmarshal([]byte(out), &p); err != nil {
					t.Fatal(err)
				}
				if p.Inputs.Headroom != 1.2 || p.Inputs.PerServerRate != 935 {
					t.Errorf("inputs %+v", p.Inputs)
				}
				got := map[string]float64{}
				for _, r := range p.Results {
					got[r.ID] = r.Value
				}
				// ceil(90000 × 1.2 / 935) = ceil(115.5) = 116.
				if got["servers-needed"] != 116 || got["max-connections"] != 25500 || got["time-wait-web"] != 64800 {
					t.Errorf("results %v", got)
				}
			}},
		{name: "the smartphone game backend: cores and CPU per request say decrease", args: []string{"plan", "--rate", "150", "--servers", "1", "--workers", "50", "--response-time", "100ms", "--cores", "8", "--cpu-per-request", "40ms"},
			wantOut: []string{"Workers the cores can keep busy: 20 workers per server", "8 × 100 ms / 40 ms = 20", "decrease workers from 50 to 20"}},
		{name: "a table cache of 4000", args: with("--table-open-cache", "4000"), wantOut: []string{"open_files_limit = 33510"}},
		{name: "cores without CPU per request", args: with("--cores", "8"), wantErr: "give cores and CPU per request together"},
		{name: "persistent", args: with("--persistent"), wantOut: []string{"keep  net.ipv4.ip_local_port_range = 32768 60999", "0 + 1024 = 1024"}},
		{name: "mysql closes first", args: with("--closer", "db"), wantOut: []string{"90000 × 1 × 60 s = 5400000"}},
		{name: "port range as sysctl prints it", args: with("--port-range", "10000\t65535"), wantOut: []string{"keep  net.ipv4.ip_local_port_range = 10000 65535"}},
		{name: "missing required flags", args: []string{"plan", "--rate", "100"}, wantErr: `required flag(s) "response-time", "workers" not set`}, // --servers, or --fleet, is checked after
		{name: "negative servers", args: with("--servers", "-3"), wantErr: "invalid plan input: servers must be at least 1 (got -3)"},
		{name: "zero response time", args: with("--response-time", "0s"), wantErr: "response time must be above 0"},
		{name: "headroom below 1", args: with("--headroom", "0.8"), wantErr: "headroom must be at least 1"},
		{name: "bad port range", args: with("--port-range", "60999 32768"), wantErr: "the first port is above the last"},
		{name: "bad closer", args: with("--closer", "client"), wantErr: `closer "client"`},
		{name: "bad format", args: with("--format", "xml"), wantErr: `unknown format "xml"`},
		{name: "stray argument", args: with("extra"), wantErr: `unknown command "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, "", tc.args...)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

func TestPlanFleetFlags(t *testing.T) {
	if _, _, err := run(t, "", "plan", "--rate", "100", "--workers", "10", "--response-time", "10ms"); err == nil || !strings.Contains(err.Error(), "--fleet") {
		t.Errorf("no --servers and no --fleet: %v", err)
	}
	if _, _, err := run(t, "", "plan", "--fleet", "/nonexistent.json", "--rate", "100", "--workers", "10", "--response-time", "10ms"); err == nil {
		t.Error("a missing fleet snapshot")
	}
}
