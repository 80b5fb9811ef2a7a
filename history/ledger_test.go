package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMigrateFromVersion1 makes a database as a build of schema version 1
// left it, with a run, and opens it: the run reads back as it was, with
// the ledger's fields empty, and a new run with everything is added beside.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append([]string{createSchemaVersion}, migrations[0]...) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(insertSchemaVersion, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (label, started_ns, target, scenario, score, passed, requests, errors, rps, p50_ns, p90_ns, p99_ns, max_ns, details)
		VALUES ('old', ?, 'http://x/', 'isucon', 1234, 1, 100, 0, 10, 1, 2, 3, 4, '{"a":1}')`, t0.UnixNano()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version-1 file: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow(selectSchemaVersion).Scan(&v); err != nil || v != 2 {
		t.Fatalf("schema version %d (%v), want 2", v, err)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs = %v, %v", runs, err)
	}
	old := runs[0]
	if old.Label != "old" || old.Score != 1234 || old.Command != "" || old.Session != 0 || string(old.Details) != `{"a":1}` {
		t.Errorf("the version-1 run reads back as %+v", old)
	}
	r := Run{Label: "new", Started: t0.Add(time.Minute), Score: 2000, Passed: false, Command: CommandBench, Failure: "3 errors",
		ScenarioHash: "abc", DataReset: "POST /initialize", Versions: map[string]string{"mysql": "MariaDB 10.11"},
		AppCommit: strings.Repeat("a", 40), Duration: 30 * time.Second, Arm: "b",
		Artefacts: []Artefact{{Kind: ArtefactDigest, Data: []byte(`{"classes":[]}`)}}}
	if _, err := s.Add(ctx, &r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != r.Command || got.Failure != r.Failure || got.ScenarioHash != "abc" || got.DataReset != r.DataReset ||
		got.Versions["mysql"] != "MariaDB 10.11" || got.AppCommit != r.AppCommit || got.Duration != r.Duration || got.Arm != "b" {
		t.Errorf("the new run reads back as %+v", got)
	}
}

func TestArtefacts(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	s.Retention = Retention{} // the runs are from 2025
	big := bytes.Repeat([]byte("x"), MaxArtefactBytes+1)
	digest := []byte(`{"target":"http://user:secret@db/","classes":[{"id":"1"}]}`)
	r := Run{Label: "a", Started: t0, Score: 1, Artefacts: []Artefact{
		{Kind: ArtefactDigest, Data: digest},
		{Kind: ArtefactProfile, Data: []byte("main;handler 10\nmain;db 5\n")},
		{Kind: ArtefactSnapshot, Data: big},
	}}
	if _, err := s.Add(ctx, &r); err != nil {
		t.Fatal(err)
	}
	kinds, err := s.ArtefactKinds(ctx, r.ID)
	if err != nil || len(kinds) != 3 {
		t.Fatalf("kinds %v, %v", kinds, err)
	}
	tests := []struct {
		name, kind, want string
		tooLarge         bool
	}{
		{name: "JSON, credentials stripped", kind: ArtefactDigest, want: `{"classes":[{"id":"1"}],"target":"http://db/"}`},
		{name: "folded stacks as they are", kind: ArtefactProfile, want: "main;handler 10\nmain;db 5\n"},
		{name: "over the cap: not kept", kind: ArtefactSnapshot, tooLarge: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := s.Artefact(ctx, r.ID, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if a.TooLarge != tc.tooLarge || string(a.Data) != tc.want {
				t.Errorf("got %q (too large %v), want %q (%v)", a.Data, a.TooLarge, tc.want, tc.tooLarge)
			}
		})
	}
	if _, err := s.Artefact(ctx, r.ID, ArtefactHTTP); !errors.Is(err, ErrNoArtefact) {
		t.Errorf("a missing artefact: %v", err)
	}
	var stored int
	s.db.QueryRow(`SELECT SUM(LENGTH(data)) FROM artefacts`).Scan(&stored)
	if stored > 1000 {
		t.Errorf("%d bytes stored for the small artefacts", stored)
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		ret  Retention
		kept []string // labels of the runs whose artefacts are kept
	}{
		{name: "by count", ret: Retention{MaxRuns: 2}, kept: []string{"recent", "now"}},
		{name: "by age", ret: Retention{MaxAge: 48 * time.Hour}, kept: []string{"yesterday", "recent", "now"}},
		{name: "both", ret: Retention{MaxAge: 48 * time.Hour, MaxRuns: 1}, kept: []string{"now"}},
		{name: "none", ret: Retention{}, kept: []string{"old", "yesterday", "recent", "now"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTemp(t)
			s.Retention = Retention{}
			now := time.Now()
			for _, r := range []struct {
				label string
				at    time.Time
			}{{"old", now.Add(-30 * 24 * time.Hour)}, {"yesterday", now.Add(-24 * time.Hour)}, {"recent", now.Add(-time.Hour)}, {"now", now}} {
				run := Run{Label: r.label, Started: r.at, Artefacts: []Artefact{{Kind: ArtefactHTTP, Data: []byte("{}")}}}
				if _, err := s.Add(ctx, &run); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Prune(ctx, tc.ret); err != nil {
				t.Fatal(err)
			}
			rows, err := s.db.Query(`SELECT r.label FROM artefacts a JOIN runs r ON r.id = a.run_id ORDER BY r.id`)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for rows.Next() {
				var l string
				rows.Scan(&l)
				kept = append(kept, l)
			}
			rows.Close()
			if strings.Join(kept, ",") != strings.Join(tc.kept, ",") {
				t.Errorf("kept %v, want %v", kept, tc.kept)
			}
			if runs, _ := s.Runs(ctx, Filter{}); len(runs) != 4 {
				t.Errorf("%d runs left, want every run", len(runs))
			}
		})
	}
}

func TestSessionsAndList(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.StartSession(ctx, CommandTune, "tune <b>")
	if err != nil {
		t.Fatal(err)
	}
	add := func(r Run) {
		t.Helper()
		if _, err := s.Add(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	add(Run{Label: "baseline", Started: t0, Command: CommandBench, AppCommit: "abc123", ScenarioHash: "feed01", Scenario: "isucon"})
	add(Run{Label: "step A", Started: t0.Add(time.Minute), Command: CommandTune, Session: id, Arm: "a", ScenarioHash: "feed01"})
	add(Run{Label: "step B", Started: t0.Add(2 * time.Minute), Command: CommandTune, Session: id, Arm: "b", ScenarioHash: "feed01"})
	add(Run{Label: "diag", Started: t0.Add(3 * time.Minute), Command: CommandDiagnose, AppCommit: "def456"})
	if err := s.SetNoise(ctx, id, 0.03); err != nil {
		t.Fatal(err)
	}
	d := Decision{LabelA: "step A", LabelB: "step B", Outcome: "better", Ratio: 1.2, Low: 1.1, High: 1.3, Runs: 6, Kept: true}
	if err := s.AddDecision(ctx, id, d); err != nil {
		t.Fatal(err)
	}
	ss, err := s.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ss.Status != SessionRunning || !ss.Ended.IsZero() || ss.Noise != 0.03 || len(ss.Decisions) != 1 || ss.Decisions[0] != d {
		t.Errorf("session %+v", ss)
	}
	if err := s.EndSession(ctx, id, SessionDone); err != nil {
		t.Fatal(err)
	}
	if ss, _ = s.GetSession(ctx, id); ss.Status != SessionDone || ss.Ended.IsZero() {
		t.Errorf("ended session %+v", ss)
	}
	if _, err := s.GetSession(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing session: %v", err)
	}
	tests := []struct {
		name string
		f    ListFilter
		want string
	}{
		{name: "all, newest first", f: ListFilter{}, want: "diag,step B,step A,baseline"},
		{name: "by label", f: ListFilter{Label: "step A"}, want: "step A"},
		{name: "by commit prefix", f: ListFilter{AppCommit: "abc"}, want: "baseline"},
		{name: "a pattern character is a literal", f: ListFilter{AppCommit: "%"}, want: ""},
		{name: "by scenario name", f: ListFilter{Scenario: "isucon"}, want: "baseline"},
		{name: "by scenario hash", f: ListFilter{Scenario: "feed"}, want: "step B,step A,baseline"},
		{name: "by session", f: ListFilter{Session: id}, want: "step B,step A"},
		{name: "after an ID, oldest first", f: ListFilter{AfterID: 1}, want: "step A,step B,diag"},
		{name: "before an ID, with a limit", f: ListFilter{BeforeID: 4, Limit: 2}, want: "step B,step A"},
		{name: "by command", f: ListFilter{Command: CommandDiagnose}, want: "diag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.Label)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
	// The score transitions leave diagnose's runs out.
	runs, _ := s.Runs(ctx, Filter{})
	if len(runs) != 3 {
		t.Errorf("Runs has %d runs, want 3 (no diagnose)", len(runs))
	}
	if runs, _ := s.Runs(ctx, Filter{Commands: []string{CommandDiagnose}}); len(runs) != 1 {
		t.Errorf("Runs of diagnose: %d", len(runs))
	}
}

func TestGitCommit(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if got := GitCommit("."); got != want {
		t.Errorf("GitCommit(.) = %q, want %q (git rev-parse HEAD)", got, want)
	}
	if got := GitCommit(t.TempDir()); got != "" {
		t.Errorf("GitCommit of a temporary directory = %q", got)
	}
}

func TestGitCommitLayouts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "one")
	head := git("rev-parse", "HEAD")
	if got := readGitHead(filepath.Join(dir, ".git")); got != head {
		t.Errorf("loose ref: %q, want %q", got, head)
	}
	git("pack-refs", "--all")
	if got := readGitHead(filepath.Join(dir, ".git")); got != head {
		t.Errorf("packed ref: %q, want %q", got, head)
	}
	git("checkout", "-q", "--detach")
	if got := GitCommit(filepath.Join(dir)); got != head {
		t.Errorf("detached: %q, want %q", got, head)
	}
}
