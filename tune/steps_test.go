package tune

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/indexadv"
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
		finding(appNPlusOne, changeset.App),      // listed as the N+1 below
	}}
	d := &diagnose.Result{Audit: audit,
		Indexes:  &indexadv.Result{Changes: &changeset.Set{Changes: []changeset.Change{{Kind: changeset.Index, Target: "shop.orders", Name: "ix_user", To: "(`user_id`)"}}}},
		NPlusOne: []diagnose.NPlusOne{{ID: "ABC", Fingerprint: "select * from items where id = ?", Endpoint: "GET /cart", CallsPerRequest: 12, Source: diagnose.EndpointMeasured, Rewrite: "one IN (...) query"}},
	}
	cases := []struct {
		name     string
		hostWide bool
		want     map[string][]string // step label -> findings taken
		reasons  map[string]string   // not applied -> a word of its reason
	}{
		{"without --host-wide", false,
			map[string][]string{"my.cnf": {"mysql-tmp-table-size"}, "nginx": {"nginx-gzip"}, "app workers": {"app-workers"}, "indexes": nil, "host-wide": nil},
			map[string]string{"mysql-open-files-limit": "host-wide", "linux-somaxconn": "host-wide", "mysql-performance-schema": "observability",
				"memcached-ttl": "memcached", "linux-noatime": "fstab", "connection-churn": "application", "mysql-flush-log-at-trx-commit": "information", "n-plus-one": "one IN (...) query"}},
		{"with --host-wide", true,
			map[string][]string{"my.cnf": {"mysql-tmp-table-size"}, "nginx": {"nginx-gzip"}, "app workers": {"app-workers"}, "host-wide": {"mysql-open-files-limit", "linux-somaxconn"}},
			map[string]string{"mysql-performance-schema": "observability", "memcached-ttl": "memcached", "linux-noatime": "fstab"}},
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
			}
			na := map[string]string{}
			for _, f := range p.notApplied() {
				if _, dup := na[f.ID]; dup {
					t.Errorf("%s listed twice as not applied", f.ID)
				}
				na[f.ID] = f.Reason
			}
			if _, ok := na[appNPlusOne]; ok {
				t.Errorf("the audit's %s is listed beside the N+1 it repeats", appNPlusOne)
			}
			for id, word := range c.reasons {
				if !strings.Contains(na[id], word) {
					t.Errorf("not applied %s: reason %q, want it to say %q", id, na[id], word)
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
