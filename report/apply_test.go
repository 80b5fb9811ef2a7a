package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stacktune/stacktune/apply"
)

// TestApplyTransactions pins the journal's list in text: id, state,
// start (local time) and label aligned as a table, each transaction's
// files and error under it.
func TestApplyTransactions(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.Local)
	hist := []apply.Summary{
		{ID: "20261128-100000-ab", State: "rolled-back", Started: at, Label: "tune: 索引", Files: []string{"/etc/mysql/conf.d/stacktune.cnf"}},
		{ID: "20261128-090000-cd", State: "applied", Started: at.Add(-time.Hour), Error: "activating mysql: refused"},
	}
	var b bytes.Buffer
	if err := ApplyTransactions(&b, hist, "/var/lib/stacktune", Text); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"  20261128-100000-ab  rolled-back  2026-11-28 10:00:00  tune: 索引\n" +
		"    /etc/mysql/conf.d/stacktune.cnf\n" +
		"  20261128-090000-cd  applied      2026-11-28 09:00:00\n" +
		"    error: activating mysql: refused\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := ApplyTransactions(&b, nil, "/var/lib/stacktune", Text); err != nil || b.String() != "no transactions in /var/lib/stacktune\n" {
		t.Errorf("no history: %q, %v", b.String(), err)
	}
}
