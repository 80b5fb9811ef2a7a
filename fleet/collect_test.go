package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/inventory"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestMain lets the test binary stand in for stacktune on the lab's
// hosts: the fleet copies "itself" (this binary) to each host and runs it
// as `collect`, which here takes a snapshot of the Linux layer as the real
// command does (cmd/stacktune's tests run the real command the same way).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "collect" {
		os.Exit(agentCollect(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func agentCollect(args []string) int {
	if slices.Contains(args, "--fail") {
		fmt.Fprintln(os.Stderr, "stacktune: collect: told to fail")
		return 1
	}
	if slices.Contains(args, "--garbage") {
		fmt.Println("this is not JSON")
		return 0
	}
	s, err := collect.Take(context.Background(), collect.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(s); err != nil {
		return 1
	}
	return 0
}

func labHosts(t *testing.T, lab *sandbox.FleetLab) []inventory.Host {
	t.Helper()
	inv, err := inventory.Load(lab.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Hosts
}

// TestCollectLab collects a lab fleet over real SSH: the copied binary
// runs on every reachable host, the unreachable host and the one whose
// key does not match are recorded with their stage and reason, and the
// audit finds the two outliers.
func TestCollectLab(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 5, TimeWait: 100})
	hosts := labHosts(t, lab)
	// A host whose own collect args make the command fail, and one whose
	// output is not a snapshot: both recorded, the rest go on.
	hosts = append(hosts, withVar(hosts[0], "web-failing", VarCollectArgs, "--fail"), withVar(hosts[0], "web-garbage", VarCollectArgs, "--garbage"))
	var progress []string
	fs, err := Collect(context.Background(), hosts, CollectOptions{
		Dialer:   &SSHDialer{KnownHosts: []string{lab.KnownHosts}, ConnectTimeout: 5 * time.Second},
		Parallel: 3,
		Progress: func(done, total int, h Host) {
			progress = append(progress, fmt.Sprintf("%d/%d %s", done, total, h.Name))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != len(hosts) {
		t.Errorf("progress %v", progress)
	}
	want := map[string]struct {
		stage Stage
		msg   string
	}{
		"web6":        {StageConnect, "connection refused"},
		"web7":        {StageHostKey, "CHANGED"},
		"web-failing": {StageRun, "exited with status 1: stacktune: collect: told to fail"},
		"web-garbage": {StageRead, "not a snapshot"},
	}
	for _, h := range fs.Hosts {
		w, bad := want[h.Name]
		switch {
		case bad && (h.OK() || h.Stage != w.stage || !strings.Contains(h.Error, w.msg)):
			t.Errorf("%s: stage %q error %q, want %q %q", h.Name, h.Stage, h.Error, w.stage, w.msg)
		case !bad && !h.OK():
			t.Errorf("%s: %s: %s", h.Name, h.Stage, h.Error)
		case !bad && h.Snapshot.Linux == nil:
			t.Errorf("%s: no Linux layer", h.Name)
		}
	}
	r := Audit(fs, AuditOptions{})
	if r.Answered != 6 || len(r.Failed) != 4 {
		t.Errorf("answered %d, failed %d", r.Answered, len(r.Failed))
	}
	var web *RoleReport
	for i := range r.Roles {
		if r.Roles[i].Role == "web" {
			web = &r.Roles[i]
		}
	}
	if web == nil {
		t.Fatal("no web role")
	}
	found := map[string]bool{}
	for _, o := range web.Outliers {
		found[o.Host+" "+o.Metric] = true
		t.Logf("outlier %s %s = %s (%s)", o.Host, o.Metric, o.Value, o.Why)
	}
	for _, w := range []string{"web2 net.ipv4.ip_local_port_range", "web3 TIME_WAIT sockets"} {
		if !found[w] {
			t.Errorf("outlier %q not found", w)
		}
	}
	if len(web.Outliers) > 3 {
		t.Errorf("%d outliers: the healthy hosts are alike", len(web.Outliers))
	}
	// Save and load: the file is a fleet snapshot, not a host's.
	path := filepath.Join(t.TempDir(), "fleet.json")
	b, _ := json.Marshal(fs)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsFleet(path) {
		t.Error("IsFleet = false")
	}
	back, err := Load(path)
	if err != nil || len(back.Hosts) != len(fs.Hosts) {
		t.Errorf("Load: %v", err)
	}
}

func withVar(h inventory.Host, name, k, v string) inventory.Host {
	h.Name = name
	h.Vars = map[string]string{}
	for a, b := range h.Vars {
		h.Vars[a] = b
	}
	h.Vars[k] = v
	return h
}

// TestPlanFleet plans from a lab fleet: servers, the port range most hosts
// run and the rate per server from the TIME_WAIT toward :3306 (100 sockets
// over 60 s on the median host).
func TestPlanFleet(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 3, TimeWait: 120})
	hosts := labHosts(t, lab)
	fs, err := Collect(context.Background(), hosts, CollectOptions{Dialer: &SSHDialer{KnownHosts: []string{lab.KnownHosts}}})
	if err != nil {
		t.Fatal(err)
	}
	o := capacity.DefaultOptions()
	o.Rate, o.Workers, o.ResponseTime = 120, 10, 50*time.Millisecond
	p, err := PlanFleet(fs, PlanInputs{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%q", p.Measured)
	if p.Role != "web" || p.Report.Inputs.Servers != 5 || p.Report.Inputs.PortRange != "32768 60999" {
		t.Errorf("inputs %+v", p.Report.Inputs)
	}
	// The median host holds 120 TIME_WAIT sockets to :3306: 2 req/s each.
	if got := p.Report.Inputs.PerServerRate; got != 2 {
		t.Errorf("rate per server %v, want 120 / 60 s = 2", got)
	}
	var needed *capacity.Result
	for i := range p.Report.Results {
		if p.Report.Results[i].ID == capacity.IDServersNeeded {
			needed = &p.Report.Results[i]
		}
	}
	if needed == nil || needed.Value != 60 {
		t.Errorf("servers needed: %+v, want 120 / 2 = 60", needed)
	}
	if _, err := PlanFleet(fs, PlanInputs{Options: o, Role: "cache"}); err == nil {
		t.Error("an unknown role")
	}
}
