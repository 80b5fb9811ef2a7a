package mysqlvar

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestExpectAgainstMariaDB is a differential test of Meta.Expect: for each
// value it predicts what the server will hold (or that it would clamp
// it), then sets it on a real MariaDB and reads it back.
func TestExpectAgainstMariaDB(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	db := srv.DB()
	ctx := context.Background()
	s, err := Detect(ctx, db)
	if err != nil || !s.IsMariaDB() || s.Version.Major < 10 {
		t.Fatalf("Detect: %+v %v", s, err)
	}
	for _, tc := range []struct {
		name, value string
		want        string // the expected read-back; "" when Expect must refuse
		note        bool   // Expect says it rounds
	}{
		{name: "max_connections", value: "77", want: "77"},
		{name: "max_connections", value: "5"},       // below 10: clamped
		{name: "max_connections", value: "1000000"}, // above 100000: clamped
		{name: "tmp_table_size", value: "64M", want: "67108864"},
		{name: "tmp_table_size", value: "20000", want: "16384", note: true},
		{name: "innodb_buffer_pool_size", value: "100000000", want: "99614720", note: true},
		{name: "long_query_time", value: "0.5", want: "0.500000"},
		{name: "slow_query_log", value: "1", want: "ON"},
		{name: "slow_query_log", value: "yes", want: "ON"},
		{name: "slow_query_log", value: "maybe"},
		{name: "innodb_io_capacity", value: "50"}, // below 100
		{name: "thread_cache_size", value: "32", want: "32"},
		{name: "binlog_format", value: "row", want: "ROW"},
		{name: "binlog_format", value: "fast"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			meta, err := ReadMeta(ctx, db, s, []string{tc.name})
			if err != nil {
				t.Fatal(err)
			}
			m := meta[tc.name]
			if !m.Exists || !m.Exact || !m.ReadOnlyKnown || m.ReadOnly {
				t.Fatalf("meta %+v", m)
			}
			expect, note, err := m.Expect(tc.value)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Expect(%s) = %s, want a refusal", tc.value, expect)
				}
			} else if err != nil || !Equal(expect, tc.want) || (note != "") != tc.note {
				t.Fatalf("Expect(%s) = %q %q %v, want %s", tc.value, expect, note, err, tc.want)
			}
			// What the server does with it.
			stmt, lerr := SetGlobal(tc.name, tc.value)
			if lerr != nil {
				t.Fatal(lerr)
			}
			_, serr := db.ExecContext(ctx, stmt)
			var got string
			if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+tc.name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if serr != nil || !m.Matches(expect, got) {
					t.Errorf("%s: server holds %q (%v), Expect said %q", stmt, got, serr, expect)
				}
			} else if serr == nil && Equal(got, tc.value) {
				t.Errorf("%s: the server took it as it is, but Expect refused it", stmt)
			}
			if _, err := db.ExecContext(ctx, "SET GLOBAL "+tc.name+" = DEFAULT"); err != nil && tc.name != "innodb_buffer_pool_size" {
				t.Logf("reset: %v", err)
			}
		})
	}
	t.Run("read-only and missing", func(t *testing.T) {
		meta, err := ReadMeta(ctx, db, s, []string{"innodb_log_buffer_size", "innodb-flush-method", "no_such_variable"})
		if err != nil {
			t.Fatal(err)
		}
		if m := meta["innodb_log_buffer_size"]; !m.ReadOnly || !m.ReadOnlyKnown || m.Block != 4096 {
			t.Errorf("innodb_log_buffer_size %+v", m)
		}
		if m := meta["innodb_flush_method"]; !m.ReadOnly || m.Type != "ENUM" || len(m.Values) < 3 {
			t.Errorf("innodb_flush_method %+v", m)
		}
		if m := meta["no_such_variable"]; m.Exists {
			t.Errorf("no_such_variable %+v", m)
		}
	})
}

// TestTableMatchesMariaDB compares the version table with the MariaDB
// installed here: a variable is present exactly where the table says,
// and SET GLOBAL (to its own value) works exactly where the table says it
// is dynamic; the server's own READ_ONLY column agrees.
func TestTableMatchesMariaDB(t *testing.T) {
	// The compiled-in defaults: with the sandbox's small 8M redo log,
	// SET GLOBAL innodb_log_file_size to its own value fails (it must be
	// at least innodb_log_buffer_size: see Conflicts).
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{ServerDefaults: true})
	db := srv.DB()
	ctx := context.Background()
	s, err := Detect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := ReadMeta(ctx, db, s, Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		present, _ := Available(s.Flavor, s.Version, name)
		m := meta[name]
		if present != m.Exists {
			t.Errorf("%s on %s: table says present=%v, the server %v", name, s, present, m.Exists)
			continue
		}
		if !m.Exists {
			continue
		}
		dyn, _ := Dynamic(s.Flavor, s.Version, name)
		_, err := db.Exec("SET GLOBAL " + name + " = @@GLOBAL." + name)
		var me *mysql.MySQLError
		readOnly := errors.As(err, &me) && me.Number == 1238
		if err != nil && !readOnly {
			t.Errorf("SET GLOBAL %s: %v", name, err)
			continue
		}
		if dyn == readOnly {
			t.Errorf("%s on %s: table says dynamic=%v, SET GLOBAL says %v", name, s, dyn, !readOnly)
		}
		if m.ReadOnly != readOnly {
			t.Errorf("%s: SYSTEM_VARIABLES says read-only=%v, SET GLOBAL says %v", name, m.ReadOnly, readOnly)
		}
	}
	if !strings.HasPrefix(s.String(), "MariaDB 10.") && !strings.HasPrefix(s.String(), "MariaDB 11.") {
		t.Errorf("server %s", s)
	}
}
