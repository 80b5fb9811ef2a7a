package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const logs = "../../accesslog/testdata/logs/"

// writeLog writes an nginx combined log with request times: n requests
// over users, numeric ids and a slow page whose time is slowTime.
func writeLog(t *testing.T, name string, n int, slowTime float64, timed bool) string {
	t.Helper()
	var b strings.Builder
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.FixedZone("", 9*3600))
	for i := 0; i < n; i++ {
		var uri string
		rt := 0.010
		switch i % 4 {
		case 0:
			uri = fmt.Sprintf("/profile/user%d", i%97)
		case 1:
			uri = fmt.Sprintf("/diary/entry/%d?page=%d", i, i%3)
		case 2:
			uri, rt = "/friends", slowTime
		default:
			uri = "/css/app.css"
		}
		fmt.Fprintf(&b, `192.0.2.%d - - [%s] "GET %s HTTP/1.1" 200 512 "-" "bench/1.0"`, i%250, at.Add(time.Duration(i)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), uri)
		if timed {
			fmt.Fprintf(&b, " %.3f %.3f", rt, rt)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type httpJSON struct {
	Format  string `json:"format"`
	Overall struct {
		Requests int64 `json:"requests"`
	} `json:"overall"`
	Endpoints []struct {
		Method  string  `json:"method"`
		Path    string  `json:"path"`
		Count   int64   `json:"count"`
		P99     float64 `json:"time_p99_s"`
		Total   float64 `json:"time_total_s"`
		Status  map[string]int64
		Bytes   int64 `json:"bytes_total"`
		Timed   int64 `json:"timed"`
		Percent float64
	} `json:"endpoints"`
	GroupsLearned []struct {
		Pattern string `json:"pattern"`
	} `json:"groups_learned"`
	Skipped struct {
		Count   int64            `json:"count"`
		Reasons map[string]int64 `json:"reasons"`
	} `json:"skipped"`
	Notes []string `json:"notes"`
}

func TestHTTPCLI(t *testing.T) {
	timed := writeLog(t, "timed.log", 400, 0.300, true)
	untimed := writeLog(t, "untimed.log", 40, 0, false)
	data, _ := os.ReadFile(timed)
	junk := filepath.Join(t.TempDir(), "junk.log")
	os.WriteFile(junk, append(append([]byte("\x00\x01binary\xff\n"), data...), []byte("not a log line at all\n192.0.2.1 - - [01/Nov/2026:12:00:00 +0900] \"GET /trunc")...), 0o644)

	cases := []struct {
		name    string
		stdin   string
		args    []string
		wantOut []string
		wantErr string
		check   func(t *testing.T, r httpJSON)
	}{
		{name: "auto-detected nginx with times", args: []string{"http", "--format", "json", "--limit", "0", timed},
			check: func(t *testing.T, r httpJSON) {
				got := map[string]int64{}
				for _, e := range r.Endpoints {
					got[e.Method+" "+e.Path] = e.Count
				}
				want := map[string]int64{"GET /profile/:name": 100, "GET /diary/entry/:num": 100, "GET /friends": 100, "GET /css/app.css": 100}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("endpoints %v, want %v", got, want)
				}
				if r.Endpoints[0].Path != "/friends" || r.Endpoints[0].P99 < 0.29 {
					t.Errorf("top endpoint %+v", r.Endpoints[0])
				}
				if len(r.GroupsLearned) != 1 || r.GroupsLearned[0].Pattern != "/profile/:name" {
					t.Errorf("groups learned %+v", r.GroupsLearned)
				}
			}},
		{name: "text report", args: []string{"http", timed},
			wantOut: []string{"400 requests in 4 endpoints", "grouped: /profile/:name", "GET /friends", "Slowest requests:"}},
		{name: "stdin", stdin: string(data), args: []string{"http", "-"}, wantOut: []string{"400 requests in 4 endpoints"}},
		{name: "query keys", args: []string{"http", "--query-keys", "--format", "csv", timed},
			wantOut: []string{"/diary/entry/:num?page", "rank,method,path,count"}},
		{name: "user group overrides learning", args: []string{"http", "-m", "^/profile/user1", "--format", "json", timed},
			check: func(t *testing.T, r httpJSON) {
				for _, e := range r.Endpoints {
					if e.Path == "^/profile/user1" && e.Count > 0 {
						return
					}
				}
				t.Errorf("no user group row: %+v", r.Endpoints)
			}},
		{name: "since and until", args: []string{"http", "--format", "json", "--since", "2026-11-01T12:01:00+09:00", "--until", "2026-11-01T12:02:00+09:00", timed},
			check: func(t *testing.T, r httpJSON) {
				if r.Overall.Requests != 60 {
					t.Errorf("requests %d, want 60", r.Overall.Requests)
				}
			}},
		{name: "no request time: says what to log", args: []string{"http", untimed},
			wantOut: []string{"no request time", "log_format", "$request_time", "access_log"}},
		{name: "junk lines are counted", args: []string{"http", "--format", "json", junk},
			check: func(t *testing.T, r httpJSON) {
				if r.Overall.Requests != 400 || r.Skipped.Count != 3 {
					t.Errorf("requests %d skipped %+v", r.Overall.Requests, r.Skipped)
				}
			}},
		{name: "ltsv", args: []string{"http", "--log-format", "ltsv", logs + "ltsv.log"}, wantOut: []string{"(ltsv"}},
		{name: "json lines", args: []string{"http", logs + "nginx-json.log"}, wantOut: []string{"requests in"}},
		{name: "apache %D", args: []string{"http", "--log-format", "apache-combined-d", logs + "apache-combined-d.log"}, wantOut: []string{"requests in"}},
		{name: "format from nginx.conf", args: []string{"http", "--nginx-conf", "../../accesslog/testdata/nginx/nginx.conf", "--log-format", "upstream_time", logs + "nginx-upstream-time.log"},
			wantOut: []string{"requests in", "Upstream"}},
		{name: "unknown log_format name", args: []string{"http", "--nginx-conf", "../../accesslog/testdata/nginx/nginx.conf", "--log-format", "nope", timed},
			wantErr: "nope"},
		{name: "nginx-conf needs a name", args: []string{"http", "--nginx-conf", "../../accesslog/testdata/nginx/nginx.conf", timed}, wantErr: "needs --log-format"},
		{name: "bad sort", args: []string{"http", "--sort", "speed", timed}, wantErr: `unknown sort key "speed"`},
		{name: "bad group regex", args: []string{"http", "-m", "(", timed}, wantErr: `group pattern "("`},
		{name: "bad since", args: []string{"http", "--since", "yesterday", timed}, wantErr: "--since"},
		{name: "no input", args: []string{"http"}, wantErr: "nothing to read"},
		{name: "missing file", args: []string{"http", "/nonexistent.log"}, wantErr: "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, tc.stdin, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.check != nil {
				var r httpJSON
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("%v in %s", err, out)
				}
				tc.check(t, r)
			}
		})
	}
}

// TestHTTPDiffCLI compares a slow run with a fixed one, from logs and from
// saved profiles.
func TestHTTPDiffCLI(t *testing.T) {
	before := writeLog(t, "before.log", 400, 0.300, true)
	after := writeLog(t, "after.log", 400, 0.020, true)
	saved := filepath.Join(t.TempDir(), "before.json")
	out, _, err := run(t, "", "http", "--format", "json", "--limit", "0", before)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(saved, []byte(out), 0o644)
	for _, a := range []string{before, saved} {
		t.Run(filepath.Base(a), func(t *testing.T) {
			out, _, err := run(t, "", "http", "diff", "--format", "json", a, after)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Endpoints []struct {
					Path     string  `json:"path"`
					Status   string  `json:"status"`
					P99Ratio float64 `json:"time_p99_ratio"`
					Change   float64 `json:"time_total_change_s"`
				} `json:"endpoints"`
			}
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			top := d.Endpoints[0]
			if top.Path != "/friends" || top.Status != "both" || top.P99Ratio > 0.1 || top.Change > -25 {
				t.Errorf("top row %+v", top)
			}
			for _, e := range d.Endpoints {
				if e.Status != "both" {
					t.Errorf("row %+v not matched on both sides", e)
				}
			}
		})
	}
	out, _, err = run(t, "", "http", "diff", before, after)
	if err != nil || !strings.Contains(out, "GET /friends") || !strings.Contains(out, "Total change") {
		t.Errorf("text diff: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", "http", "diff", before); err == nil {
		t.Error("diff with one argument accepted")
	}
}

// TestHTTPGzipCut: as digest, a damaged gzip access log is an error naming
// the file and the compressed offset reached (exit status 1), with the
// report of what was read still printed and saying it is incomplete.
func TestHTTPGzipCut(t *testing.T) {
	data, err := os.ReadFile(writeLog(t, "access.log", 40000, 0.300, true))
	if err != nil {
		t.Fatal(err)
	}
	files := gzipCuts(t, data)
	cases := []struct {
		name    string
		wantErr string
	}{
		{"whole", ""},
		{"cut at 1/4", "gzip data ends early at compressed byte"},
		{"cut at 1/2", "gzip data ends early at compressed byte"},
		{"trailer missing", "gzip data ends early at compressed byte"},
		{"trailing junk", "junk after the gzip data at compressed byte"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := files[tc.name]
			out, _, err := run(t, "", "http", "--format", "json", path)
			var r httpJSON
			if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
				t.Fatalf("no report: %v\n%s", jerr, out)
			}
			if tc.wantErr == "" {
				if err != nil || r.Overall.Requests != 40000 {
					t.Fatalf("error %v, %d requests", err, r.Overall.Requests)
				}
				return
			}
			st, _ := os.Stat(path)
			if err == nil || !strings.Contains(err.Error(), path+": "+tc.wantErr) || !strings.Contains(err.Error(), fmt.Sprintf(" of %d ", st.Size())) {
				t.Fatalf("error %v, want %q naming the file and its size", err, tc.wantErr)
			}
			if r.Overall.Requests == 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "incomplete: "+path) {
				t.Errorf("%d requests, notes %q", r.Overall.Requests, r.Notes)
			}
			// The diff of a damaged log fails the same way.
			if _, _, err := run(t, "", "http", "diff", files["whole"], path); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("diff: error %v", err)
			}
		})
	}
}

// TestHTTPHostileLines: bad lines among the first twenty do not stop
// format detection (they are counted as skipped), and nginx's 499 is
// counted apart from 4xx.
func TestHTTPHostileLines(t *testing.T) {
	data, _ := os.ReadFile(writeLog(t, "timed.log", 40, 0.300, true))
	lines := strings.SplitAfter(string(data), "\n")
	bad := []string{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n", "<html>502 Bad Gateway</html>\n", `192.0.2.1 - - [01/Nov/2026:12:00:00 +0900] "GET /cut` + "\n"}
	mixed := strings.Join(append(append(bad[:1:1], lines[:5]...), append(bad[1:], lines[5:]...)...), "")
	mixed = strings.Replace(mixed, `"GET /friends HTTP/1.1" 200`, `"GET /friends HTTP/1.1" 499`, 3)
	path := filepath.Join(t.TempDir(), "mixed.log")
	os.WriteFile(path, []byte(mixed), 0o644)
	out, _, err := run(t, "", "http", "--format", "json", path)
	if err != nil {
		t.Fatal(err)
	}
	var r httpJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Overall.Requests != 40 || r.Skipped.Count != 3 {
		t.Errorf("requests %d, skipped %+v", r.Overall.Requests, r.Skipped)
	}
	for _, e := range r.Endpoints {
		if e.Path == "/friends" && (e.Status["499"] != 3 || e.Status["4xx"] != 0 || e.Status["2xx"] != 7) {
			t.Errorf("/friends status %v", e.Status)
		}
	}
}

// TestHTTPDiffWindows: logs over windows of different lengths are compared
// per second of window, and the output says so.
func TestHTTPDiffWindows(t *testing.T) {
	a := writeLog(t, "a.log", 400, 0.300, true) // 400 s
	b := writeLog(t, "b.log", 200, 0.300, true) // 200 s, the same rate and times
	out, _, err := run(t, "", "http", "diff", "--format", "json", a, b)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Basis     string   `json:"basis"`
		Scale     float64  `json:"scale_b"`
		Notes     []string `json:"notes"`
		Endpoints []struct {
			Path      string  `json:"path"`
			Change    float64 `json:"time_total_change_s"`
			ChangeRaw float64 `json:"time_total_change_raw_s"`
			TotalB    float64 `json:"time_total_b_s"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Basis != "per_second" || d.Scale < 1.9 || d.Scale > 2.1 || len(d.Notes) == 0 {
		t.Errorf("basis %q scale %v notes %q", d.Basis, d.Scale, d.Notes)
	}
	for _, e := range d.Endpoints {
		if e.Path == "/friends" && (e.Change < -1.5 || e.Change > 1.5 || e.ChangeRaw > -14 || e.TotalB < 14) {
			t.Errorf("/friends: change %v (raw %v, B total %v): same load per second should show no change", e.Change, e.ChangeRaw, e.TotalB)
		}
	}
	out, _, err = run(t, "", "http", "diff", a, b)
	if err != nil || !strings.Contains(out, "windows of different lengths") || !strings.Contains(out, "per second of window") {
		t.Errorf("text diff does not say how it compared: %v\n%s", err, out)
	}
}

// sparseLongLine writes a log whose first line is n NUL bytes (a sparse
// file: no disk, nothing to write), then data.
func sparseLongLine(t *testing.T, n int64, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "access.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(append([]byte("\n"), data...), n); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTTPLongFirstLine: a log whose first line is far longer than a line
// stacktune reads (200 MB of NUL bytes, as a log overwritten by a crash
// starts; a sparse file) is profiled from the lines after it, its format
// detected from them and the long line counted as skipped: from a file,
// gzip and standard input. A log with no line to detect from says what was
// sampled and how to name the format.
func TestHTTPLongFirstLine(t *testing.T) {
	data, err := os.ReadFile(writeLog(t, "timed.log", 400, 0.300, true))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("\x16\x03junk ", 3<<20) // 21 MB, one line
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(long + "\n"))
	zw.Write(data)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "access.log.gz")
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		stdin string
		path  string
	}{
		{name: "200 MB sparse first line", path: sparseLongLine(t, 200<<20, data)},
		{name: "gzip", path: gz},
		{name: "stdin", stdin: long + "\n" + string(data), path: "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, tc.stdin, "http", "--format", "json", tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var r httpJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if r.Format != "nginx combined+request_time+upstream_response_time" || r.Overall.Requests != 400 {
				t.Errorf("format %q, %d requests", r.Format, r.Overall.Requests)
			}
			if r.Skipped.Count != 1 || r.Skipped.Reasons["line_too_long"] != 1 {
				t.Errorf("skipped %+v, want the long line", r.Skipped)
			}
		})
	}
	t.Run("nothing to detect from", func(t *testing.T) {
		path := sparseLongLine(t, 200<<20, []byte("<html><body>502 Bad Gateway</body></html>\n"))
		_, _, err := run(t, "", "http", path)
		want := []string{
			"accesslog: " + path + ": no known format reads these lines: 1 line (1 line longer than 1 MiB skipped), tried json (line 2: not JSON",
			"name its format with --log-format (combined, common, ltsv, json, apache-common, apache-combined, apache-combined-d)",
		}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v, want %q", err, w)
			}
		}
	})
}
