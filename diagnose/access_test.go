package diagnose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNginxAccessLogs reads the access logs a configuration writes: one
// per file with its log_format, "off", syslog, relative paths and paths
// with variables left out with a note.
func TestNginxAccessLogs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	text := `events {}
http {
	log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';
	access_log DIR/main.log;
	server {
		access_log DIR/api.log timed buffer=32k;
		access_log DIR/main.log;
		location /health { access_log off; }
		location /s { access_log syslog:server=127.0.0.1 timed; }
		location /r { access_log logs/rel.log; }
		location /v { access_log DIR/$host.log; }
	}
}
`
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(text, "DIR", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	logs, notes, err := nginxAccessLogs(conf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range logs {
		got = append(got, filepath.Base(l.path)+" "+l.parser.Format())
	}
	if strings.Join(got, ", ") != "main.log nginx combined, api.log nginx timed" {
		t.Errorf("logs %v", got)
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "syslog") || !strings.Contains(notes[1], "relative") || !strings.Contains(notes[2], "variables") {
		t.Errorf("notes %q", notes)
	}
	// A given file takes the configuration's format for the same file.
	given, _, err := resolveAccessLogs([]string{filepath.Join(dir, "api.log"), filepath.Join(dir, "other.log")}, nil, conf)
	if err != nil || len(given) != 2 || given[0].parser == nil || given[0].parser.Format() != "nginx timed" || given[1].parser != nil {
		t.Errorf("given %+v %v", given, err)
	}
	// A configuration that cannot be read is a note, not a failure.
	if logs, notes, err := resolveAccessLogs(nil, nil, filepath.Join(dir, "missing.conf")); err != nil || len(logs) != 0 || len(notes) != 1 {
		t.Errorf("missing configuration: %v %v %v", logs, notes, err)
	}
}

// TestProfileWindow reads only what was written after the run's start
// offset and within its window, and counts each endpoint's requests per
// step with the profile's grouping.
func TestProfileWindow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	line := func(at time.Time, uri string) string {
		return fmt.Sprintf(`127.0.0.1 - - [%s] "GET %s HTTP/1.1" 200 12 "-" "bench" 0.010 0.009`+"\n", at.Format("02/Jan/2006:15:04:05 -0700"), uri)
	}
	old := line(start.Add(time.Second), "/before-offset") // logged before the run's offset
	var b strings.Builder
	b.WriteString(old)
	b.WriteString(line(start.Add(-5*time.Second), "/too-early")) // after the offset, before the window
	for s := range 4 {
		for i := range s + 1 {
			b.WriteString(line(start.Add(time.Duration(s)*time.Second), fmt.Sprintf("/item/%d", i+s*10)))
		}
		b.WriteString(line(start.Add(time.Duration(s)*time.Second), "/home"))
	}
	b.WriteString(line(start.Add(time.Minute), "/too-late"))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWindow(start, start.Add(3500*time.Millisecond), time.Second)
	rep, series, notes, err := profileWindow(context.Background(), []accessLog{{path: path, start: int64(len(old))}}, w, start, start.Add(3500*time.Millisecond), nil)
	if err != nil || rep == nil || series == nil {
		t.Fatalf("%v %v %v", rep, err, notes)
	}
	if rep.Overall.Requests != 14 {
		t.Errorf("%d requests in the window, want 14 (notes %v)", rep.Overall.Requests, notes)
	}
	if got := series.counts["GET /item/:num"]; fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("GET /item/:num per step %v (%v)", got, series.counts)
	}
	if got := series.counts["GET /home"]; fmt.Sprint(got) != "[1 1 1 1]" {
		t.Errorf("GET /home per step %v", got)
	}
}

// TestProfileWindowDetects: the format of a log written during the run is
// detected from the lines it can read: a line of junk longer than 1 MiB
// first is skipped and counted (detection sampled 64 KiB of it and gave
// up on the log), and a log with nothing readable is a note that says
// what was sampled and how to name the format; a log nothing was written
// to is no note.
func TestProfileWindowDetects(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var valid strings.Builder
	for i := range 30 {
		fmt.Fprintf(&valid, `127.0.0.1 - - [%s] "GET /item/%d HTTP/1.1" 200 12 "-" "bench" 0.010 0.009`+"\n", start.Add(time.Duration(i%3)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), i)
	}
	junk := strings.Repeat("\x16\x03junk ", 3<<20/7) + "\n"
	const old = "written before the run\n"
	cases := []struct {
		name     string
		text     string
		requests int64
		note     []string
	}{
		{name: "a 3 MiB first line", text: junk + valid.String(), requests: 30},
		{name: "junk only", text: junk + "<html>502</html>\n", note: []string{
			"access.log from byte 23: no known format reads these lines: 1 line (1 line longer than 1 MiB skipped), tried json (line 2: not JSON",
			"name its format with --http-log-format (combined, common",
		}},
		{name: "nothing written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "access.log")
			if err := os.WriteFile(path, []byte(old+tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			w := newWindow(start, start.Add(3500*time.Millisecond), time.Second)
			rep, _, notes, err := profileWindow(context.Background(), []accessLog{{path: path, start: int64(len(old))}}, w, start, start.Add(3500*time.Millisecond), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(notes, "\n")
			for _, n := range tc.note {
				if !strings.Contains(got, n) {
					t.Errorf("notes %q, want %q", notes, n)
				}
			}
			if len(tc.note) == 0 && len(notes) > 0 {
				t.Errorf("notes %q", notes)
			}
			if tc.requests == 0 {
				if rep != nil {
					t.Errorf("a profile of %d requests", rep.Overall.Requests)
				}
				return
			}
			if rep == nil || rep.Overall.Requests != tc.requests || rep.Skipped.Reasons["line_too_long"] != 1 || rep.Skipped.Count != 1 {
				t.Fatalf("profile %+v, want %d requests and the long line skipped", rep, tc.requests)
			}
		})
	}
}
