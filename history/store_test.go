package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2025, 11, 1, 10, 0, 0, 0, time.UTC)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "history.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}
	want := Run{
		Label: "add index on relations", Started: t0.Add(123456789), Target: "http://127.0.0.1:8080/",
		Scenario: "isucon", Score: 4321.5, Passed: true, Requests: 10000, Errors: 3, RPS: 987.25,
		P50: 12 * time.Millisecond, P90: 40 * time.Millisecond, P99: 95 * time.Millisecond, Max: time.Second,
		Details: json.RawMessage(`{"b": 1, "a": [1.50, "x"]}`),
	}
	r := want
	id, err := s.Add(ctx, &r)
	if err != nil {
		t.Fatal(err)
	}
	if id <= 0 || r.ID != id {
		t.Fatalf("Add returned id %d, r.ID %d", id, r.ID)
	}
	want.ID = id
	got, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d runs, want 1", len(got))
	}
	g := got[0]
	if !g.Started.Equal(want.Started) {
		t.Errorf("Started = %v, want %v", g.Started, want.Started)
	}
	// Details without credentials are kept byte for byte.
	if string(g.Details) != string(want.Details) {
		t.Errorf("Details = %s, want %s", g.Details, want.Details)
	}
	g.Started, g.Details, want.Started, want.Details = time.Time{}, nil, time.Time{}, nil
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("run read back:\n got %+v\nwant %+v", g, want)
	}
}

func TestAddDefaultsAndRejects(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	before := time.Now()
	r := Run{Label: "no time"}
	if _, err := s.Add(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if r.Started.Before(before) || r.Started.After(time.Now()) {
		t.Errorf("zero Started became %v", r.Started)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Details != nil {
		t.Errorf("empty details should read back as nil: %+v", runs)
	}

	for _, tc := range []struct {
		name string
		run  Run
	}{
		{"NaN score", Run{Score: math.NaN()}},
		{"infinite rps", Run{RPS: math.Inf(1)}},
		{"invalid details", Run{Details: json.RawMessage(`{"a":`)}},
		{"trailing garbage in details", Run{Details: json.RawMessage(`{} x`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Add(ctx, &tc.run); err == nil {
				t.Error("Add accepted it")
			}
		})
	}
}

func TestRunsFilter(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	// Added out of time order: Runs sorts by start time.
	seed := []Run{
		{Label: "b", Started: t0.Add(2 * time.Hour), Target: "http://a/", Score: 3},
		{Label: "a", Started: t0, Target: "http://a/", Score: 1},
		{Label: "a", Started: t0.Add(time.Hour), Target: "http://user:pw@a/", Score: 2},
		{Label: "c", Started: t0.Add(3 * time.Hour), Target: "http://a/", Scenario: "login", Score: 4},
		{Label: "c", Started: t0.Add(4 * time.Hour), Target: "http://b/", Scenario: "login", Score: 5},
	}
	for i := range seed {
		if _, err := s.Add(ctx, &seed[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []float64 // scores, in order
	}{
		{"all, by start time", Filter{}, []float64{1, 2, 3, 4, 5}},
		{"target", Filter{Target: "http://a/"}, []float64{1, 2, 3, 4}},
		{"target with credentials matches the stripped one", Filter{Target: "http://x:y@a/"}, []float64{1, 2, 3, 4}},
		{"scenario", Filter{Scenario: "login"}, []float64{4, 5}},
		{"target and scenario", Filter{Target: "http://a/", Scenario: "login"}, []float64{4}},
		{"since is inclusive", Filter{Since: t0.Add(time.Hour)}, []float64{2, 3, 4, 5}},
		{"labels", Filter{Labels: []string{"a", "c"}}, []float64{1, 2, 4, 5}},
		{"one label", Filter{Labels: []string{"b"}}, []float64{3}},
		{"limit keeps the latest, oldest first", Filter{Limit: 2}, []float64{4, 5}},
		{"limit with a filter", Filter{Target: "http://a/", Limit: 3}, []float64{2, 3, 4}},
		{"limit above the count", Filter{Limit: 10}, []float64{1, 2, 3, 4, 5}},
		{"nothing matches", Filter{Scenario: "none"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, r := range runs {
				got = append(got, r.Score)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOpenTwiceMigratesOnce(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := Run{Label: "kept", Started: t0, Score: 1}
	if _, err := s.Add(ctx, &r); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // reopen while the first is open, and again
		s2, err := Open(path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		runs, err := s2.Runs(ctx, Filter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("reopen %d: runs %v, %v", i, runs, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var versions int
	var max int
	if err := s.db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&versions, &max); err != nil {
		t.Fatal(err)
	}
	if versions != SchemaVersion() || max != SchemaVersion() {
		t.Errorf("schema_version has %d rows, max %d; want %d", versions, max, SchemaVersion())
	}
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var timeout int
	if err := s.db.QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if time.Duration(timeout)*time.Millisecond != busyTimeout {
		t.Errorf("busy_timeout = %dms, want %v", timeout, busyTimeout)
	}
}

func TestOpenNewerSchema(t *testing.T) {
	s, path := openTemp(t)
	if _, err := s.db.Exec(insertSchemaVersion, SchemaVersion()+1, 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Open = %v, want ErrNewerSchema", err)
	}
}

func TestOpenNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path); err == nil {
		s.Close()
		t.Error("Open accepted a file that is not a database")
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	ctx := context.Background()
	_, path := openTemp(t)
	const writers, each = 2, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate Stores, as two commands of one process would have.
			s, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := 0; i < each; i++ {
				r := Run{Label: fmt.Sprintf("w%d", w), Started: t0.Add(time.Duration(i) * time.Second), Score: float64(i)}
				if _, err := s.Add(ctx, &r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkAppended(t, path, writers, each)
}

// TestConcurrentProcesses runs two copies of the test binary that append to
// one new database at once, both also creating and migrating it.
func TestConcurrentProcesses(t *testing.T) {
	if os.Getenv("STACKTUNE_HISTORY_CHILD") != "" {
		t.Skip("child")
	}
	const writers, each = 2, 200
	dir := t.TempDir()
	path, start := filepath.Join(dir, "shared.db"), filepath.Join(dir, "start")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppend$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STACKTUNE_HISTORY_CHILD="+path, "STACKTUNE_HISTORY_WRITER="+strconv.Itoa(w),
			"STACKTUNE_HISTORY_EACH="+strconv.Itoa(each), "STACKTUNE_HISTORY_START="+start)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	// Both are started: let them open the new database and write at once.
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	if t.Failed() {
		return
	}
	checkAppended(t, path, writers, each)
}

// TestHelperAppend is the child of TestConcurrentProcesses.
func TestHelperAppend(t *testing.T) {
	path := os.Getenv("STACKTUNE_HISTORY_CHILD")
	if path == "" {
		t.Skip("only run by TestConcurrentProcesses")
	}
	w := os.Getenv("STACKTUNE_HISTORY_WRITER")
	each, _ := strconv.Atoi(os.Getenv("STACKTUNE_HISTORY_EACH"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(os.Getenv("STACKTUNE_HISTORY_START")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never told to start")
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < each; i++ {
		r := Run{Label: "w" + w, Started: t0.Add(time.Duration(i) * time.Second), Score: float64(i),
			Details: json.RawMessage(`{"writer":` + w + `}`)}
		if _, err := s.Add(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAppended checks that every writer's runs all arrived, with
// distinct IDs.
func checkAppended(t *testing.T, path string, writers, each int) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != writers*each {
		t.Fatalf("%d runs, want %d", len(runs), writers*each)
	}
	ids := map[int64]bool{}
	perLabel := map[string][]float64{}
	for _, r := range runs {
		ids[r.ID] = true
		perLabel[r.Label] = append(perLabel[r.Label], r.Score)
	}
	if len(ids) != len(runs) {
		t.Errorf("%d distinct IDs for %d runs", len(ids), len(runs))
	}
	for w := 0; w < writers; w++ {
		got := perLabel[fmt.Sprintf("w%d", w)]
		if len(got) != each {
			t.Errorf("writer %d: %d runs, want %d", w, len(got), each)
		}
		for i, v := range got {
			if v != float64(i) {
				t.Errorf("writer %d: run %d has score %v", w, i, v)
				break
			}
		}
	}
	var versions int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != SchemaVersion() {
		t.Errorf("schema_version has %d rows after concurrent opens, want %d", versions, SchemaVersion())
	}
}

func TestStoredCredentialsStripped(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := Run{
		Label: "creds", Started: t0, Target: "https://admin:s3cret@example.test:8443/login?next=/x@y",
		Details: json.RawMessage(`{"target":"https://admin:s3cret@example.test:8443/","steps":[{"url":"http://tok@h/"}],"n":1.50}`),
	}
	if _, err := s.Add(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if r.Target != "https://admin:s3cret@example.test:8443/login?next=/x@y" {
		t.Errorf("Add changed the caller's Target to %q", r.Target)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runs[0].Target, "https://example.test:8443/login?next=/x@y"; got != want {
		t.Errorf("stored target %q, want %q", got, want)
	}
	if got, want := string(runs[0].Details), `{"n":1.50,"steps":[{"url":"http://h/"}],"target":"https://example.test:8443/"}`; got != want {
		t.Errorf("stored details %s, want %s", got, want)
	}
	s.Close()
	// Nothing secret anywhere in the files (database, WAL).
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"s3cret", "tok@"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains %q", filepath.Base(f), secret)
			}
		}
	}
}

func TestStripCredentials(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"user and password", "http://user:pass@example.com/path", "http://example.com/path"},
		{"user only", "https://token@example.com", "https://example.com"},
		{"with port", "http://u:p@127.0.0.1:8080/", "http://127.0.0.1:8080/"},
		{"no credentials", "http://example.com/a?b=c", "http://example.com/a?b=c"},
		{"@ in the query stays", "http://example.com/?mail=a@b.c", "http://example.com/?mail=a@b.c"},
		{"@ in the path stays", "http://example.com/users/@me", "http://example.com/users/@me"},
		{"@ after a fragment stays", "http://example.com#x@y", "http://example.com#x@y"},
		{"unescaped @ in the password", "http://u:p@ss@example.com/", "http://example.com/"},
		{"escaped password", "http://u:p%40ss@example.com/", "http://example.com/"},
		{"IPv6 host", "http://u:p@[::1]:8080/", "http://[::1]:8080/"},
		{"other scheme", "mysql://root:pw@db:3306/app", "mysql://db:3306/app"},
		{"several URLs in text", "from http://a:b@x/ to https://c@y/", "from http://x/ to https://y/"},
		{"not a URL", "user@example.com", "user@example.com"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripCredentials(tc.in); got != tc.want {
				t.Errorf("StripCredentials(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestScrubJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"untouched without @", `{ "b" : 1,"a":2 }`, `{ "b" : 1,"a":2 }`},
		{"untouched with a harmless @", `{"mail":"a@b.c"}`, `{"mail":"a@b.c"}`},
		{"nested string", `{"x":[{"u":"http://u:p@h/"}]}`, `{"x":[{"u":"http://h/"}]}`},
		{"escaped @", `{"u":"http://u:p\u0040h/"}`, `{"u":"http://h/"}`},
		{"key", `{"http://u:p@h/":1}`, `{"http://h/":1}`},
		{"top-level string", `"http://u:p@h/"`, `"http://h/"`},
		{"numbers keep their text", `{"u":"http://u@h/","n":1.50,"big":12345678901234567890}`, `{"big":12345678901234567890,"n":1.50,"u":"http://h/"}`},
		{"no HTML escaping", `{"u":"http://u@h/?a=1&b=<2>"}`, `{"u":"http://h/?a=1&b=<2>"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scrubJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("scrubJSON(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	for _, tc := range []struct {
		name    string
		env     map[string]string
		home    func() (string, error)
		want    string
		wantErr bool
	}{
		{"STACKTUNE_HISTORY wins", map[string]string{"STACKTUNE_HISTORY": "/x/h.db", "XDG_DATA_HOME": "/xdg"}, home, "/x/h.db", false},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/xdg"}, home, "/xdg/stacktune/history.db", false},
		{"relative XDG_DATA_HOME is ignored", map[string]string{"XDG_DATA_HOME": "rel"}, home, "/home/u/.local/share/stacktune/history.db", false},
		{"home", nil, home, "/home/u/.local/share/stacktune/history.db", false},
		{"no home", nil, noHome, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := defaultPath(func(k string) string { return tc.env[k] }, tc.home)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("defaultPath = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}

	// The real one creates the directory.
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("STACKTUNE_HISTORY", "")
	t.Setenv("XDG_DATA_HOME", dir)
	p, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "stacktune", "history.db"); p != want {
		t.Errorf("DefaultPath = %q, want %q", p, want)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		t.Errorf("directory not created: %v", err)
	}
}
