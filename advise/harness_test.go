package advise

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// ruleCase is one named case of a rule's table.
type ruleCase struct {
	name string
	// on is the server (servers[].name) of the fixture; "" is MariaDB
	// 10.11, the one installed here.
	on    string
	snap  func(t testing.TB) *collect.Snapshot // instead of a server fixture
	setup func(s *collect.Snapshot)
	opt   Options
	// fires says whether the rule must report a finding.
	fires bool
	check func(t *testing.T, fs []Finding)
}

func serverNamed(t testing.TB, name string) server {
	if name == "" {
		name = "MariaDB 10.11"
	}
	for _, s := range servers {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no server fixture %q", name)
	return server{}
}

// runRuleCases audits each case's snapshot with the rule alone (Audit's
// enforcement of Fixed and of the server's variables included).
func runRuleCases(t *testing.T, r Rule, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s *collect.Snapshot
			if tc.snap != nil {
				s = tc.snap(t)
			} else {
				s = snapFor(serverNamed(t, tc.on))
			}
			if tc.setup != nil {
				tc.setup(s)
			}
			res := audit(s, tc.opt, []Rule{r})
			var fs []Finding
			for _, f := range res.Findings {
				if f.ID == r.ID() {
					fs = append(fs, f)
				}
			}
			for _, n := range res.NotSeen {
				if strings.Contains(n, "stacktune bug") {
					t.Fatalf("rule panicked: %s", n)
				}
			}
			if tc.fires != (len(fs) > 0) {
				t.Fatalf("fires = %v, want %v; findings: %s", len(fs) > 0, tc.fires, describe(fs))
			}
			checkFindingShape(t, s, fs)
			if tc.check != nil && len(fs) > 0 {
				tc.check(t, fs)
			}
		})
	}
}

// describe lists findings for a failure message.
func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + string(f.Severity) + " " + f.ID + ": " + f.Title)
		for _, ch := range f.Changes() {
			b.WriteString("\n    " + string(ch.Kind) + " " + ch.Name + " " + ch.From + " → " + ch.To)
		}
		if f.Risk.Note != "" {
			b.WriteString("\n    note: " + f.Risk.Note)
		}
	}
	return b.String()
}

// checkFindingShape checks what every finding must have.
func checkFindingShape(t *testing.T, s *collect.Snapshot, fs []Finding) {
	t.Helper()
	for _, f := range fs {
		if f.Title == "" || f.Source == "" || f.Effect == "" || f.Layer == "" {
			t.Errorf("%s: title, source, effect and layer are required: %+v", f.ID, f)
		}
		if len(f.Evidence) == 0 {
			t.Errorf("%s: no evidence", f.ID)
		}
		for _, e := range f.Evidence {
			if e.What == "" || e.Source == "" {
				t.Errorf("%s: evidence without what or source: %+v", f.ID, e)
			}
		}
		switch f.Severity {
		case Critical, Warning, Info:
		default:
			t.Errorf("%s: severity %q", f.ID, f.Severity)
		}
		if err := (&changeset.Set{Format: changeset.FormatVersion, Changes: f.Changeset()}).Validate(); err != nil {
			t.Errorf("%s: its changes are no valid change set: %v", f.ID, err)
		}
		for _, ch := range f.Changes() {
			if ch.Kind == "" || ch.Name == "" || ch.Target == "" || ch.Direction == "" {
				t.Errorf("%s: incomplete change %+v", f.ID, ch)
			}
			if ch.Kind == changeset.MySQLVariable && s.MySQL != nil {
				if _, ok := s.MySQL.Variables[ch.Name]; !ok {
					t.Errorf("%s: changes %s, which %s %s does not have", f.ID, ch.Name, s.MySQL.Flavor, s.MySQL.Version)
				}
			}
		}
	}
}

// change returns the change of a finding (Change or Also) by name.
func change(fs []Finding, name string) *changeset.Change {
	for _, f := range fs {
		for _, ch := range f.Changes() {
			if ch.Name == name {
				c := ch
				return &c
			}
		}
	}
	return nil
}

// wantChange checks a finding changes name to value.
func wantChange(t *testing.T, fs []Finding, name, value string) {
	t.Helper()
	ch := change(fs, name)
	if ch == nil {
		t.Fatalf("no change of %s in%s", name, describe(fs))
	}
	if ch.To != value {
		t.Errorf("%s = %s, want %s", name, ch.To, value)
	}
}

// wantNoChange checks no finding changes anything.
func wantNoChange(t *testing.T, fs []Finding) {
	t.Helper()
	for _, f := range fs {
		if len(f.Changes()) > 0 {
			t.Fatalf("%s proposes a change:%s", f.ID, describe(fs))
		}
	}
}

func wantSeverity(t *testing.T, fs []Finding, s Severity) {
	t.Helper()
	if fs[0].Severity != s {
		t.Errorf("severity %s, want %s", fs[0].Severity, s)
	}
}

func wantText(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%q does not contain %q", got, want)
	}
}
