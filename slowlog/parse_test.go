package slowlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/internal/skip"
)

// dumpEvents renders events and stats one per line, for golden files and
// comparisons.
func dumpEvents(data []byte) string {
	var b strings.Builder
	var p Parser
	p.Parse(data, func(e *Event) { b.WriteString(eventLine(e)) })
	fmt.Fprintf(&b, "stats events=%d skipped=%v unknown=%v bad=%v\n", p.Stats.Events, p.Stats.Skipped, p.Stats.UnknownFields, p.Stats.BadValues)
	return b.String()
}

func eventLine(e *Event) string {
	t := "-"
	if !e.Time.IsZero() {
		t = e.Time.Format("2006-01-02T15:04:05.999999Z07:00")
	}
	return fmt.Sprintf("@%d time=%s user=%q host=%q db=%q qt=%g lock=%g sent=%d examined=%d affected=%d tmp=%d/%d has=%05b flags=%07b known=%07b admin=%v query=%q\n",
		e.Offset, t, e.User, e.Host, e.DB, e.QueryTime, e.LockTime, e.RowsSent, e.RowsExamined, e.RowsAffected,
		e.TmpTables, e.TmpDiskTables, e.Has, e.Flags, e.Known, e.Admin, e.Query)
}

// TestFixturesGolden parses every real slow log in testdata and compares
// every event field with a reviewed golden file (go test -update rewrites).
func TestFixturesGolden(t *testing.T) {
	logs, err := filepath.Glob("../testdata/slowlogs/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := dumpEvents(data)
			golden.Check(t, filepath.Join("testdata", "golden", name+".events"), []byte(got))
		})
	}
}

// TestParseCases covers each format rule and each kind of bad input with a
// small hand-written log.
func TestParseCases(t *testing.T) {
	cases := []struct {
		name    string
		log     string
		events  int
		check   func(t *testing.T, evs []Event)
		skipped skip.Counts
		unknown map[string]int64
		bad     map[string]int64
	}{
		{
			name: "mysql8 rfc3339 time and log_slow_extra fields",
			log: "# Time: 2024-05-01T10:00:00.123456Z\n# User@Host: app[app] @ web1 [10.0.0.5]  Id:    42\n" +
				"# Query_time: 0.500000  Lock_time: 0.000100 Rows_sent: 1  Rows_examined: 5000 Thread_id: 42 Errno: 0 Killed: 0 Bytes_received: 0 Bytes_sent: 56 Read_first: 0 Read_last: 0 Read_key: 1 Read_next: 0 Read_prev: 0 Read_rnd: 0 Read_rnd_next: 5001 Sort_merge_passes: 0 Sort_range_count: 0 Sort_rows: 0 Sort_scan_count: 0 Created_tmp_disk_tables: 0 Created_tmp_tables: 0 Start: 2024-05-01T09:59:59.623456Z End: 2024-05-01T10:00:00.123456Z\n" +
				"use shop;\nSET timestamp=1714557599;\nSELECT * FROM orders WHERE note LIKE '%x%';\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				e := evs[0]
				if got := e.Time.Format("2006-01-02T15:04:05.000000"); got != "2024-05-01T10:00:00.123456" {
					t.Errorf("time %s", got)
				}
				if string(e.User) != "app" || string(e.Host) != "web1" || string(e.DB) != "shop" {
					t.Errorf("user %q host %q db %q", e.User, e.Host, e.DB)
				}
				if e.QueryTime != 0.5 || e.RowsExamined != 5000 || e.RowsSent != 1 {
					t.Errorf("numbers %+v", e)
				}
				if string(e.Query) != "SELECT * FROM orders WHERE note LIKE '%x%'" {
					t.Errorf("query %q", e.Query)
				}
			},
		},
		{
			name: "mariadb query_plan fields",
			log: "# Time: 241122 20:30:00\n# User@Host: root[root] @ localhost []\n# Thread_id: 8  Schema: sbtest  QC_hit: No\n" +
				"# Query_time: 0.010000  Lock_time: 0.000010  Rows_sent: 10  Rows_examined: 100000\n# Rows_affected: 0  Bytes_sent: 500\n" +
				"# Full_scan: Yes  Full_join: No  Tmp_table: Yes  Tmp_table_on_disk: Yes\n# Filesort: Yes  Filesort_on_disk: No  Merge_passes: 0  Priority_queue: No\n" +
				"#\n# explain: id\tselect_type\ttable\ttype\n# explain: 1\tSIMPLE\tt\tALL\n#\nSET timestamp=1732307400;\nSELECT c FROM t ORDER BY k;\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				e := evs[0]
				want := FullScan | TmpTable | TmpTableOnDisk | Filesort
				if e.Flags != want {
					t.Errorf("flags %07b, want %07b", e.Flags, want)
				}
				if e.Known&(FullScan|FullJoin|TmpTable|TmpTableOnDisk|Filesort|FilesortOnDisk|QCHit) != FullScan|FullJoin|TmpTable|TmpTableOnDisk|Filesort|FilesortOnDisk|QCHit {
					t.Errorf("known %07b", e.Known)
				}
				if e.Has&HasRowsAffected == 0 || string(e.DB) != "sbtest" {
					t.Errorf("has %b db %q", e.Has, e.DB)
				}
				if e.Time.Unix() != 1732307400 {
					t.Errorf("time %v: SET timestamp should win over a zone-less Time line", e.Time)
				}
			},
		},
		{
			name: "time line carried to later events",
			log: "# Time: 071015 21:43:52\n# User@Host: root[root] @ localhost []\n# Query_time: 2  Lock_time: 0  Rows_sent: 1  Rows_examined: 0\nselect 1;\n" +
				"# User@Host: root[root] @ localhost []\n# Query_time: 3  Lock_time: 0  Rows_sent: 1  Rows_examined: 0\nselect 2;\n",
			events: 2,
			check: func(t *testing.T, evs []Event) {
				if !evs[1].Time.Equal(evs[0].Time) || evs[1].Time.IsZero() {
					t.Errorf("times %v %v", evs[0].Time, evs[1].Time)
				}
			},
		},
		{
			name:   "replication context line before the statement",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSET last_insert_id=5,insert_id=6,timestamp=1197996507;\nINSERT INTO t VALUES (1);\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if string(evs[0].Query) != "INSERT INTO t VALUES (1)" || evs[0].Time.Unix() != 1197996507 {
					t.Errorf("query %q time %v", evs[0].Query, evs[0].Time)
				}
			},
		},
		{
			name:   "a SET of session variables is a query",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSET NAMES utf8;\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if string(evs[0].Query) != "SET NAMES utf8" {
					t.Errorf("query %q", evs[0].Query)
				}
			},
		},
		{
			name:   "lone use statement is the query",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nuse `db1`;\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if string(evs[0].Query) != "use `db1`" || string(evs[0].DB) != "db1" {
					t.Errorf("query %q db %q", evs[0].Query, evs[0].DB)
				}
			},
		},
		{
			name:   "administrator command",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\n# administrator command: Quit;\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if string(evs[0].Query) != "administrator command: Quit" || !evs[0].Admin {
					t.Errorf("query %q admin %v", evs[0].Query, evs[0].Admin)
				}
			},
		},
		{
			name:   "comment line inside a query stays in the query",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT a\n# a comment\nFROM t;\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if string(evs[0].Query) != "SELECT a\n# a comment\nFROM t" {
					t.Errorf("query %q", evs[0].Query)
				}
			},
		},
		{
			name:   "crlf line ends",
			log:    "# User@Host: a[a] @ h []\r\n# Query_time: 0.25  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\r\nSELECT 1;\r\n",
			events: 1,
			check: func(t *testing.T, evs []Event) {
				if evs[0].QueryTime != 0.25 || string(evs[0].Query) != "SELECT 1" {
					t.Errorf("%+v", evs[0])
				}
			},
		},
		{
			name:    "truncated event at end of file",
			log:     "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_",
			events:  1,
			skipped: skip.Counts{ReasonTruncated.Code(): 1},
		},
		{
			name:    "header without query followed by a new event",
			log:     "# Time: 2024-05-01T10:00:00Z\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\n# Time: 2024-05-01T10:00:01Z\n# User@Host: a[a] @ h []\n# Query_time: 0.2  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 2;\n",
			events:  1,
			skipped: skip.Counts{ReasonTruncated.Code(): 1},
		},
		{
			name:    "query text before any header",
			log:     "FROM t WHERE id = 3;\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n",
			events:  1,
			skipped: skip.Counts{ReasonMissingHeader.Code(): 1},
		},
		{
			name:    "binary junk between events",
			log:     "\x00\x01\x02garbage\xff\xfe\n\x00more\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n",
			events:  1,
			skipped: skip.Counts{ReasonBinaryJunk.Code(): 1},
		},
		{
			name:    "binary junk inside a query",
			log:     "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT \x00\x00\x01;\n",
			skipped: skip.Counts{ReasonBinaryJunk.Code(): 1},
		},
		{
			name:    "line over 1 MiB",
			log:     "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT '" + strings.Repeat("x", MaxLineBytes) + "';\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n",
			events:  1,
			skipped: skip.Counts{ReasonLineTooLong.Code(): 1},
		},
		{
			name:    "missing Query_time",
			log:     "# User@Host: a[a] @ h []\n# Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n",
			skipped: skip.Counts{ReasonNoQueryTime.Code(): 1},
		},
		{
			name:    "unparseable Query_time",
			log:     "# User@Host: a[a] @ h []\n# Query_time: fast  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n",
			skipped: skip.Counts{ReasonBadQueryTime.Code(): 1},
		},
		{
			name:   "unparseable Rows_sent keeps the event",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: many  Rows_examined: 0\nSELECT 1;\n",
			events: 1,
			bad:    map[string]int64{"Rows_sent": 1},
		},
		{
			name:    "unknown fields are counted, event kept",
			log:     "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0  Frobs: 7\n# Widget_count: 2\nSELECT 1;\n",
			events:  1,
			unknown: map[string]int64{"Frobs": 1, "Widget_count": 1},
		},
		{
			name:   "server restart banner mid-log",
			log:    "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 2;\n",
			events: 2,
		},
		{
			name: "empty input",
			log:  "",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p Parser
			var evs []Event
			p.Parse([]byte(tc.log), func(e *Event) {
				c := *e
				c.Query = bytes.Clone(e.Query)
				c.User, c.Host, c.DB = bytes.Clone(e.User), bytes.Clone(e.Host), bytes.Clone(e.DB)
				evs = append(evs, c)
			})
			if len(evs) != tc.events {
				t.Fatalf("got %d events, want %d; stats %+v", len(evs), tc.events, p.Stats)
			}
			if int64(len(evs)) != p.Stats.Events {
				t.Errorf("Stats.Events %d, visited %d", p.Stats.Events, len(evs))
			}
			if fmt.Sprint(p.Stats.Skipped) != fmt.Sprint(nilIfEmpty(tc.skipped)) {
				t.Errorf("skipped %v, want %v", p.Stats.Skipped, tc.skipped)
			}
			if u := p.Stats.Skipped.Unknown(); len(u) > 0 {
				t.Errorf("skipped by codes no reason has: %v", u)
			}
			if fmt.Sprint(p.Stats.UnknownFields) != fmt.Sprint(nilIfEmpty(tc.unknown)) {
				t.Errorf("unknown %v, want %v", p.Stats.UnknownFields, tc.unknown)
			}
			if fmt.Sprint(p.Stats.BadValues) != fmt.Sprint(nilIfEmpty(tc.bad)) {
				t.Errorf("bad values %v, want %v", p.Stats.BadValues, tc.bad)
			}
			if tc.check != nil {
				tc.check(t, evs)
			}
		})
	}
}

func nilIfEmpty[K comparable](m map[K]int64) map[K]int64 {
	if len(m) == 0 {
		return nil
	}
	return m
}

// TestReasons: every reason the parser counts is registered, with a
// snake_case code and words, and no two share a code.
func TestReasons(t *testing.T) {
	if err := skip.Check(); err != nil {
		t.Fatal(err)
	}
	seen := map[skip.Code]bool{}
	for _, r := range Reasons {
		t.Run(string(r.Code()), func(t *testing.T) {
			if seen[r.Code()] {
				t.Errorf("listed twice")
			}
			seen[r.Code()] = true
			if r.Words() == string(r.Code()) {
				t.Errorf("not registered: its words are its code")
			}
		})
	}
}
