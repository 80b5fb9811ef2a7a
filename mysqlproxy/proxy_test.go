package mysqlproxy

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// recorder keeps what a proxy reports.
type recorder struct {
	mu  sync.Mutex
	sts []rec
}

type rec struct {
	Statement
	text string
}

func (r rec) String() string {
	return fmt.Sprintf("{%v %.60q cut %v rows %d affected %d error %d}", r.Command, r.text, r.Cut, r.RowsSent, r.RowsAffected, r.Error)
}

func (r *recorder) on(s *Statement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sts = append(r.sts, rec{Statement: *s, text: string(s.Text)})
}

func (r *recorder) take() []rec {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sts
	r.sts = nil
	return out
}

// takeExecuted takes what was reported once n statements that ran SQL
// are among it, or after 5 s: the proxy reports a statement when the
// server's answer has passed, so the client can see the answer first.
func (r *recorder) takeExecuted(n int) []rec {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		enough := len(executed(r.sts)) >= n
		r.mu.Unlock()
		if enough {
			break
		}
	}
	return executed(r.take())
}

// executed are the reported statements that ran SQL, in order, without
// the driver's own (pings, prepares, its read of max_allowed_packet).
func executed(rs []rec) []rec {
	var out []rec
	for _, r := range rs {
		if (r.Command == Query || r.Command == Execute) && !strings.HasPrefix(r.text, "SELECT @@max_allowed_packet") {
			out = append(out, r)
		}
	}
	return out
}

// testServer is a sandbox MariaDB with an app user and a table.
func testServer(t *testing.T) *sandbox.MariaDB {
	t.Helper()
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"local_infile": "ON", "max_allowed_packet": "64M"}})
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE USER app@localhost IDENTIFIED BY 'app-pw'",
		"GRANT ALL ON shop.* TO app@localhost",
		"CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(64) NOT NULL, blob_col LONGBLOB)",
		"INSERT INTO shop.items (name) VALUES ('a'), ('b'), ('c'), ('d'), ('e')",
	} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return m
}

// startProxy starts a proxy in front of m.
func startProxy(t *testing.T, m *sandbox.MariaDB, opt Options, r *recorder) *Proxy {
	t.Helper()
	opt.Network, opt.Address = "unix", m.Socket()
	if r != nil {
		opt.OnStatement = r.on
	}
	p, err := Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// open opens the app's pool through the proxy with extra DSN parameters.
func open(t *testing.T, p *Proxy, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("app:app-pw@%s(%s)/shop?%s", p.Addr().Network(), p.Addr().String(), params)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStatements runs queries, prepared statements and multi-statement
// queries through the proxy, with and without CLIENT_DEPRECATE_EOF (the
// result sets end with an OK or an EOF packet), and checks each reported
// statement's text, rows, affected rows, error and server connection id.
func TestStatements(t *testing.T) {
	m := testServer(t)
	round := 0
	for _, mode := range []struct {
		name  string
		strip uint32
	}{{"deprecate EOF", 0}, {"EOF packets", capDeprecateEOF}} {
		for _, params := range []string{"interpolateParams=true&multiStatements=true", "multiStatements=true"} {
			round++
			val := fmt.Sprintf("v%d", round) // the UPDATE changes the rows every round
			t.Run(mode.name+"/"+params, func(t *testing.T) {
				var r recorder
				p := startProxy(t, m, Options{extraStrip: mode.strip}, &r)
				db := open(t, p, params)
				ctx := context.Background()
				conn, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var connID uint32
				if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
					t.Fatal(err)
				}
				rows, err := conn.QueryContext(ctx, "SELECT id, name FROM items WHERE id > ? ORDER BY id", 1)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != 4 {
					t.Fatalf("%d rows", n)
				}
				res, err := conn.ExecContext(ctx, "UPDATE items SET name = ? WHERE id <= ?", val, 2)
				if err != nil {
					t.Fatal(err)
				}
				if a, _ := res.RowsAffected(); a != 2 {
					t.Fatalf("%d affected", a)
				}
				if _, err := conn.ExecContext(ctx, "SELEKT nonsense"); err == nil {
					t.Fatal("no syntax error")
				}
				// A multi-statement query: each result is reported with
				// its own statement.
				mrows, err := conn.QueryContext(ctx, "SELECT id FROM items WHERE id < 3; SELECT 1 /* one; two */, ';'; UPDATE items SET name = '"+val+"' WHERE id = 5")
				if err != nil {
					t.Fatal(err)
				}
				for {
					for mrows.Next() {
					}
					if !mrows.NextResultSet() {
						break
					}
				}
				mrows.Close()
				if err := conn.PingContext(ctx); err != nil {
					t.Fatal(err)
				}
				got := executed(r.take())
				want := []struct {
					text     string
					rows     int64
					affected int64
					err      uint16
				}{
					{"SELECT CONNECTION_ID()", 1, 0, 0},
					{"SELECT id, name FROM items WHERE id > ? ORDER BY id", 4, 0, 0},
					{"UPDATE items SET name = ? WHERE id <= ?", 0, 2, 0},
					{"SELEKT nonsense", 0, 0, 1064},
					{"SELECT id FROM items WHERE id < 3", 2, 0, 0},
					{"SELECT 1 /* one; two */, ';'", 1, 0, 0},
					{"UPDATE items SET name = '" + val + "' WHERE id = 5", 0, 1, 0},
				}
				interpolated := strings.Contains(params, "interpolateParams")
				if len(got) != len(want) {
					t.Fatalf("%d statements, want %d: %+v", len(got), len(want), got)
				}
				for i, w := range want {
					g := got[i]
					text := w.text
					if interpolated {
						text = strings.NewReplacer("id > ?", "id > 1", "name = ? WHERE id <= ?", "name = '"+val+"' WHERE id <= 2").Replace(text)
					}
					if g.text != text || g.RowsSent != w.rows || g.RowsAffected != w.affected || g.Error != w.err {
						t.Errorf("statement %d: %q rows %d affected %d error %d, want %q %d %d %d", i, g.text, g.RowsSent, g.RowsAffected, g.Error, text, w.rows, w.affected, w.err)
					}
					if g.ServerID != connID || g.Conn == 0 {
						t.Errorf("statement %d: server connection %d (conn %d), want %d", i, g.ServerID, g.Conn, connID)
					}
					if g.End.Before(g.Start) || (i > 0 && g.Start.Before(got[i-1].Start)) {
						t.Errorf("statement %d: times %v..%v", i, g.Start, g.End)
					}
					wantCmd := Query
					if !interpolated && i < 4 && i != 0 && i != 3 {
						wantCmd = Execute
					}
					if g.Command != wantCmd {
						t.Errorf("statement %d: command %v, want %v", i, g.Command, wantCmd)
					}
				}
				st := p.Stats()
				if st.Untracked != 0 || st.UnknownStatements != 0 || st.Refused != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// TestLargePackets sends and reads back a 20 MiB value (packets of 16 MiB
// continue in the next one, both ways) and checks the statements around
// it are still read right.
func TestLargePackets(t *testing.T) {
	m := testServer(t)
	var r recorder
	p := startProxy(t, m, Options{MaxText: 1 << 10}, &r)
	for _, params := range []string{"interpolateParams=true&maxAllowedPacket=0", "maxAllowedPacket=0"} {
		db := open(t, p, params)
		big := bytes.Repeat([]byte("0123456789abcdef"), 20<<16) // 20 MiB
		if _, err := db.Exec("UPDATE items SET blob_col = ? WHERE id = 1", big); err != nil {
			t.Fatal(err)
		}
		var back []byte
		if err := db.QueryRow("SELECT blob_col FROM items WHERE id = 1").Scan(&back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, big) {
			t.Fatalf("%s: read back %d bytes, sent %d", params, len(back), len(big))
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 5 {
			t.Fatal(n, err)
		}
		got := r.takeExecuted(3)
		if len(got) != 3 {
			t.Fatalf("%s: %d statements: %+v", params, len(got), got)
		}
		if strings.Contains(params, "interpolate") {
			if !got[0].Cut || len(got[0].text) != 1<<10 || !strings.HasPrefix(got[0].text, "UPDATE items SET blob_col = _binary'0123") {
				t.Errorf("the big UPDATE: cut %v, %d bytes: %.40q", got[0].Cut, len(got[0].text), got[0].text)
			}
		}
		if got[1].RowsSent != 1 || got[2].text != "SELECT COUNT(*) FROM items" || got[2].RowsSent != 1 {
			t.Errorf("after the big value: %+v", got[1:])
		}
	}
	if st := p.Stats(); st.Untracked != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestLocalInfile loads a file with LOAD DATA LOCAL INFILE: its data goes
// through, and the next statements are read right.
func TestLocalInfile(t *testing.T) {
	m := testServer(t)
	var r recorder
	p := startProxy(t, m, Options{}, &r)
	db := open(t, p, "allowAllFiles=true&interpolateParams=true")
	path := filepath.Join(t.TempDir(), "items.tsv")
	var data strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&data, "%d\titem %d\n", 100+i, i)
	}
	if err := os.WriteFile(path, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec("LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE items (id, name)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3000 {
		t.Fatalf("%d rows loaded", n)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM items WHERE id >= 100").Scan(&n); err != nil || n != 3000 {
		t.Fatal(n, err)
	}
	got := r.takeExecuted(2)
	if len(got) != 2 || got[0].RowsAffected != 3000 || got[1].RowsSent != 1 {
		t.Errorf("%+v", got)
	}
}

// TestAuthSwitch logs in as a user of the ed25519 plugin: the server
// asks the client to switch plugins mid-handshake, through the proxy.
func TestAuthSwitch(t *testing.T) {
	m := testServer(t)
	for _, q := range []string{"INSTALL SONAME 'auth_ed25519'", "CREATE USER ed@localhost IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')", "GRANT SELECT ON shop.* TO ed@localhost"} {
		if _, err := m.DB().Exec(q); err != nil {
			t.Skipf("%s: %v (the server has no ed25519 plugin)", q, err)
		}
	}
	var r recorder
	p := startProxy(t, m, Options{}, &r)
	db, err := sql.Open("mysql", fmt.Sprintf("ed:ed-pw@%s(%s)/shop", p.Addr().Network(), p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 5 {
		t.Fatal(n, err)
	}
	bad, _ := sql.Open("mysql", fmt.Sprintf("ed:wrong@%s(%s)/shop", p.Addr().Network(), p.Addr()))
	defer bad.Close()
	if err := bad.Ping(); err == nil || !strings.Contains(err.Error(), "1045") {
		t.Errorf("a wrong password: %v", err)
	}
	if got := r.takeExecuted(1); len(got) != 1 || got[0].text != "SELECT COUNT(*) FROM items" {
		t.Errorf("%+v", got)
	}
}

// TestRefusals: TLS and compression are not offered, and a client that
// asks for them anyway is refused with a clear error; so is a connection
// over MaxConns and one to a server that is not there.
func TestRefusals(t *testing.T) {
	m := testServer(t)
	p := startProxy(t, m, Options{MaxConns: 2}, nil)
	// The driver sees no TLS offered.
	db := open(t, p, "tls=true")
	if err := db.Ping(); !errors.Is(err, mysql.ErrNoTLS) {
		t.Errorf("tls=true: %v", err)
	}
	// tls=preferred and compress=true go on without.
	for _, params := range []string{"tls=preferred", "compress=true"} {
		db := open(t, p, params)
		if err := db.Ping(); err != nil {
			t.Errorf("%s: %v", params, err)
		}
		db.Close()
	}
	// A raw client reads the greeting and asks anyway.
	for _, c := range []struct {
		name string
		caps uint32
		want string
	}{
		{"TLS", capProtocol41 | capSSL | capSecureConnection, "TLS"},
		{"compression", capProtocol41 | capCompress | capSecureConnection | capPluginAuth, "compression"},
		{"zstd", capProtocol41 | capZstd | capSecureConnection, "compression"},
		{"old protocol", capSecureConnection, "pre-4.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			waitIdle(t, p)
			conn, err := net.Dial(p.Addr().Network(), p.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			g, seq := rawRead(t, conn)
			gr, err := parseGreeting(g)
			if err != nil {
				t.Fatal(err)
			}
			if gr.caps&(capSSL|capCompress|capZstd) != 0 || gr.caps&capProtocol41 == 0 {
				t.Errorf("greeting capabilities %#x", gr.caps)
			}
			if gr.extOff >= 0 && binary.LittleEndian.Uint32(g[gr.extOff:]) != 0 {
				t.Errorf("MariaDB extended capabilities left in the greeting")
			}
			resp := make([]byte, 32)
			binary.LittleEndian.PutUint32(resp, c.caps)
			rawWrite(t, conn, seq+1, resp)
			e, _ := rawRead(t, conn)
			if first(e) != hdrERR || !strings.Contains(string(e), c.want) {
				t.Errorf("reply %q, want an ERR naming %s", e, c.want)
			}
		})
	}
	// Over MaxConns.
	waitIdle(t, p)
	db1, db2 := open(t, p, ""), open(t, p, "")
	c1, err1 := db1.Conn(context.Background())
	c2, err2 := db2.Conn(context.Background())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	db3 := open(t, p, "")
	if err := db3.Ping(); err == nil || !strings.Contains(err.Error(), "1040") {
		t.Errorf("a third connection: %v", err)
	}
	c1.Close()
	c2.Close()
	// No server.
	q, err := Start(context.Background(), Options{Network: "unix", Address: filepath.Join(t.TempDir(), "none.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	dbq, _ := sql.Open("mysql", fmt.Sprintf("app:x@tcp(%s)/", q.Addr()))
	defer dbq.Close()
	if err := dbq.Ping(); err == nil || !strings.Contains(err.Error(), "cannot reach the server") {
		t.Errorf("no server: %v", err)
	}
	if st := p.Stats(); st.Refused < 5 {
		t.Errorf("refused %d", st.Refused)
	}
}

// waitIdle waits until the proxy has seen every earlier connection end:
// a client's Close returns before the proxy's handler counts it gone, so
// a test near MaxConns would otherwise be refused for a connection that
// has already closed.
func waitIdle(t *testing.T, p *Proxy) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); p.Stats().Active > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open", p.Stats().Active)
		}
	}
}

func rawRead(t *testing.T, c net.Conn) ([]byte, byte) {
	t.Helper()
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatal(err)
	}
	return p, h[3]
}

func rawWrite(t *testing.T, c net.Conn, seq byte, p []byte) {
	t.Helper()
	if _, err := c.Write(append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}, p...)); err != nil {
		t.Fatal(err)
	}
}

// TestClose closes the proxy under open connections: they end, and the
// goroutines are gone.
func TestClose(t *testing.T) {
	m := testServer(t)
	p := startProxy(t, m, Options{}, nil)
	db := open(t, p, "")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if st := p.Stats(); st.Active != 0 {
		t.Errorf("%d connections still active", st.Active)
	}
}

// serverThreads reads the server's Threads_connected and
// Max_used_connections.
func serverThreads(t *testing.T, m *sandbox.MariaDB) (connected, maxUsed int) {
	t.Helper()
	rows, err := m.DB().Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Max_used_connections')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if k == "Threads_connected" {
			connected = v
		} else {
			maxUsed = v
		}
	}
	return connected, maxUsed
}

// idleSockets opens n TCP connections to p that send nothing, and waits
// until the proxy has accepted them all.
func idleSockets(t *testing.T, p *Proxy, n int) []net.Conn {
	t.Helper()
	before := p.Stats().Conns
	var cs []net.Conn
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	for deadline := time.Now().Add(10 * time.Second); p.Stats().Conns < before+int64(n); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy accepted %d of %d connections", p.Stats().Conns-before, n)
		}
	}
	return cs
}

// TestConnectionBounds: sockets that never authenticate cost the server
// nothing (300 of them used all of a server's 151 connections, root's
// reserved one too, when the proxy connected to the server for each as it
// accepted it), the proxy's own cap answers error 1040 through the
// driver, a client that sends one byte of its handshake (or nothing) is
// closed after HandshakeTimeout, and one idle between commands after
// IdleTimeout, but not while its query runs.
func TestConnectionBounds(t *testing.T) {
	m := testServer(t)
	rootCan := func(t *testing.T) {
		t.Helper()
		root, err := sql.Open("mysql", m.DSN(""))
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		if err := root.Ping(); err != nil {
			t.Errorf("root cannot connect: %v", err)
		}
	}
	t.Run("300 idle sockets", func(t *testing.T) {
		p := startProxy(t, m, Options{}, nil)
		base, _ := serverThreads(t, m)
		idleSockets(t, p, 300)
		// A client of the app goes on working.
		db := open(t, p, "")
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 5 {
			t.Fatalf("a client while 300 sockets are idle: %d, %v", n, err)
		}
		conn, maxUsed := serverThreads(t, m)
		if conn > base+1 || maxUsed > base+1+DefaultMaxConns {
			t.Errorf("Threads_connected %d, Max_used_connections %d: more than the %d of the test and its client (cap %d)", conn, maxUsed, base+1, DefaultMaxConns)
		}
		rootCan(t)
	})
	t.Run("the cap is error 1040", func(t *testing.T) {
		p := startProxy(t, m, Options{MaxConns: 2}, nil)
		idleSockets(t, p, 300)
		var held []*sql.Conn
		for i := range 2 {
			c, err := open(t, p, "").Conn(context.Background())
			if err != nil {
				t.Fatalf("client %d under the cap: %v", i+1, err)
			}
			held = append(held, c)
		}
		err := open(t, p, "").Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != ErrConCount || !strings.Contains(me.Message, "Too many connections") {
			t.Errorf("a third client: %v, want error 1040 Too many connections", err)
		}
		if st := p.Stats(); st.OverCap != 1 || st.Upstream != 2 {
			t.Errorf("over the cap %d, upstream %d; want 1 and 2", st.OverCap, st.Upstream)
		}
		for _, c := range held {
			c.Close()
		}
		rootCan(t)
	})
	t.Run("clients in their handshake past MaxHandshakes", func(t *testing.T) {
		p := startProxy(t, m, Options{MaxHandshakes: 5}, nil)
		idleSockets(t, p, 5)
		err := open(t, p, "").Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != ErrConCount || !strings.Contains(me.Message, "more than 5 clients in their handshake") {
			t.Errorf("a sixth client: %v, want error 1040", err)
		}
		if st := p.Stats(); st.OverCap != 1 || st.Upstream != 0 {
			t.Errorf("over the cap %d, upstream %d; want 1 and 0", st.OverCap, st.Upstream)
		}
	})
	t.Run("handshake timeout", func(t *testing.T) {
		p := startProxy(t, m, Options{HandshakeTimeout: 500 * time.Millisecond}, nil)
		silent := idleSockets(t, p, 1)[0]
		oneByte := idleSockets(t, p, 1)[0]
		if _, err := oneByte.Write([]byte{0x55}); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]net.Conn{"silent": silent, "one byte": oneByte} {
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.Copy(io.Discard, c) // the greeting, then the close
			if err != nil {
				t.Errorf("%s: not closed within 10 s: %v", name, err)
			}
		}
		if st := p.Stats(); st.HandshakeTimeouts != 2 || st.Upstream != 0 {
			t.Errorf("handshake timeouts %d, upstream %d; want 2 and 0", st.HandshakeTimeouts, st.Upstream)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		p := startProxy(t, m, Options{IdleTimeout: 500 * time.Millisecond}, nil)
		db := open(t, p, "")
		// A query longer than the idle timeout is not idleness.
		var slept int
		if err := db.QueryRow("SELECT SLEEP(1.5)").Scan(&slept); err != nil {
			t.Fatalf("a query longer than the idle timeout: %v", err)
		}
		for deadline := time.Now().Add(10 * time.Second); p.Stats().IdleClosed == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("an idle client still open after 10 s")
			}
		}
		waitIdle(t, p)
		// The pool reconnects.
		if err := db.QueryRow("SELECT 1").Scan(&slept); err != nil {
			t.Errorf("after the idle close: %v", err)
		}
		if st := p.Stats(); st.IdleClosed != 1 {
			t.Errorf("idle closed %d", st.IdleClosed)
		}
	})
}

// TestSizeMaxConns: the proxy's cap leaves a server's other clients a
// quarter of what is free, and is never over DefaultMaxConns nor under 1.
func TestSizeMaxConns(t *testing.T) {
	for _, tc := range []struct {
		name            string
		maxConns, inUse int
		want            int
	}{
		{"a default server, idle", 151, 1, DefaultMaxConns},
		{"a default server, busy", 151, 120, 24},
		{"nearly full", 151, 148, 1},
		{"over full", 151, 160, 1},
		{"a small server", 20, 2, 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SizeMaxConns(tc.maxConns, tc.inUse); got != tc.want {
				t.Errorf("SizeMaxConns(%d, %d) = %d, want %d", tc.maxConns, tc.inUse, got, tc.want)
			}
		})
	}
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: map[string]string{"max_connections": "20"}})
	got, err := MaxConnsFor(context.Background(), m.DB())
	if err != nil || got < 11 || got > 15 { // 1 to 5 connections in use
		t.Errorf("MaxConnsFor a server of 20 connections: %d, %v", got, err)
	}
}
