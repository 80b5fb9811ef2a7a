package diagnose

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/history"
)

func TestLedgerRun(t *testing.T) {
	tests := []struct {
		name  string
		res   *Result
		kinds string // "" with nil
		nil   bool
	}{
		{name: "no bench", res: &Result{Digest: &digest.Report{}}, nil: true},
		{name: "a nil result", res: nil, nil: true},
		{name: "bench only", res: &Result{Bench: &benchrun.Summary{RunResult: benchrun.RunResult{Score: 5, Passed: true}}}, kinds: ""},
		{name: "everything", res: &Result{Server: "MariaDB 10.11", Bench: &benchrun.Summary{RunResult: benchrun.RunResult{Score: 5}},
			Digest: &digest.Report{}, Snapshot: &collect.Snapshot{}, Audit: &advise.Result{}},
			kinds: strings.Join([]string{history.ArtefactDigest, history.ArtefactSnapshot, history.ArtefactFindings}, ",")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.res.LedgerRun("diag")
			if (r == nil) != tc.nil {
				t.Fatalf("run %+v", r)
			}
			if r == nil {
				return
			}
			var kinds []string
			for _, a := range r.Artefacts {
				kinds = append(kinds, a.Kind)
				if len(a.Data) == 0 {
					t.Errorf("%s: no data", a.Kind)
				}
			}
			if strings.Join(kinds, ",") != tc.kinds || r.Command != history.CommandDiagnose || r.Label != "diag" {
				t.Errorf("kinds %v, command %q, label %q", kinds, r.Command, r.Label)
			}
			if tc.res.Server != "" && r.Versions["mysql"] != tc.res.Server {
				t.Errorf("versions %v", r.Versions)
			}
		})
	}
}
