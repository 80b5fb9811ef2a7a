package report

import (
	"bytes"
	"testing"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/fleet"
)

// Hostile values of the fleet's reports (see renderers in clean_test.go):
// host names and roles come from the inventory, errors, values and
// command output from the hosts.

func hostileFleetAudit(h string) *fleet.Report {
	f := advise.Finding{ID: h, Title: h, Severity: advise.Severity(h), Layer: h,
		Evidence: []advise.Evidence{{What: h, Value: h, Unit: h, Source: h}}, Effect: h, Source: h}
	return &fleet.Report{Taken: t0, Inventory: h, Hosts: 6, Answered: 5,
		Failed: []fleet.Host{{Name: h, Address: h, Role: h, Stage: fleet.Stage(h), Error: h}},
		Roles: []fleet.RoleReport{
			{Role: h, Hosts: []string{h, "web2"}, Failed: 1,
				Findings: []fleet.RoleFinding{{Finding: f, Hosts: []string{h, "web2"}, Of: 2}},
				Outliers: []fleet.Outlier{{Host: h, Kind: "setting", Layer: h, Metric: h, Value: h, Typical: h, Others: 2, Why: h}}},
			{Role: "db", Hosts: []string{"db1"}, NotCompared: h},
			{Role: "cache", Hosts: []string{"c1", "c2", "c3"}},
		},
		PerHost: map[string]*advise.Result{h: {Host: h}},
	}
}

func hostileFleetApply(h string) *fleet.ApplyReport {
	return &fleet.ApplyReport{Label: h, Batches: [][]string{{h}, {"web2"}}, StoppedAt: h, ElapsedS: 3,
		Hosts: []fleet.HostApply{
			{Name: h, Role: h, Batch: 1, State: fleet.HostApplied, ElapsedS: 1},
			{Name: "web2", Role: "web", Batch: 2, State: fleet.HostFailed, Stage: fleet.Stage(h), Error: h, Output: h},
			{Name: "web3", Role: "web", Batch: 2, State: fleet.HostRollbackFailed, Error: h, HandFix: h},
			{Name: "web4", Role: "web", State: fleet.HostNotStarted},
		}}
}

func hostileFleetPlan(h string) *fleet.Plan {
	return &fleet.Plan{Role: h, Measured: []string{h, "servers: 4 (web)"}, Report: &capacity.Report{
		Inputs:  capacity.Inputs{Rate: 10, Servers: 4, Workers: 2, PortRange: h},
		Results: []capacity.Result{{ID: h, Title: h, Value: 1, Unit: h, Formula: h, Warnings: []string{h}}},
	}}
}

// TestFleetHosts pins collect's host list: the state, name, role and
// time or failure aligned as a table (the CLI's tests look for
// "FAILED  web6").
func TestFleetHosts(t *testing.T) {
	s := &fleet.Snapshot{ElapsedS: 2.5, Parallel: 4, Hosts: []fleet.Host{
		{Name: "web1", Role: "web", ElapsedS: 1.25, Snapshot: &collect.Snapshot{}},
		{Name: "web6", Role: "web", Stage: fleet.Stage("ssh"), Error: "connection refused"},
		{Name: "データベース", Role: "db", ElapsedS: 2, Snapshot: &collect.Snapshot{}},
	}}
	var b bytes.Buffer
	if err := FleetHosts(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "# 3 hosts, 2 answered, 1 failed, in 2.5s (4 at a time)\n" +
		"  ok      web1          web  1.2s\n" +
		"  FAILED  web6          web  ssh: connection refused\n" +
		"  ok      データベース  db   2.0s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
