package diagnose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/sandbox"
)

// TestTraceAutoRestartsWithPFS: with nothing wired (no proxy, no tags)
// and performance_schema off, as MariaDB ships, the default trace run
// restarts the server with performance_schema on through apply's
// transaction, measures which endpoint runs each statement per request,
// and restarts it again with performance_schema off: the server's
// variables and option files end as found. Without a restart command it
// says the view is the estimate, and why.
func TestTraceAutoRestartsWithPFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB (restarted twice), nginx and a throwaway MariaDB for the proof")
	}
	s := startTestStackWith(t, sandbox.MariaDBOptions{ServerDefaults: true, ConfigFiles: true})
	ctx := context.Background()
	files := func() string {
		var b strings.Builder
		filepath.WalkDir(s.db.ConfDir(), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				data, _ := os.ReadFile(p)
				sum := sha256.Sum256(data)
				b.WriteString(p + " " + hex.EncodeToString(sum[:]) + "\n")
			}
			return nil
		})
		return b.String()
	}
	var pfs string
	if err := s.db.DB().QueryRow("SELECT @@performance_schema").Scan(&pfs); err != nil || pfs != "0" {
		t.Fatalf("performance_schema at start: %q %v", pfs, err)
	}
	opt := func(restart *PFSRestart) Options {
		return Options{
			DSN:        s.db.DSN(""),
			Bench:      benchrun.Options{Scenario: s.scenario, Load: loadgen.Options{Connections: 4, Duration: 4 * time.Second, KeepAlive: true, Timeout: 10 * time.Second}},
			Collect:    collect.Config{Values: map[string]string{"nginx-conf": s.nginx.ConfigPath(), "no-linux": "true"}},
			AppRestart: s.app.restart, AppRestartName: "the test app's restart",
			Database: "shop", IndexClasses: 1, ProofRuns: 1,
			Requests: RequestOptions{Trace: TraceAuto, TraceDuration: 3 * time.Second, PFSRestart: restart},
			Progress: func(l string) { t.Log(l) },
		}
	}
	var slowPath string
	if err := s.db.DB().QueryRow("SELECT @@slow_query_log_file").Scan(&slowPath); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(slowPath) {
		slowPath = filepath.Join(s.db.DataDir(), slowPath)
	}
	slowSize := func() int64 {
		fi, err := os.Stat(slowPath)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	t.Run("no restart command: the estimate, said so", func(t *testing.T) {
		before := slowSize()
		res, err := Run(ctx, opt(nil))
		if err != nil {
			t.Fatal(err)
		}
		// The slow log was off: what the capture added is taken away.
		if tr := res.Capture.Trim; tr == nil || !tr.Trimmed || tr.Added <= 0 || slowSize() != before {
			t.Errorf("slow log %s: %d bytes before, %d after, trim %+v", slowPath, before, slowSize(), tr)
		}
		if p := res.PerRequest; p == nil || p.Mechanism != MechanismEstimate || p.Reason != ReasonNoRestart || res.Requests != nil {
			t.Errorf("per request %+v, requests %v", p, res.Requests != nil)
		}
	})
	t.Run("restarted with performance_schema for the trace run, and back", func(t *testing.T) {
		beforeVars, beforeFiles := globals(t, s.db.DB()), files()
		state := t.TempDir()
		res, err := Run(ctx, opt(&PFSRestart{StateDir: state, Services: apply.Services{DB: s.db.DB(),
			MySQLConf: filepath.Join(s.db.ConfDir(), "99-stacktune.cnf"), MySQLCheck: s.db.CheckConfig, MySQLRestart: s.db.Restart}}))
		if err != nil {
			t.Fatal(err)
		}
		p := res.PerRequest
		if p == nil || p.Mechanism != MechanismPFSRestart || p.Reason != ReasonPFSOff || !p.Restored || p.Restart == "" {
			t.Fatalf("per request %+v", p)
		}
		if res.Requests == nil || !strings.Contains(res.Requests.Source, "performance_schema") {
			t.Fatalf("requests %+v", res.Requests)
		}
		var n1 *nplusone.Pattern
		for i := range res.NPlusOne {
			if strings.Contains(res.NPlusOne[i].Fingerprint, "from users where id = ?") {
				n1 = &res.NPlusOne[i]
			}
		}
		if n1 == nil || n1.Endpoint != "GET /friends" || n1.Source != EndpointMeasured || n1.PerRequest < friendsShown*0.9 || n1.PerRequest > friendsShown*1.1 {
			t.Errorf("N+1 %+v: want GET /friends, %d calls per request (±10%%), measured", n1, friendsShown)
		}
		if err := s.db.DB().QueryRow("SELECT @@performance_schema").Scan(&pfs); err != nil || pfs != "0" {
			t.Errorf("performance_schema after: %q %v", pfs, err)
		}
		sameGlobals(t, beforeVars, globals(t, s.db.DB()))
		if now := files(); now != beforeFiles {
			t.Errorf("the server's option files changed:\nbefore:\n%s\nafter:\n%s", beforeFiles, now)
		}
		// This capture, after a trimmed one, was read whole: the server
		// wrote from the file's end, not from where it had stopped.
		if res.Digest == nil || res.Digest.Overall.Events < 100 || res.Capture.Trim == nil || !res.Capture.Trim.Trimmed {
			t.Errorf("digest %+v, trim %+v", res.Digest.Overall, res.Capture.Trim)
		}
	})
}
