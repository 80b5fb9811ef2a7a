package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMariaDBSnapshotRestore takes a snapshot of a server's data, changes
// the data and the configuration, and restores: the rows are the
// snapshot's again, the server is a new process that read its conf.d
// afresh, and a second restore from the same snapshot gives the same.
func TestMariaDBSnapshotRestore(t *testing.T) {
	m := NewMariaDB(t, MariaDBOptions{ConfigFiles: true})
	ctx := context.Background()
	db := m.DB()
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO app.t VALUES (1, 'one'), (2, 'two')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(t.TempDir(), "snap")
	dc, err := m.SnapshotData(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if dc.Files == 0 || dc.Bytes == 0 || dc.Copy <= 0 || dc.Total < dc.Copy {
		t.Errorf("snapshot %+v", dc)
	}
	rows := func() (n int, sum string) {
		t.Helper()
		if err := db.QueryRow("SELECT COUNT(*), IFNULL(GROUP_CONCAT(v ORDER BY id), '') FROM app.t").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return
	}
	if n, s := rows(); n != 2 || s != "one,two" {
		t.Fatalf("after the snapshot: %d rows %q", n, s)
	}
	for round := 0; round < 2; round++ {
		for _, q := range []string{"INSERT INTO app.t VALUES (3, 'three')", "UPDATE app.t SET v = 'uno' WHERE id = 1", "CREATE TABLE app.extra (x INT)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(m.ConfDir(), "90-test.cnf"), []byte("[mysqld]\nmax_connections = 77\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		pid := m.PID()
		dc, err := m.RestoreData(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		if dc.Bytes == 0 || m.PID() == pid {
			t.Errorf("restore %+v, pid %d → %d", dc, pid, m.PID())
		}
		if n, s := rows(); n != 2 || s != "one,two" {
			t.Errorf("round %d: after the restore: %d rows %q", round, n, s)
		}
		var extra int
		db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'extra'").Scan(&extra)
		var maxConn int
		db.QueryRow("SELECT @@max_connections").Scan(&maxConn)
		if extra != 0 || maxConn != 77 {
			t.Errorf("round %d: table extra %d, max_connections %d (conf.d not read?)", round, extra, maxConn)
		}
		os.Remove(filepath.Join(m.ConfDir(), "90-test.cnf"))
	}
	if _, err := m.SnapshotData(ctx, snap); err == nil {
		t.Error("a snapshot over an existing one was accepted")
	}
	if _, err := db.Exec("SELECT 1"); err != nil {
		t.Errorf("the server is down after a refused snapshot: %v", err)
	}
}
