package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// run executes the CLI with args and stdin, returning stdout, stderr and
// the error main would print.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(strings.NewReader(stdin), &out, &errb)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

const fixture = "../../testdata/slowlogs/slow023.log"

func gzipFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	path := filepath.Join(t.TempDir(), "slow.log.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDigestCLI(t *testing.T) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(t.TempDir(), "junk.log")
	os.WriteFile(junk, append([]byte("\x00\x01\x02\xff garbage\n"), data...), 0o644)
	truncated := filepath.Join(t.TempDir(), "truncated.log")
	// Cut the last event inside its header, as a log being written or a
	// full disk leaves it.
	os.WriteFile(truncated, data[:bytes.LastIndex(data, []byte("# Query_time:"))+20], 0o644)

	cases := []struct {
		name    string
		stdin   string
		args    []string
		wantOut []string // substrings of stdout
		wantErr string   // substring of the error, "" for none
		check   func(t *testing.T, out string)
	}{
		{name: "text report", args: []string{"digest", fixture},
			wantOut: []string{"events in", "Rank", "Query ID", "# Query 1: 0x", "fingerprint: ", "sample (slowest call"}},
		{name: "stdin", stdin: string(data), args: []string{"digest", "-"}, wantOut: []string{"8 events in 8 classes"}},
		{name: "gzip file", args: []string{"digest", gzipFile(t, fixture)}, wantOut: []string{"8 events in 8 classes"}},
		{name: "markdown", args: []string{"digest", "--format", "markdown", "--limit", "2", fixture},
			wantOut: []string{"# Query digest", "| Rank | Query ID |", "```sql"}},
		{name: "json shape", args: []string{"digest", "--format", "json", "--limit", "0", fixture},
			check: func(t *testing.T, out string) {
				var r struct {
					Overall map[string]any   `json:"overall"`
					Classes []map[string]any `json:"classes"`
					Skipped struct {
						Count   *int64           `json:"count"`
						Reasons map[string]int64 `json:"reasons"`
					} `json:"skipped"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatal(err)
				}
				if len(r.Classes) != 8 || r.Overall["events"] != float64(8) || r.Skipped.Count == nil || r.Skipped.Reasons == nil {
					t.Fatalf("classes %d overall %v skipped %+v", len(r.Classes), r.Overall, r.Skipped)
				}
				for _, key := range []string{"id", "fingerprint", "sample", "count", "time_total_s", "time_avg_s", "time_p95_s",
					"time_max_s", "lock_total_s", "rows_sent_total", "rows_examined_total", "databases"} {
					if _, ok := r.Classes[0][key]; !ok {
						t.Errorf("class has no %q", key)
					}
				}
			}},
		{name: "filters", args: []string{"digest", "--format", "json", "--user", "backup", "--type", "select", fixture},
			check: func(t *testing.T, out string) {
				var r struct {
					Classes []struct{ Fingerprint string } `json:"classes"`
				}
				json.Unmarshal([]byte(out), &r)
				if len(r.Classes) != 1 || r.Classes[0].Fingerprint != "select @@collation_database" {
					t.Errorf("classes %+v", r.Classes)
				}
			}},
		{name: "binary junk is counted", args: []string{"digest", junk}, wantOut: []string{"skipped: 1 events (binary junk"}},
		{name: "truncated log is counted", args: []string{"digest", truncated}, wantOut: []string{"7 events", "skipped: 1 events (truncated event"}},
		{name: "missing file", args: []string{"digest", "/nonexistent/slow.log"}, wantErr: "no such file"},
		{name: "no input", args: []string{"digest"}, wantErr: "nothing to read"},
		{name: "bad sort", args: []string{"digest", "--sort", "speed", fixture}, wantErr: `unknown sort key "speed"`},
		{name: "bad format", args: []string{"digest", "--format", "xml", fixture}, wantErr: `unknown format "xml"`},
		{name: "stdin twice", args: []string{"digest", "-", "-"}, wantErr: "given twice"},
		{name: "files and dsn", args: []string{"digest", "--dsn", "root@tcp(127.0.0.1:1)/", fixture}, wantErr: "not both"},
		{name: "unreachable server, password masked",
			args:    []string{"digest", "--dsn", "app:s3cret-pw@tcp(127.0.0.1:1)/shop"},
			wantErr: "server unreachable: app:***@tcp(127.0.0.1:1)/shop"},
		{name: "bad dsn", args: []string{"digest", "--dsn", "app:s3cret-pw@nonsense"}, wantErr: "invalid DSN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.stdin, tc.args...)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error()+out+errOut, "s3cret-pw") {
					t.Fatalf("password printed: %v", err)
				}
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

// TestDigestLiveCLI runs `digest --dsn` against throwaway MariaDB servers:
// performance_schema on, off, and a wrong password.
func TestDigestLiveCLI(t *testing.T) {
	on := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON"}})
	off := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	if _, err := on.DB().Exec("CREATE USER 'app'@'localhost' IDENTIFIED BY 'right-pw'"); err != nil {
		t.Fatal(err)
	}
	t.Run("performance_schema on", func(t *testing.T) {
		out, _, err := run(t, "", "digest", "--dsn", on.DSN(""), "--interval", "300ms", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Source string `json:"source"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Source != "performance_schema" {
			t.Fatalf("source %q err %v", r.Source, err)
		}
	})
	t.Run("performance_schema off says how to enable it", func(t *testing.T) {
		_, _, err := run(t, "", "digest", "--dsn", off.DSN(""), "--interval", "10ms")
		if err == nil || !strings.Contains(err.Error(), "performance_schema=ON") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		dsn := "app:wrong-pw@unix(" + on.Socket() + ")/"
		_, _, err := run(t, "", "digest", "--dsn", dsn, "--interval", "10ms")
		if err == nil || !strings.Contains(err.Error(), "access denied") || strings.Contains(err.Error(), "wrong-pw") {
			t.Fatalf("err = %v", err)
		}
	})
}

// gzipCuts writes data gzipped, whole and damaged the ways a log can be:
// cut at 1/4 and 1/2 (a copy in progress, a full disk), without the last 8
// bytes (the trailer: checksum and length), and with junk after it.
func gzipCuts(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	z := b.Bytes()
	dir := t.TempDir()
	out := map[string]string{}
	for name, d := range map[string][]byte{
		"whole":           z,
		"cut at 1/4":      z[:len(z)/4],
		"cut at 1/2":      z[:len(z)/2],
		"trailer missing": z[:len(z)-8],
		"trailing junk":   append(bytes.Clone(z), "\x00 not gzip\n"...),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".gz")
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = path
	}
	return out
}

// TestDigestGzipCut: a damaged gzip log is an error naming the file and the
// compressed offset reached (exit status 1), and the report of what was
// read is still printed, saying it is incomplete.
func TestDigestGzipCut(t *testing.T) {
	var log bytes.Buffer
	for i := 0; i < 16000; i++ {
		fmt.Fprintf(&log, "# Time: 2026-11-22T10:%02d:%02d.000000Z\n# User@Host: app[app] @ localhost []  Id: 12\n"+
			"# Query_time: 0.%06d  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: %d\nSET timestamp=1795860000;\nSELECT c FROM sbtest%d WHERE id=%d;\n",
			i/60%60, i%60, i*7919%1000000, i%10000, i%9, i*31%100003)
	}
	files := gzipCuts(t, log.Bytes())
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
			out, _, err := run(t, "", "digest", "--format", "json", path)
			var r struct {
				Overall struct {
					Events int64 `json:"events"`
				} `json:"overall"`
				Notes []string `json:"notes"`
			}
			if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
				t.Fatalf("no report: %v\n%s", jerr, out)
			}
			if tc.wantErr == "" {
				if err != nil || r.Overall.Events != 16000 {
					t.Fatalf("error %v, %d events", err, r.Overall.Events)
				}
				return
			}
			st, _ := os.Stat(path)
			if err == nil || !strings.Contains(err.Error(), path+": "+tc.wantErr) || !strings.Contains(err.Error(), fmt.Sprintf(" of %d ", st.Size())) {
				t.Fatalf("error %v, want %q naming the file and its size", err, tc.wantErr)
			}
			if r.Overall.Events == 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "incomplete: "+path) {
				t.Errorf("%d events, notes %q", r.Overall.Events, r.Notes)
			}
		})
	}
}
