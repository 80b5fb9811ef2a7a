package tune

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/nplusone"
)

// finding is an audit finding with one change of kind per kind.
func finding(id string, kinds ...changeset.Kind) advise.Finding {
	f := advise.Finding{ID: id, Title: id}
	for i, k := range kinds {
		c := changeset.Change{Kind: k, Target: "t", Name: id, To: "1"}
		if i == 0 {
			f.Change = &c
		} else {
			f.Also = append(f.Also, c)
		}
	}
	return f
}

// TestDefaultStepsPick: each default step takes the audit findings whose
// every change is of its kinds, once, observability findings never, the
// host-wide step only when allowed; what no step took is listed with the
// reason that fits it.
func TestDefaultStepsPick(t *testing.T) {
	cart := nplusone.Pattern{ID: "ABC", Fingerprint: "select * from items where id = ?", Endpoint: "GET /cart", PerRequest: 12, Source: diagnose.EndpointMeasured, Rewrite: "one IN (...) query"}
	// The audit's finding about the pattern, as diagnose gives the rule
	// the per-request view's patterns.
	auditN1 := finding(appNPlusOne, changeset.App)
	auditN1.Evidence = []advise.Evidence{{What: "calls per request", Value: "12.0", Source: "the audit's own"}}
	auditN1.NPlusOne = &nplusone.Pattern{Endpoint: cart.Endpoint, Fingerprint: cart.Fingerprint, PerRequest: 12}
	audit := &advise.Result{Findings: []advise.Finding{
		finding("mysql-tmp-table-size", changeset.MySQLVariable, changeset.MySQLVariable),
		finding("mysql-open-files-limit", changeset.MySQLOption, changeset.Systemd), // mixed: host-wide
		finding("mysql-performance-schema", changeset.MySQLVariable),                // observability
		finding("nginx-gzip", changeset.Nginx),
		finding("app-workers", changeset.PHPFPM),
		finding("linux-somaxconn", changeset.Sysctl),
		finding("memcached-ttl", changeset.Memcached),
		finding("linux-noatime", changeset.Mount),
		finding("connection-churn", changeset.App),
		finding("mysql-flush-log-at-trx-commit"), // information only
		auditN1,                                  // merged into the N+1 below
	}}
	d := &diagnose.Result{Audit: audit,
		Indexes:  &indexadv.Result{Changes: &changeset.Set{Changes: []changeset.Change{{Kind: changeset.Index, Target: "shop.orders", Name: "ix_user", To: "(`user_id`)"}}}},
		NPlusOne: []nplusone.Pattern{cart},
	}
	cases := []struct {
		name     string
		hostWide bool
		want     map[string][]string   // step label -> findings taken
		reasons  map[string]LeftReason // not applied -> why
	}{
		{"without --host-wide", false,
			map[string][]string{"my.cnf": {"mysql-tmp-table-size"}, "nginx": {"nginx-gzip"}, "app workers": {"app-workers"}, "indexes": nil, "host-wide": nil},
			map[string]LeftReason{"mysql-open-files-limit": LeftHostWide, "linux-somaxconn": LeftHostWide, "mysql-performance-schema": LeftObservability,
				"memcached-ttl": LeftServiceConfig, "linux-noatime": LeftMount, "connection-churn": LeftAppSetting, "mysql-flush-log-at-trx-commit": LeftInformation, "n-plus-one": LeftAppCode}},
		{"with --host-wide", true,
			map[string][]string{"my.cnf": {"mysql-tmp-table-size"}, "nginx": {"nginx-gzip"}, "app workers": {"app-workers"}, "host-wide": {"mysql-open-files-limit", "linux-somaxconn"}},
			map[string]LeftReason{"mysql-performance-schema": LeftObservability, "memcached-ttl": LeftServiceConfig, "linux-noatime": LeftMount}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPick(d, c.hostWide)
			for _, s := range DefaultSteps() {
				w, err := s.Plan(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, ch := range w.Changes {
					if ch.Kind != changeset.Index && !slices.Contains(got, ch.Name) {
						got = append(got, ch.Name)
					}
				}
				want, ok := c.want[s.Label]
				if ok && !slices.Equal(got, want) {
					t.Errorf("step %s took %v, want %v", s.Label, got, want)
				}
				if s.Label == "indexes" && len(w.Changes) != 1 {
					t.Errorf("the indexes step took %v", w.Changes)
				}
				// The findings come with the changes, as values: one per
				// finding taken, the audit's own.
				if s.Label != "indexes" {
					var ids []string
					for _, f := range w.Findings {
						ids = append(ids, f.ID)
						if af := auditByID(audit, f.ID); af == nil || f.Title != af.Title {
							t.Errorf("step %s: finding %+v is not the audit's", s.Label, f)
						}
					}
					if !slices.Equal(ids, want) && ok {
						t.Errorf("step %s described by %v, want %v", s.Label, ids, want)
					}
				}
			}
			na := map[string]LeftReason{}
			for _, f := range p.notApplied() {
				if _, dup := na[f.ID]; dup {
					t.Errorf("%s listed twice as not applied", f.ID)
				}
				na[f.ID] = f.Reason
			}
			if _, ok := na[appNPlusOne]; ok {
				t.Errorf("the audit's %s is listed beside the N+1 it repeats", appNPlusOne)
			}
			for _, f := range p.notApplied() {
				if f.ID == "n-plus-one" && !slices.Contains(f.Evidence, auditN1.Evidence[0].String()) {
					t.Errorf("the N+1 %q lacks the audit's evidence: %q", f.Title, f.Evidence)
				}
				if f.ID == "n-plus-one" && !strings.Contains(f.Change, "one IN (...) query") {
					t.Errorf("the N+1 %q: change %q does not say the one query", f.Title, f.Change)
				}
			}
			for id, why := range c.reasons {
				if na[id] != why {
					t.Errorf("not applied %s: reason %q, want %q", id, na[id], why)
				}
			}
			for label, ids := range c.want {
				for _, id := range ids {
					if _, ok := na[id]; ok {
						t.Errorf("%s was taken by %s but is listed as not applied", id, label)
					}
				}
			}
		})
	}
}

func auditByID(a *advise.Result, id string) *advise.Finding {
	for i := range a.Findings {
		if a.Findings[i].ID == id {
			return &a.Findings[i]
		}
	}
	return nil
}

// TestNPlusOneMerged: the diagnosis's N+1 pattern and the audit's
// finding about it are one finding with both evidences, taken together by
// a step or listed together as not applied; an audit finding about a
// pattern the diagnosis does not list stays on its own.
func TestNPlusOneMerged(t *testing.T) {
	cart := nplusone.Pattern{ID: "ABC", Fingerprint: "select * from items where id = ?", Endpoint: "GET /cart", PerRequest: 12, Source: diagnose.EndpointMeasured, Rewrite: "one IN (...) query", Problem: "the diagnosis's own"}
	about := func(endpoint, fp string) advise.Finding {
		f := finding(appNPlusOne, changeset.App)
		f.Title = "N+1 in " + endpoint
		f.Evidence = []advise.Evidence{{What: "calls per request", Value: "12.0", Source: "the audit of " + endpoint}}
		f.NPlusOne = &nplusone.Pattern{Endpoint: endpoint, Fingerprint: fp, PerRequest: 12}
		return f
	}
	d := &diagnose.Result{NPlusOne: []nplusone.Pattern{cart}, Audit: &advise.Result{Findings: []advise.Finding{
		about("GET /other", cart.Fingerprint), // another endpoint: not this pattern
		about(cart.Endpoint, cart.Fingerprint),
	}}}
	cases := []struct {
		name string
		take bool // a step takes the pattern
	}{
		{"not applied", false},
		{"taken by a step", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPick(d, false)
			var merged []Finding
			if tc.take {
				ns, fs := p.NPlusOne(func(*nplusone.Pattern) bool { return true })
				if len(ns) != 1 || len(fs) != 1 || ns[0].ID != cart.ID {
					t.Fatalf("took %+v with %+v", ns, fs)
				}
				merged = fs
			}
			var alone []string
			for _, f := range p.notApplied() {
				switch f.ID {
				case "n-plus-one":
					merged = append(merged, f)
				case appNPlusOne:
					alone = append(alone, f.Title)
				}
			}
			if len(merged) != 1 {
				t.Fatalf("the pattern is described %d times: %+v", len(merged), merged)
			}
			f := merged[0]
			if !slices.Contains(f.Evidence, "the diagnosis's own") || !slices.Contains(f.Evidence, d.Audit.Findings[1].Evidence[0].String()) {
				t.Errorf("evidence %q, want the diagnosis's and the audit's", f.Evidence)
			}
			if slices.Contains(f.Evidence, d.Audit.Findings[0].Evidence[0].String()) {
				t.Errorf("evidence %q has the other endpoint's", f.Evidence)
			}
			if !slices.Equal(alone, []string{"N+1 in GET /other"}) {
				t.Errorf("audit N+1 findings listed on their own: %q, want only the other endpoint's", alone)
			}
		})
	}
}

// TestStackMasksTheURL: the loop's report names the bench URL and base
// URL without their passwords or query values.
func TestStackMasksTheURL(t *testing.T) {
	tu := &tuner{opt: Options{Diagnose: diagnose.Options{Bench: benchrun.Options{URL: "http://u:pw-S3CRET@h/x?token=S3CRET", BaseURL: "http://h/?key=S3CRET"}}}}
	if got, want := tu.stack().Description, "stacktune tune: http://u:***@h/x?token=*** against http://h/?key=***"; got != want {
		t.Errorf("Description %q, want %q", got, want)
	}
}

// TestPlanIndexesEvidence: the indexes step's findings say, per query,
// the plan before and after and the rows examined, what proved the index.
func TestPlanIndexesEvidence(t *testing.T) {
	ch := changeset.Change{Kind: changeset.Index, Target: "shop.orders", Name: "ix_user", To: "(`user_id`)"}
	d := &diagnose.Result{Indexes: &indexadv.Result{Changes: &changeset.Set{Changes: []changeset.Change{ch}},
		Proposals: []indexadv.Proposal{{Table: "shop.orders", Columns: []string{"user_id"}, RowsBefore: 5000, RowsAfter: 3, Change: ch,
			Evidence: indexadv.ProposalEvidence{Plans: []indexadv.Evidence{{Query: "Q1", PlanBefore: "orders: ALL, 5000 rows", PlanAfter: "orders: ref(ix_user), 3 rows", RowsBefore: 5000, RowsAfter: 3, Chosen: true}}}}}}}
	w, err := planIndexes(context.Background(), newPick(d, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Findings) != 1 {
		t.Fatalf("findings %+v", w.Findings)
	}
	want := "plan of Q1 on the copy: orders: ALL, 5000 rows → orders: ref(ix_user), 3 rows; rows examined 5000 → 3"
	if !slices.Contains(w.Findings[0].Evidence, want) {
		t.Errorf("evidence %q, want %q in it", w.Findings[0].Evidence, want)
	}
}
