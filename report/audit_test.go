package report

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/internal/golden"
)

// TestAuditRenderers renders a small audit in every format against
// reviewed golden files.
func TestAuditRenderers(t *testing.T) {
	r := &advise.Result{
		Host:  "db1",
		Taken: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Findings: []advise.Finding{{
			ID: "mysql-tmp-table-size", Title: "Temporary tables spill to disk", Severity: advise.Warning, Layer: "mysql",
			Evidence: []advise.Evidence{{What: "Created_tmp_disk_tables", Value: "12.5", Unit: "/s", Source: "SHOW GLOBAL STATUS, delta over 10 s"}},
			Change:   &changeset.Change{Kind: "mysql-variable", Target: "mysqld", Name: "tmp_table_size", From: "16384", To: "67108864", Direction: "increase", Apply: "SET GLOBAL tmp_table_size = 67108864"},
			Also:     []changeset.Change{{Kind: "mysql-variable", Target: "mysqld", Name: "max_heap_table_size", From: "16384", To: "67108864", Direction: "increase"}},
			Effect:   "implicit temporary tables stay in memory",
			Risk:     changeset.Risk{Memory: "up to 64 MiB per temporary table"},
			Source:   "the smartphone game backend's write-up; MySQL manual",
		}},
		CollectorErrors: []collect.CollectorError{{Collector: "redis", Error: "dial tcp 127.0.0.1:6379: connection refused"}},
		NotSeen:         []string{"memcached: not collected"},
	}
	for _, f := range AuditFormats {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Audit(&b, r, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "audit."+f), b.Bytes())
		})
	}
}
