package reqtrace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// pfsServer are the options of a server whose performance_schema keeps a
// history long enough for eight home pages at once between two reads.
var pfsServer = map[string]string{"performance_schema": "ON", "performance_schema_events_statements_history_long_size": "100000"}

func consumers(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT NAME, ENABLED FROM performance_schema.setup_consumers")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, e string
		rows.Scan(&n, &e)
		out[n] = e
	}
	return out
}

// TestTraceRefappPFS is the trace run without the proxy: the statements
// come from performance_schema's history (the app sends its statements as
// text: MariaDB records no text for prepared statements), and the
// consumers it turns on are off again after.
func TestTraceRefappPFS(t *testing.T) {
	s := startRefStack(t, stackOptions{server: pfsServer, dsnArgs: "interpolateParams=true"})
	const me = 12
	n := expectedChecks(t, s, me)
	before := consumers(t, s.db.DB())
	var lines []string
	rep, _, err := Trace(context.Background(), TraceOptions{
		Bench: benchrun.Options{Scenario: scenarioFor(t, s.app.URL(), []int{me}, true),
			Load: loadgen.Options{Duration: 2 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		PFS:      s.db.DB(),
		Progress: func(l string) { lines = append(lines, l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d statements, %d attributed, %d not; %v", rep.Requests, rep.Statements, rep.Attributed, rep.Unattributed, rep.Notes)
	checkHome(t, rep, "GET /", n)
	// The server's timer tied to this host's clock puts every statement
	// in its request (but those of the request the end of the run cut).
	if cut := rep.Skipped["statements_of_cut_requests"]; rep.Unattributed != cut || rep.Ambiguous != 0 {
		t.Errorf("%d statements not attributed, %d of them in cut requests, %d ambiguous", rep.Unattributed, cut, rep.Ambiguous)
	}
	if rep.Source != SourcePFSHistory || rep.RowsExamined != "measured" {
		t.Errorf("source %q, rows examined %q", rep.Source, rep.RowsExamined)
	}
	if after := consumers(t, s.db.DB()); !maps.Equal(before, after) {
		t.Errorf("consumers before %v, after %v", before, after)
	}
	if len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), "SET ENABLED = 'NO'") {
		t.Errorf("the consumers turned on were not announced with their undo: %q", lines)
	}
}

// TestTraceRefappPFSPrepared: an app that prepares its statements on the
// server (no interpolateParams) runs them as executions MariaDB's history
// records without text; the report says how many, in a note and a skip
// count, instead of losing them in silence (the reader was stopped, and
// its notes dropped, before the report was built).
func TestTraceRefappPFSPrepared(t *testing.T) {
	s := startRefStack(t, stackOptions{server: pfsServer})
	rep, _, err := Trace(context.Background(), TraceOptions{
		Bench: benchrun.Options{Scenario: scenarioFor(t, s.app.URL(), []int{12}, true),
			Load: loadgen.Options{Duration: 2 * time.Second, KeepAlive: true, Timeout: 30 * time.Second}},
		PFS: s.db.DB(),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Skipped[ReasonPreparedWithoutText.Code()]
	t.Logf("%d requests, %d statements; %d executions without text", rep.Requests, rep.Statements, n)
	if n == 0 || int64(rep.Statements) >= n || !strings.Contains(strings.Join(rep.Notes, "\n"), fmt.Sprintf("%d executions of prepared statements have no text", n)) {
		t.Errorf("executions without text %d (statements with text %d), notes %q", n, rep.Statements, rep.Notes)
	}
}

// TestTagsRefappPFS: tags read from performance_schema's history while
// eight users load their home pages at once.
func TestTagsRefappPFS(t *testing.T) {
	s := startRefStack(t, stackOptions{server: pfsServer, tags: true, dsnArgs: "interpolateParams=true"})
	users := []int{4, 6, 9, 10, 11, 14, 15, 16}
	want := map[int]int{}
	for _, u := range users {
		want[u] = expectedChecks(t, s, u)
	}
	before := consumers(t, s.db.DB())
	var traces map[string]int
	checkTags(t, s, nil, want, func(opt Options) (*Report, error) {
		return Tags(context.Background(), s.db.DB(), opt, nil, func(context.Context) error {
			traces = concurrentHomes(t, s.app.URL(), users, 3)
			return nil
		})
	}, func() map[string]int { return traces })
	if after := consumers(t, s.db.DB()); !maps.Equal(before, after) {
		t.Errorf("consumers before %v, after %v", before, after)
	}
}

// TestPFSOff: without performance_schema, a trace run says how to turn
// it on, or to use the proxy.
func TestPFSOff(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	_, _, err := Trace(context.Background(), TraceOptions{Bench: benchrun.Options{URL: "http://127.0.0.1:9/", Load: loadgen.Options{Duration: time.Second}}, PFS: m.DB()})
	if !errors.Is(err, ErrPFSOff) {
		t.Errorf("err %v", err)
	}
}

// TestPFSSecondRead feeds the history reader the rows successive reads
// return: a row is passed on once, in the version two reads agreed on,
// so a row caught half written (no text, no end yet) is never what the
// report counts; a row no later read returns is passed on once it is
// past the margin, and the rows left at the end are passed on by flush.
func TestPFSSecondRead(t *testing.T) {
	const s = uint64(time.Second / time.Nanosecond * 1000) // a second in picoseconds
	row := func(event, end uint64, text string) pfsRow {
		return pfsRow{thread: 7, event: event, name: "statement/sql/select", start: end - 1000, end: end, text: []byte(text), hasText: true}
	}
	torn := pfsRow{thread: 7, event: 1, name: "statement/sql/select", hasText: true} // text and times not written yet
	whole := row(1, 10*s, "SELECT 1 /*route='/a'*/")
	later := func(event uint64, at uint64) pfsRow { return row(event, at, "SELECT 2") }
	cases := []struct {
		name  string
		reads [][]pfsRow
		flush bool
		want  []string // texts passed on, in order
	}{
		{"read twice", [][]pfsRow{{whole}, {whole}}, false, []string{"SELECT 1 /*route='/a'*/"}},
		{"read once: waits", [][]pfsRow{{whole}}, false, nil},
		{"read three times: once", [][]pfsRow{{whole}, {whole}, {whole}}, false, []string{"SELECT 1 /*route='/a'*/"}},
		{"torn, then whole twice", [][]pfsRow{{torn}, {whole}, {whole}}, false, []string{"SELECT 1 /*route='/a'*/"}},
		{"torn, then whole once: waits", [][]pfsRow{{torn}, {whole}}, false, nil},
		{"torn, then whole once, then the end", [][]pfsRow{{torn}, {whole}}, true, []string{"SELECT 1 /*route='/a'*/"}},
		{"read once, later rows not yet past the margin", [][]pfsRow{{whole}, {later(2, 9*s+s/2)}, {later(2, 9*s+s/2)}}, false,
			[]string{"SELECT 2"}},
		{"read once, then past the margin", [][]pfsRow{{whole}, {later(2, 11*s)}, {later(2, 11*s)}}, false,
			[]string{"SELECT 2", "SELECT 1 /*route='/a'*/"}},
		{"torn once, then past the margin", [][]pfsRow{{torn}, {later(2, 11*s)}, {later(2, 11*s)}}, false,
			[]string{"SELECT 2", ""}},
		{"flush in the order they ended", [][]pfsRow{{later(5, 13*s), whole}}, true, []string{"SELECT 1 /*route='/a'*/", "SELECT 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			h := &pfsHistory{lastEnd: 9 * s, seen: map[[2]uint64]uint64{}, pending: map[[2]uint64]pfsRow{},
				sink: func(r rawStmt) { got = append(got, string(r.text)) }}
			for _, read := range c.reads {
				for _, r := range read {
					h.take(r)
				}
				h.expire()
			}
			if c.flush {
				h.flush()
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("passed on %q, want %q", got, c.want)
			}
		})
	}
}

// TestPFSBufferReuse: the driver reuses a row's text buffer at the next
// Scan, so the reader keeps a copy of a row it waits on; the text passed
// on is the one read, not what the buffer holds later.
func TestPFSBufferReuse(t *testing.T) {
	var got []string
	h := &pfsHistory{seen: map[[2]uint64]uint64{}, pending: map[[2]uint64]pfsRow{},
		sink: func(r rawStmt) { got = append(got, string(r.text)) }}
	buf := []byte("SELECT 1")
	r := pfsRow{thread: 1, event: 1, name: "statement/sql/select", start: 1, end: 2, text: buf, hasText: true}
	h.take(r)
	copy(buf, "XXXXXXXX") // the next Scan
	r.text = []byte("SELECT 1")
	h.take(r)
	if !slices.Equal(got, []string{"SELECT 1"}) {
		t.Errorf("passed on %q, want [SELECT 1]", got)
	}
}
