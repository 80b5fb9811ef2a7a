package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestAuditCLI audits a deliberately mistuned throwaway MariaDB, live and
// from a saved snapshot, and checks the JSON contract and the flags.
func TestAuditCLI(t *testing.T) {
	db := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{
		"innodb_buffer_pool_size": "8M", "tmp_table_size": "16K", "max_heap_table_size": "16K",
	}})
	type auditJSON struct {
		Findings []struct {
			ID       string `json:"id"`
			Severity string `json:"severity"`
			Layer    string `json:"layer"`
			Evidence []struct {
				What, Value, Source string
			} `json:"evidence"`
			Change *struct {
				Kind, Name, Value string
			} `json:"change"`
			Risk   map[string]any `json:"risk"`
			Source string         `json:"source"`
		} `json:"findings"`
		CollectorErrors []map[string]any `json:"collector_errors"`
	}
	check := func(t *testing.T, out string) auditJSON {
		t.Helper()
		var r auditJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v in %s", err, out)
		}
		mysql := 0
		for _, f := range r.Findings {
			if f.ID == "" || f.Severity == "" || f.Layer == "" || f.Source == "" || len(f.Evidence) == 0 {
				t.Errorf("incomplete finding %+v", f)
			}
			if f.Layer == "mysql" {
				mysql++
			}
		}
		if mysql == 0 {
			t.Errorf("no MySQL finding for an 8 MiB buffer pool and a 16 KiB tmp_table_size: %+v", r.Findings)
		}
		return r
	}
	out, _, err := run(t, "", "audit", "--dsn", db.DSN(""), "--interval", "300ms", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, out)

	snap := filepath.Join(t.TempDir(), "snap.json")
	if _, _, err := run(t, "", "collect", "--dsn", db.DSN(""), "--interval", "300ms", "-o", snap); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "", "audit", "--fix", "innodb_buffer_pool_size=8388608", "--format", "json", snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range check(t, out).Findings {
		if f.Change != nil && f.Change.Name == "innodb_buffer_pool_size" {
			t.Errorf("a fixed setting was changed: %+v", f)
		}
	}
	text, _, err := run(t, "", "audit", snap)
	if err != nil || !strings.Contains(text, "findings for") || !strings.Contains(text, "evidence:") {
		t.Errorf("text audit: %v\n%s", err, text)
	}
	// performance_schema is off on this server: --emit writes it on only
	// when asked.
	for _, asked := range []bool{false, true} {
		emit := filepath.Join(t.TempDir(), "emit")
		args := []string{"audit", "--emit", emit, snap}
		if asked {
			args = append(args, "--observability")
		}
		if _, errOut, err := run(t, "", args...); err != nil || !strings.Contains(errOut, "wrote") && asked {
			t.Errorf("emit %v: %v %s", args, err, errOut)
		}
		cnf, _ := os.ReadFile(filepath.Join(emit, "mysql", "99-stacktune.cnf"))
		if strings.Contains(string(cnf), "performance_schema = ON") != asked {
			t.Errorf("--observability %v, my.cnf drop-in:\n%s", asked, cnf)
		}
		if asked && (!strings.Contains(string(cnf), "[mysqld]") || !strings.Contains(string(cnf), "# ")) {
			t.Errorf("my.cnf drop-in:\n%s", cnf)
		}
	}
	// The server runs tmp_table_size 16384 (16K): a fixed 20000 is held as
	// 16384 (MariaDB rounds it down to a multiple of 16384), so it is in
	// force, not a critical finding.
	out, _, err = run(t, "", "audit", "--fix", "tmp_table_size=20000", "--format", "json", snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range check(t, out).Findings {
		if f.ID == "fixed-settings" && f.Severity != "info" {
			t.Errorf("a value the server rounds is reported as not in force: %+v", f)
		}
	}
	for _, bad := range [][]string{{"audit", "--fix", "nonsense", snap}, {"audit", "--memory-reserve", "lots", snap}, {"audit", "/no/such/snap.json"}} {
		if _, _, err := run(t, "", bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
