package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/report"
)

// TestDigestDemo runs the README's main job, shortened, and checks that the
// slow log and performance_schema tell the same story: the OR scan on
// relations tops both, with the same number of calls, and its class (ID)
// is the same in both. Its HTML is one page with both digests.
func TestDigestDemo(t *testing.T) {
	var page bytes.Buffer
	res, err := DigestDemo(context.Background(), &page, DigestOptions{Duration: 1500 * time.Millisecond, Limit: 3, Format: report.HTML})
	if err != nil {
		t.Fatal(err)
	}
	// The HTML format is one page holding both digests.
	if out := page.String(); strings.Count(out, "<html") != 1 || !strings.Contains(out, `<section id="slowlog">`) || !strings.Contains(out, `<section id="pfs">`) {
		t.Errorf("not one page with both digests:\n%s", out)
	}
	if res.Workload.Pages == 0 || res.Workload.Errors != 0 {
		t.Fatalf("workload %+v", res.Workload)
	}
	const orScan = "select * from relations where one = ? or another = ? order by created_at desc"
	for name, rep := range map[string]struct {
		fp    string
		id    string
		count int64
	}{
		"slowlog": {res.SlowLog.Classes[0].Fingerprint, res.SlowLog.Classes[0].ID, res.SlowLog.Classes[0].Count},
		"pfs":     {res.PerformanceSchema.Classes[0].Fingerprint, res.PerformanceSchema.Classes[0].ID, res.PerformanceSchema.Classes[0].Count},
	} {
		if rep.fp != orScan {
			t.Errorf("%s: top class %q, want the OR scan", name, rep.fp)
		}
		// Every completed page ran the scan once; pages cut off by the
		// deadline (at most one per connection) may have run it too.
		if rep.count < res.Workload.Pages || rep.count > res.Workload.Pages+4 {
			t.Errorf("%s: %d calls of the OR scan, workload completed %d pages on 4 connections", name, rep.count, res.Workload.Pages)
		}
	}
	if a, b := res.SlowLog.Classes[0].ID, res.PerformanceSchema.Classes[0].ID; a != b {
		t.Errorf("query IDs differ: slow log %s, performance_schema %s", a, b)
	}
	top := res.SlowLog.Classes[0]
	if top.Plan == nil || top.Plan.FullScans != top.Count || top.Plan.Filesorts != top.Count || top.RowsExaminedPerSent < 100 {
		t.Errorf("OR scan evidence: plan %+v, examined per sent %v", top.Plan, top.RowsExaminedPerSent)
	}
	if res.SlowLog.Skipped.Count != 0 {
		t.Errorf("slow log skipped %+v", res.SlowLog.Skipped)
	}
}
