package apply

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// faultWorld is one transaction over real servers: a MariaDB that reads
// its files from conf.d (dynamic variables, a restart-only one, an index
// on a second application's schema), a real nginx (a directive whose
// effect shows in every response, and one in an upstream), a real
// PHP-FPM pool (its worker count, and a setting it leaves to the
// default) and a sysctl.d file over a fake /proc/sys.
type faultWorld struct {
	srv        *sandbox.MariaDB
	nginx      *sandbox.Nginx
	php        *sandbox.PHPFPM
	proc       string
	sysctlConf string
}

func newFaultWorld(t *testing.T) *faultWorld {
	t.Helper()
	w := &faultWorld{srv: sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ConfigFiles: true})}
	// Not the reference app: a shop's orders.
	for _, q := range []string{"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (order_no BIGINT PRIMARY KEY, customer_ref VARCHAR(40), placed DATETIME, state ENUM('new','paid','sent'))",
		"INSERT INTO shop.orders VALUES (1, 'c-1', NOW(), 'new'), (2, 'c-2', NOW(), 'paid')"} {
		if _, err := w.srv.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w.nginx = sandboxtest.NewNginx(t, sandbox.NginxOptions{HTTPConfig: `    upstream shop {
        server 127.0.0.1:9;
    }
    server {
        listen 127.0.0.1:{{PORT}};
        root {{DIR}}/html;
        location /shop/ {
            proxy_pass http://shop;
        }
    }
`})
	w.php = sandboxtest.NewPHPFPM(t, sandbox.PHPFPMOptions{Pool: map[string]string{"pm": "static", "pm.max_children": "3"}})
	w.proc = t.TempDir()
	for k, v := range map[string]string{"net/core/somaxconn": "128\n", "net/ipv4/tcp_max_tw_buckets": "8192\n"} {
		p := filepath.Join(w.proc, k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.sysctlConf = filepath.Join(t.TempDir(), "sysctl.d", "99-stacktune.conf")
	return w
}

// targets are fresh targets of the transaction (as each apply or
// rollback builds them from its change set or journal).
func (w *faultWorld) targets(t *testing.T) []Target {
	t.Helper()
	m := mysqlTarget(t, w.srv, nil, vars("max_connections=250", "tmp_table_size=32M", "slow_query_log=ON", "innodb_log_buffer_size=32M"))
	nx, err := NewNginx(w.nginx.ConfigPath(), nginxChanges("nginx http {}|server_tokens|off|on", "nginx upstream shop {}|keepalive|16"))
	if err != nil {
		t.Fatal(err)
	}
	nx.Test, nx.Reload = w.nginx.Test, w.nginx.Reload
	ix, err := NewIndexes(w.srv.DB(), "", []changeset.Change{{Kind: changeset.Index, Target: "shop.orders", Name: "ix_customer_placed",
		From: changeset.Absent, To: "(`customer_ref`, `placed`)"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewSysctl(w.sysctlConf, []changeset.Change{
		{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "net.core.somaxconn", From: "128", To: "4096"},
		{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "net.ipv4.tcp_max_tw_buckets", From: "8192", To: "262144"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.ProcRoot = w.proc
	php, err := NewPHPFPM(w.php.ConfigPath(), phpfpmChanges("www|pm.max_children|3|2", "www|pm.max_requests|0|500"))
	if err != nil {
		t.Fatal(err)
	}
	php.Test, php.Reload = CommandCheck(w.php.TestCommand()...), w.php.Reload
	return []Target{m, nx, php, ix, sc}
}

// state is everything the transaction can touch: each file's checksum
// (the MariaDB conf.d, nginx.conf, the PHP-FPM pool, the sysctl.d file,
// the fake /proc/sys), SHOW GLOBAL VARIABLES, the shop's indexes, the
// Server header nginx answers with and the workers PHP-FPM runs.
func (w *faultWorld) state(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{w.srv.ConfDir(), filepath.Dir(w.sysctlConf), w.proc, filepath.Dir(w.php.PoolPath())} {
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				b, rerr := os.ReadFile(p)
				if rerr != nil {
					t.Fatal(rerr)
				}
				s := sha256.Sum256(b)
				out["file "+p] = hex.EncodeToString(s[:])
			}
			return nil
		})
	}
	b, err := os.ReadFile(w.nginx.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	out["file "+w.nginx.ConfigPath()] = hex.EncodeToString(s[:])
	for k, v := range allVariables(t, w.srv) {
		out["variable "+k] = v
	}
	rows, err := w.srv.DB().Query("SELECT INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'shop' GROUP BY INDEX_NAME")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, cols string
		if err := rows.Scan(&name, &cols); err != nil {
			t.Fatal(err)
		}
		out["index shop.orders."+name] = cols
	}
	resp, err := http.Get(w.nginx.URL())
	if err != nil {
		out["nginx"] = err.Error()
	} else {
		resp.Body.Close()
		out["nginx Server header"] = resp.Header.Get("Server")
	}
	pm, n := phpfpmWorkers(t, w.php)
	out["php-fpm workers"] = fmt.Sprintf("%s %d", pm, n)
	return out
}

// diff lists what differs between two states.
func stateDiff(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (none) -> %q", k, v))
		}
	}
	slices.Sort(out)
	return out
}

// expectState waits (nginx's old workers answer for a moment after a
// reload) until the world is want, and fails with what differs.
func (w *faultWorld) expectState(t *testing.T, what string, want map[string]string) {
	t.Helper()
	var d []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if d = stateDiff(want, w.state(t)); len(d) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(d) > 0 {
		t.Errorf("%s: the world is not where it started:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// recorder returns a fault that fails at the points in fail and records
// every point it passes.
func recorder(points *[]string, fail ...string) fault {
	return func(p string) error {
		*points = append(*points, p)
		if slices.Contains(fail, p) {
			return errors.New("injected at " + p)
		}
		return nil
	}
}

// TestFaultAtEveryStep makes the transaction fail at each of its steps
// in turn, and then each step of the rollback that follows a failure: in
// every case the files (by checksum), SHOW GLOBAL VARIABLES, the indexes,
// the running nginx and the kernel values end equal to where they
// started, at once or after the Recover that the next apply or rollback
// runs.
func TestFaultAtEveryStep(t *testing.T) {
	w := newFaultWorld(t)
	ctx := context.Background()
	start := w.state(t)
	opt := func() Options { return Options{StateDir: t.TempDir(), HostWide: true} }

	// A clean run passes every point; its rollback brings all back.
	var points []string
	o := opt()
	if _, err := run(ctx, w.targets(t), o, recorder(&points)); err != nil {
		t.Fatal(err)
	}
	applied := w.state(t)
	for _, k := range []string{"variable max_connections", "variable innodb_log_buffer_size", "index shop.orders.ix_customer_placed", "nginx Server header", "file " + w.sysctlConf,
		"php-fpm workers", "file " + w.php.PoolPath()} {
		if applied[k] == start[k] {
			t.Errorf("the clean run did not change %s (%q)", k, applied[k])
		}
	}
	if _, err := Rollback(ctx, w.targets(t), o); err != nil {
		t.Fatal(err)
	}
	w.expectState(t, "after the clean run's rollback", start)
	if len(points) < 25 {
		t.Fatalf("only %d points: %v", len(points), points)
	}

	for _, p := range points {
		t.Run("fail at "+p, func(t *testing.T) {
			o := opt()
			res, err := run(ctx, w.targets(t), o, recorder(new([]string), p))
			if err == nil {
				t.Fatal("no error")
			}
			var rb *RollbackError
			if errors.As(err, &rb) {
				t.Fatalf("the rollback left things behind: %v", err)
			}
			w.expectState(t, "fail at "+p, start)
			// Before its journal is saved a transaction leaves none.
			hist, _ := History(o.StateDir)
			if len(hist) > 1 || len(hist) == 1 && (res.ID == "" || hist[0].State != stateRolledBack) {
				t.Errorf("journal: %+v", hist)
			}
		})
	}

	// The rollback after a failure of the last step passes these points.
	var undoPoints []string
	if _, err := run(ctx, w.targets(t), opt(), recorder(&undoPoints, "journal applied")); err == nil {
		t.Fatal("no error")
	}
	undoPoints = slices.DeleteFunc(undoPoints, func(p string) bool { return !strings.HasPrefix(p, "undo ") })
	w.expectState(t, "after a failed last step", start)
	if len(undoPoints) < 10 {
		t.Fatalf("only %d undo points: %v", len(undoPoints), undoPoints)
	}
	for _, p := range undoPoints {
		t.Run("fail at journal applied, then at "+p, func(t *testing.T) {
			o := opt()
			_, err := run(ctx, w.targets(t), o, recorder(new([]string), "journal applied", p))
			var rb *RollbackError
			if !errors.As(err, &rb) || len(rb.Leftovers) == 0 {
				t.Fatalf("err = %v", err)
			}
			for _, l := range rb.Leftovers {
				if l.Fix == "" {
					t.Errorf("leftover without a way to fix it: %+v", l)
				}
			}
			// The next run (here Recover; apply and rollback start with
			// it) finishes the rollback.
			if _, err := Recover(ctx, w.targets(t), o); err != nil {
				t.Fatal(err)
			}
			w.expectState(t, "recovered", start)
			if hist, _ := History(o.StateDir); len(hist) != 1 || hist[0].State != stateRolledBack {
				t.Errorf("journal: %+v", hist)
			}
		})
	}

	// Someone edits nginx.conf between the backup and the write: the
	// transaction stops and rolls back, and keeps that edit.
	t.Run("a file edited between backup and write", func(t *testing.T) {
		o := opt()
		const edit = "\n# edited by hand during the apply\n"
		old, _ := os.ReadFile(w.nginx.ConfigPath())
		_, err := run(ctx, w.targets(t), o, func(p string) error {
			if p == "write "+w.nginx.ConfigPath() {
				return os.WriteFile(w.nginx.ConfigPath(), append(slices.Clone(old), edit...), 0o644)
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("err = %v", err)
		}
		if b, _ := os.ReadFile(w.nginx.ConfigPath()); string(b) != string(old)+edit {
			t.Errorf("the hand edit was lost:\n%s", b)
		}
		if err := os.WriteFile(w.nginx.ConfigPath(), old, 0o644); err != nil {
			t.Fatal(err)
		}
		w.expectState(t, "edited during the apply", start)
	})
}

// killSetup is what a child process needs to reach the fault world's
// servers on its own, as a separate stacktune apply would.
type killSetup struct {
	DSN, ConfDir                                  string
	NginxBin, NginxPrefix, NginxConf, NginxErrLog string
	PHPFPMConf                                    string
	PHPFPMTest                                    []string
	PHPFPMPID                                     int
	Proc, SysctlConf, StateDir, KillAt            string
}

func (w *faultWorld) killSetup(state string) killSetup {
	return killSetup{DSN: w.srv.DSN(""), ConfDir: w.srv.ConfDir(),
		NginxBin: w.nginx.Binary(), NginxPrefix: w.nginx.Prefix(), NginxConf: w.nginx.ConfigPath(), NginxErrLog: w.nginx.ErrorLogPath(),
		PHPFPMConf: w.php.ConfigPath(), PHPFPMTest: w.php.TestCommand(), PHPFPMPID: w.php.PID(),
		Proc: w.proc, SysctlConf: w.sysctlConf, StateDir: state}
}

// services reaches the servers as the command line does (PHP-FPM is
// reloaded as systemd does it, with SIGUSR2 to the master, which returns
// at once: the target's read-back waits for the new workers).
func (k killSetup) services(db DB) Services {
	nginx := []string{k.NginxBin, "-p", k.NginxPrefix, "-c", k.NginxConf, "-e", k.NginxErrLog}
	return Services{DB: db, MySQLConf: filepath.Join(k.ConfDir, "99-stacktune.cnf"),
		Nginx: true, NginxConf: k.NginxConf, NginxTest: CommandCheck(append(nginx, "-t")...), NginxReload: CommandCheck(append(nginx, "-s", "reload")...),
		PHPFPMConf: k.PHPFPMConf, PHPFPMTest: CommandCheck(k.PHPFPMTest...), PHPFPMReload: CommandCheck("kill", "-USR2", strconv.Itoa(k.PHPFPMPID)),
		SysctlConf: k.SysctlConf, ProcRoot: k.Proc, HostWide: true}
}

// killSet is the change set the child applies: dynamic variables only
// (the child cannot restart the parent's server), nginx, PHP-FPM, an
// index and sysctls.
func killSet() *changeset.Set {
	s := &changeset.Set{Format: changeset.FormatVersion, Source: "test", Changes: vars("max_connections=250", "tmp_table_size=32M", "slow_query_log=ON")}
	s.Changes = append(s.Changes, nginxChanges("nginx http {}|server_tokens|off|on", "nginx upstream shop {}|keepalive|16")...)
	s.Changes = append(s.Changes, phpfpmChanges("www|pm.max_children|3|2", "www|pm.max_requests|0|500")...)
	s.Changes = append(s.Changes,
		changeset.Change{Kind: changeset.Index, Target: "shop.orders", Name: "ix_customer_placed", From: changeset.Absent, To: "(`customer_ref`, `placed`)"},
		changeset.Change{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "net.core.somaxconn", From: "128", To: "4096"})
	return s
}

// TestKilledAtEveryStep kills a separate apply process (SIGKILL: no
// deferred cleanup runs) at each step of its transaction; the parent then
// rebuilds the targets from the journal, as stacktune rollback does, and
// recovers: every file, variable, index, nginx and kernel value is back.
func TestKilledAtEveryStep(t *testing.T) {
	if env := os.Getenv("STACKTUNE_KILL_SETUP"); env != "" {
		var k killSetup
		if err := json.Unmarshal([]byte(env), &k); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", k.DSN)
		if err != nil {
			t.Fatal(err)
		}
		ts, _, err := FromChangeSet(killSet(), k.services(db))
		if err != nil {
			t.Fatal(err)
		}
		_, err = run(context.Background(), ts, Options{StateDir: k.StateDir, HostWide: true}, func(p string) error {
			if p == k.KillAt {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return nil
		})
		t.Fatalf("not killed at %q: %v", k.KillAt, err)
	}
	w := newFaultWorld(t)
	ctx := context.Background()
	start := w.state(t)

	var points []string
	k := w.killSetup(t.TempDir())
	ts, _, err := FromChangeSet(killSet(), k.services(w.srv.DB()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, ts, Options{StateDir: k.StateDir, HostWide: true}, recorder(&points)); err != nil {
		t.Fatal(err)
	}
	back, err := RollbackTargets(k.StateDir, k.services(w.srv.DB()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(ctx, back, Options{StateDir: k.StateDir, HostWide: true}); err != nil {
		t.Fatal(err)
	}
	w.expectState(t, "after the recording run's rollback", start)

	for _, p := range points {
		t.Run("killed at "+p, func(t *testing.T) {
			k := w.killSetup(t.TempDir())
			k.KillAt = p
			env, _ := json.Marshal(k)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledAtEveryStep$")
			cmd.Env = append(os.Environ(), "STACKTUNE_KILL_SETUP="+string(env))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v\n%s", err, out)
			}
			back, err := RollbackTargets(k.StateDir, k.services(w.srv.DB()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Recover(ctx, back, Options{StateDir: k.StateDir, HostWide: true}); err != nil {
				t.Fatal(err)
			}
			w.expectState(t, "killed at "+p, start)
			if hist, _ := History(k.StateDir); len(hist) > 1 || len(hist) == 1 && hist[0].State != stateRolledBack {
				t.Errorf("journal: %+v", hist)
			}
		})
	}
}
