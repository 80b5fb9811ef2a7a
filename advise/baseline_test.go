package advise

import (
	"testing"
)

// TestBaseline: a healthy server at its defaults gets only information
// (the slow log, and performance_schema where it is off by default).
func TestBaseline(t *testing.T) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			res := Audit(snapFor(sv), Options{})
			want := map[string]bool{"mysql-slow-log": true}
			if sv.flavor == "mariadb" {
				want["mysql-performance-schema"] = true
			}
			got := map[string]bool{}
			for _, f := range res.Findings {
				got[f.ID] = true
				if f.Severity != Info {
					t.Errorf("%s is %s on a healthy server", f.ID, f.Severity)
				}
			}
			for id := range want {
				if !got[id] {
					t.Errorf("missing %s", id)
				}
			}
			for id := range got {
				if !want[id] {
					t.Errorf("unexpected %s:%s", id, describe(res.Findings))
				}
			}
		})
	}
}
