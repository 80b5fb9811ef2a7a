package collect

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestMySQLSandbox runs the collector against one throwaway MariaDB (with
// performance_schema on, so its consumers can be read), as root and as a
// user with no privileges.
func TestMySQLSandbox(t *testing.T) {
	srv := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"performance_schema": "ON"}})
	ctx := context.Background()
	root := srv.DB()
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY AUTO_INCREMENT, customer INT, total DECIMAL(10,2), KEY (customer)) ENGINE=InnoDB",
		"INSERT INTO shop.orders (customer, total) SELECT seq % 100, seq FROM shop.seq_1_to_2000",
		"CREATE TABLE shop.log (line VARCHAR(200)) ENGINE=Aria",
		"INSERT INTO shop.log SELECT REPEAT('x', 100) FROM shop.seq_1_to_500",
		"CREATE VIEW shop.big AS SELECT * FROM shop.orders WHERE total > 100",
		"ANALYZE TABLE shop.orders",
		"CREATE USER 'lim'@'localhost' IDENTIFIED BY 'pw-s3cret-42'",
		"GRANT USAGE ON *.* TO 'lim'@'localhost'",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	t.Run("root with a known workload between the readings", func(t *testing.T) {
		const selects = 50
		c := NewMySQL(root, 300*time.Millisecond).(*mysqlCollector)
		// The workload runs on its own connection right after the first
		// reading; the collector's own connection does nothing meanwhile.
		work, err := root.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer work.Close()
		var workErr error
		c.betweenSamples = func() {
			for i := 0; i < selects && workErr == nil; i++ {
				var n int
				workErr = work.QueryRowContext(ctx, "SELECT COUNT(*) FROM shop.orders WHERE customer = ?", i).Scan(&n)
			}
		}
		s := &Snapshot{}
		if err := c.Collect(ctx, s); err != nil {
			t.Fatalf("Collect: %v", err)
		}
		if workErr != nil {
			t.Fatal(workErr)
		}
		m := s.MySQL
		if m.Flavor != "mariadb" || m.Version != srv.Version() || m.VersionComment == "" {
			t.Errorf("flavor %q version %q comment %q, want mariadb %q", m.Flavor, m.Version, m.VersionComment, srv.Version())
		}
		if want := strings.SplitN(srv.Version(), "-", 2)[0]; m.VersionNumber.String() != want || m.VersionNumber.Major < 10 {
			t.Errorf("version number %s, want %s", m.VersionNumber, want)
		}
		for name, want := range map[string]string{
			"max_connections": "151", "innodb_buffer_pool_size": "67108864", "performance_schema": "ON",
			"innodb_log_file_size": "8388608",
		} {
			if got := m.Variables[name]; got != want {
				t.Errorf("variable %s = %q, want %q", name, got, want)
			}
		}
		if len(m.Variables) < 300 {
			t.Errorf("only %d variables", len(m.Variables))
		}

		st := m.Status
		if st.IntervalSeconds < 0.3 || st.IntervalSeconds > 5 || !st.SecondAt.After(st.FirstAt) {
			t.Errorf("interval %v s (%v → %v)", st.IntervalSeconds, st.FirstAt, st.SecondAt)
		}
		if len(st.First) < 300 || len(st.First) != len(st.Second) {
			t.Errorf("%d and %d status variables", len(st.First), len(st.Second))
		}
		if d := st.Deltas["Com_select"]; d != selects {
			t.Errorf("Com_select delta %v, want %d", d, selects)
		}
		if r, want := st.Rates["Com_select"], selects/st.IntervalSeconds; math.Abs(r-want) > 1e-9 {
			t.Errorf("Com_select rate %v/s, want %v/s", r, want)
		}
		for _, gauge := range []string{"Threads_connected", "Open_tables", "Innodb_buffer_pool_pages_free", "Innodb_buffer_pool_pages_data", "Uptime", "Max_used_connections"} {
			if _, ok := st.Rates[gauge]; ok {
				t.Errorf("gauge %s has a rate", gauge)
			}
			if _, ok := st.Second[gauge]; !ok {
				t.Errorf("gauge %s not read", gauge)
			}
		}
		if _, ok := st.Rates["Innodb_buffer_pool_load_status"]; ok {
			t.Error("a text status has a rate")
		}
		if _, ok := st.Rates["Questions"]; !ok {
			t.Error("Questions has no rate")
		}
		// The audit takes Questions less one (the collector's second SHOW
		// GLOBAL STATUS) for the clients' statements of the interval.
		if d := st.Deltas["Questions"]; d != selects+1 {
			t.Errorf("Questions delta %v, want the %d selects and the collector's one", d, selects)
		}
		// The server's own rounding: tmp_table_size is a multiple of
		// 16384, so 1024 is held as 0 (issue 17's --fix tmp_table_size=1024).
		if r, ok := m.VariableRules["tmp_table_size"]; !ok || r.Block != 16384 || !r.Exact {
			t.Errorf("tmp_table_size rule %+v", r)
		} else if e, _, err := r.Meta("tmp_table_size").Expect("1024"); err != nil || e != "0" {
			t.Errorf("tmp_table_size=1024 is held as %q (%v), want 0", e, err)
		}
		if r, ok := m.VariableRules["max_heap_table_size"]; !ok || r.Min != "16384" {
			t.Errorf("max_heap_table_size rule %+v", r)
		}

		in := m.InnoDB
		if in.BufferPoolBytes != 64<<20 || in.PageSize != 16384 || in.PagesTotal <= 0 || in.PagesData <= 0 ||
			in.PagesFree <= 0 || in.PagesData+in.PagesFree > in.PagesTotal {
			t.Errorf("buffer pool %+v", in)
		}
		if in.ReadRequests < selects || in.HitRatio == nil || *in.HitRatio < 0.99 || in.HitRatioSinceStart == nil {
			t.Errorf("hit ratio over %v read requests, %v disk reads: %v", in.ReadRequests, in.DiskReads, in.HitRatio)
		}
		if in.RedoCapacityBytes != 8<<20 || in.RedoCapacitySource == "" || in.RedoBytesPerSecond == nil {
			t.Errorf("redo %d bytes from %q, %v bytes/s", in.RedoCapacityBytes, in.RedoCapacitySource, in.RedoBytesPerSecond)
		}
		if c := m.Connections; c.MaxConnections != 151 || c.MaxUsedConnections < 2 || c.ThreadsConnected < 2 ||
			math.Abs(c.UsedRatio-float64(c.MaxUsedConnections)/151) > 1e-12 {
			t.Errorf("connections %+v", c)
		}

		d := m.Data
		if !d.Complete || len(d.Schemas) != 1 {
			t.Fatalf("data sizes %+v, want shop only", d)
		}
		shop := d.Schemas[0]
		if shop.Name != "shop" || shop.Tables != 2 || shop.DataBytes <= 0 || shop.IndexBytes <= 0 ||
			shop.InnoDBBytes <= 0 || shop.InnoDBBytes >= shop.DataBytes+shop.IndexBytes {
			t.Errorf("shop %+v (2 tables: InnoDB orders, Aria log; the view not counted)", shop)
		}
		if d.TotalDataBytes <= shop.DataBytes || d.InnoDBDataBytes <= 0 || d.InnoDBIndexBytes < 0 {
			t.Errorf("totals %+v: system schemas must count in the total", d)
		}

		ps := m.PerformanceSchema
		if !ps.Enabled || len(ps.Consumers) == 0 || ps.StatementsDigest == nil || !*ps.StatementsDigest {
			t.Errorf("performance_schema %+v", ps)
		}
		if len(m.Missing) != 0 {
			t.Errorf("missing %v", m.Missing)
		}
	})

	t.Run("user with USAGE only gives a partial layer", func(t *testing.T) {
		const password = "pw-s3cret-42"
		db, err := dbconn.Open(ctx, fmt.Sprintf("lim:%s@unix(%s)/", password, srv.Socket()), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s := Run(ctx, []Collector{NewMySQL(db, 100*time.Millisecond)})
		if len(s.Errors) != 1 || !s.Errors[0].Partial || s.Errors[0].Collector != "mysql" {
			t.Fatalf("errors %+v, want one partial mysql error", s.Errors)
		}
		msg := s.Errors[0].Error
		for _, want := range []string{"performance_schema consumers", "setup_consumers", "denied", "complete data sizes", "GRANT SELECT ON *.*"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not mention %q", msg, want)
			}
		}
		m := s.MySQL
		if m.Flavor != "mariadb" || m.Variables["max_connections"] != "151" || m.Status.Rates["Questions"] <= 0 {
			t.Errorf("what USAGE allows was not collected: %s %q %v", m.Flavor, m.Variables["max_connections"], m.Status.Rates["Questions"])
		}
		if !m.PerformanceSchema.Enabled || m.PerformanceSchema.Consumers != nil || m.PerformanceSchema.StatementsDigest != nil {
			t.Errorf("performance_schema %+v, want enabled and consumers unknown", m.PerformanceSchema)
		}
		if m.Data.Complete || len(m.Data.Schemas) != 0 {
			t.Errorf("data %+v: lim cannot see shop", m.Data)
		}
		if len(m.Missing) != 2 {
			t.Errorf("missing %q", m.Missing)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), password) {
			t.Error("the password is in the snapshot")
		}
		// The sentinel is kept through the wrapping.
		err = NewMySQL(db, 10*time.Millisecond).Collect(ctx, &Snapshot{})
		if !errors.Is(err, dbconn.ErrAccessDenied) {
			t.Errorf("%v does not wrap dbconn.ErrAccessDenied", err)
		}
	})

	t.Run("cancelled between the readings", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		c := NewMySQL(root, time.Minute).(*mysqlCollector)
		c.betweenSamples = cancel
		s := &Snapshot{}
		start := time.Now()
		err := c.Collect(cctx, s)
		if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("error %v", err)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("took %v: the wait ignored the context", time.Since(start))
		}
		if s.MySQL == nil || len(s.MySQL.Status.First) == 0 || s.MySQL.Status.Second != nil {
			t.Errorf("want the first reading kept: %+v", s.MySQL)
		}
	})

	t.Run("closed database", func(t *testing.T) {
		db, err := dbconn.Open(ctx, srv.DSN(""), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		s := Run(ctx, []Collector{NewMySQL(db, 10*time.Millisecond)})
		if s.MySQL != nil || len(s.Errors) != 1 || s.Errors[0].Partial || !strings.Contains(s.Errors[0].Error, "closed") {
			t.Errorf("layer %v, errors %+v", s.MySQL, s.Errors)
		}
	})

	t.Run("nil database", func(t *testing.T) {
		if err := NewMySQL(nil, 0).Collect(ctx, &Snapshot{}); err == nil {
			t.Error("no error")
		}
	})
}

// TestMySQLUnreachable: a server that is gone gives an error, not a panic
// and not a layer.
func TestMySQLUnreachable(t *testing.T) {
	db, err := sql.Open("mysql", "u:p@tcp(127.0.0.1:1)/?timeout=1s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &Snapshot{}
	if err := NewMySQL(db, time.Millisecond).Collect(context.Background(), s); err == nil || s.MySQL != nil {
		t.Errorf("err %v, layer %v", err, s.MySQL)
	}
}

func TestStatusRates(t *testing.T) {
	first := map[string]string{
		"Com_select": "100", "Threads_connected": "5", "Innodb_buffer_pool_pages_free": "900",
		"Innodb_buffer_pool_pages_flushed": "10", "Busy_time": "1.250000",
		"Innodb_buffer_pool_load_status": "Buffer pool(s) load completed", "Bytes_sent": "18446744073709551000",
		"Frobnicate_count": "5", "Flushed_counter": "50", "Innodb_data_pending_reads": "1", "Acl_users": "4",
		"wsrep_replicated": "3", "Max_memory_used": "NULL",
	}
	second := map[string]string{
		"Com_select": "150", "Threads_connected": "9", "Innodb_buffer_pool_pages_free": "700",
		"Innodb_buffer_pool_pages_flushed": "30", "Busy_time": "2.000000",
		"Innodb_buffer_pool_load_status": "Buffer pool(s) load completed", "Bytes_sent": "18446744073709551615",
		"Frobnicate_count": "15", "Flushed_counter": "0", "Innodb_data_pending_reads": "0", "Acl_users": "5",
		"wsrep_replicated": "9", "Max_memory_used": "NULL", "Brand_new_status": "7",
	}
	deltas, rates := statusRates(first, second, 2)
	cases := []struct {
		name  string
		delta float64
		ok    bool
	}{
		{"Com_select", 50, true},
		{"Threads_connected", 0, false},
		{"Innodb_buffer_pool_pages_free", 0, false},
		{"Innodb_buffer_pool_pages_flushed", 20, true}, // a counter despite its prefix
		{"Busy_time", 0.75, true},
		{"Innodb_buffer_pool_load_status", 0, false},
		{"Bytes_sent", 615, true},      // exact past 2^63
		{"Frobnicate_count", 10, true}, // unknown names are counters
		{"Flushed_counter", 0, false},  // went down: FLUSH STATUS
		{"Innodb_data_pending_reads", 0, false},
		{"Acl_users", 0, false},
		{"wsrep_replicated", 0, false},
		{"Max_memory_used", 0, false},
		{"Brand_new_status", 0, false}, // only in the second reading
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := deltas[tc.name]
			if ok != tc.ok || math.Abs(d-tc.delta) > 1e-9 {
				t.Errorf("delta %v %v, want %v %v", d, ok, tc.delta, tc.ok)
			}
			if r, rok := rates[tc.name]; rok != tc.ok || math.Abs(r-tc.delta/2) > 1e-9 {
				t.Errorf("rate %v %v, want %v", r, rok, tc.delta/2)
			}
		})
	}
	if len(deltas) != 5 || len(rates) != 5 {
		t.Errorf("%d deltas, %d rates", len(deltas), len(rates))
	}
}

func TestDeriveInnoDB(t *testing.T) {
	cases := []struct {
		name   string
		vars   map[string]string
		bytes  int64
		source string
	}{
		{"MySQL 8.0.30+", map[string]string{"innodb_redo_log_capacity": "104857600", "innodb_log_file_size": "50331648", "innodb_log_files_in_group": "2"},
			104857600, "innodb_redo_log_capacity"},
		{"MySQL 5.7", map[string]string{"innodb_log_file_size": "50331648", "innodb_log_files_in_group": "2"},
			100663296, "innodb_log_file_size x innodb_log_files_in_group"},
		{"MariaDB 10.5+", map[string]string{"innodb_log_file_size": "100663296"}, 100663296, "innodb_log_file_size (one file)"},
		{"no InnoDB", map[string]string{}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &MySQL{Variables: tc.vars, Status: Status{
				First:  map[string]string{"Innodb_buffer_pool_read_requests": "1000", "Innodb_buffer_pool_reads": "100", "Innodb_log_waits": "1"},
				Second: map[string]string{"Innodb_buffer_pool_read_requests": "2000", "Innodb_buffer_pool_reads": "150", "Innodb_log_waits": "4"},
			}}
			m.Status.Deltas, m.Status.Rates = statusRates(m.Status.First, m.Status.Second, 1)
			m.deriveInnoDB()
			in := m.InnoDB
			if in.RedoCapacityBytes != tc.bytes || in.RedoCapacitySource != tc.source {
				t.Errorf("redo %d from %q, want %d from %q", in.RedoCapacityBytes, in.RedoCapacitySource, tc.bytes, tc.source)
			}
			if in.HitRatio == nil || math.Abs(*in.HitRatio-0.95) > 1e-12 || math.Abs(*in.HitRatioSinceStart-0.925) > 1e-12 {
				t.Errorf("hit ratio %v since start %v, want 0.95 and 0.925", in.HitRatio, in.HitRatioSinceStart)
			}
			if in.LogWaits != 4 || in.LogWaitsDelta != 3 || in.RedoBytesPerSecond != nil {
				t.Errorf("log waits %d (+%v), redo rate %v", in.LogWaits, in.LogWaitsDelta, in.RedoBytesPerSecond)
			}
		})
	}
}

func TestSecretVariable(t *testing.T) {
	for name, want := range map[string]bool{
		"wsrep_sst_auth": true, "WSREP_SST_AUTH": true, "server_audit_password": true,
		"caching_sha2_password_private_key_path": false, "max_connections": false, "default_password_lifetime": false,
	} {
		if got := secretVariable(name); got != want {
			t.Errorf("secretVariable(%q) = %v, want %v", name, got, want)
		}
	}
}
