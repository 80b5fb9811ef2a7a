package mysqlproxy

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// feed plays data as packets into a session: each record is a direction
// byte (bit 0: from the server), a length byte (255: a full 16 MiB - 1
// payload, which continues in the next packet) and up to that many bytes
// of the payload's start.
func feed(s *session, data []byte, check func([]Statement)) {
	now := time.Unix(1000, 0)
	var out []Statement
	for len(data) >= 2 {
		dir, n := data[0], int(data[1])
		data = data[2:]
		k := min(n, len(data))
		p := data[:k]
		data = data[k:]
		if n == 255 {
			n = maxPayload
		}
		now = now.Add(time.Millisecond)
		if dir&1 == 0 {
			s.fromClient(n, p, now)
		} else {
			out = s.fromServer(n, p, now, out[:0])
			check(out)
		}
	}
}

// pkt is a record of feed.
func pkt(fromServer bool, p ...byte) []byte {
	d := byte(0)
	if fromServer {
		d = 1
	}
	return append([]byte{d, byte(len(p))}, p...)
}

func FuzzSession(f *testing.F) {
	q := append([]byte{comQuery}, "SELECT 1; SELECT 2"...)
	seeds := [][]byte{
		bytes.Join([][]byte{pkt(true, hdrOK, 0, 0, 2, 0, 0, 0), pkt(false, q...), pkt(true, 1), pkt(true, 3, 'd', 'e', 'f'),
			pkt(true, hdrEOF, 0, 0, 8, 0), pkt(true, 1, '1'), pkt(true, hdrEOF, 0, 0, 8, 0), pkt(true, hdrOK, 0, 0, 2, 0, 0, 0)}, nil),
		bytes.Join([][]byte{pkt(true, hdrOK, 0, 0, 2, 0, 0, 0), pkt(false, comStmtPrepare, 'S', 'E', 'L', ' ', '?'),
			pkt(true, hdrOK, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0),
			pkt(false, comStmtExecute, 7, 0, 0, 0, 0, 1, 0, 0, 0), pkt(true, 1), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0), pkt(true, 0, 0, 1), pkt(true, hdrEOF, 0, 0, 2, 0),
			pkt(false, comStmtClose, 7, 0, 0, 0)}, nil),
		bytes.Join([][]byte{pkt(true, hdrOK, 0, 0, 2, 0, 0, 0), pkt(false, q...), pkt(true, hdrInfile, 'f'), pkt(false, 'x'), pkt(false), pkt(true, hdrOK, 1, 0, 2, 0, 0, 0)}, nil),
		{0, 255, comQuery, 'S', 1, 255, 1, 1},
	}
	for _, s := range seeds {
		f.Add(false, s)
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, deprecateEOF bool, data []byte) {
		caps := capProtocol41 | capMultiStatements
		if deprecateEOF {
			caps |= capDeprecateEOF
		}
		var c counters
		lim := limits{maxText: 64, maxPrepared: 256, maxPending: 8}
		s := newSession(1, 2, caps, lim, &c)
		feed(s, data, func(sts []Statement) {
			for _, st := range sts {
				if len(st.Text) > lim.maxText && st.Command != Execute {
					t.Fatalf("text of %d bytes", len(st.Text))
				}
				if st.End.Before(st.Start) {
					t.Fatalf("ends before it starts: %+v", st)
				}
				if st.RowsSent < 0 || st.Command == 0 {
					t.Fatalf("%+v", st)
				}
			}
		})
		if len(s.queue) > lim.maxPending || s.prepSize > lim.maxPrepared {
			t.Fatalf("queue %d, prepared %d bytes", len(s.queue), s.prepSize)
		}
	})
}

// TestSessionStatements plays one connection's packets (the seeds of
// FuzzSession) and checks what is reported.
func TestSessionStatements(t *testing.T) {
	var got []Statement
	keep := func(sts []Statement) {
		for _, s := range sts {
			s.Text = append([]byte(nil), s.Text...)
			got = append(got, s)
		}
	}
	var c counters
	s := newSession(1, 9, capProtocol41|capMultiStatements, limits{maxText: 64, maxPrepared: 256, maxPending: 8}, &c)
	q := append([]byte{comQuery}, "SELECT 1; SELECT 2"...)
	feed(s, bytes.Join([][]byte{pkt(true, hdrOK, 0, 0, 2, 0, 0, 0), pkt(false, q...), pkt(true, 1), pkt(true, 3, 'd', 'e', 'f'),
		pkt(true, hdrEOF, 0, 0, 2, 0), pkt(true, 1, '1'), pkt(true, hdrEOF, 0, 0, 8, 0), pkt(true, hdrOK, 0, 0, 2, 0, 0, 0),
		pkt(false, comStmtPrepare, 'S', 'E', 'L', ' ', '?'),
		pkt(true, hdrOK, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0),
		pkt(false, comStmtExecute, 7, 0, 0, 0, 0, 1, 0, 0, 0), pkt(true, 1), pkt(true, 3), pkt(true, hdrEOF, 0, 0, 2, 0), pkt(true, 0, 0, 1), pkt(true, 0, 0, 2), pkt(true, hdrEOF, 0, 0, 2, 0),
		pkt(false, comStmtClose, 7, 0, 0, 0),
		pkt(false, comStmtExecute, 7, 0, 0, 0, 0, 1, 0, 0, 0), pkt(true, hdrERR, 0x13, 0x05, '#'),
		pkt(false, comQuit)}, nil), keep)
	type short struct {
		Cmd  Command
		Text string
		Rows int64
		Err  uint16
	}
	var sh []short
	for _, g := range got {
		sh = append(sh, short{g.Command, string(g.Text), g.RowsSent, g.Error})
		if g.ServerID != 9 || g.Conn != 1 {
			t.Errorf("%+v", g)
		}
	}
	want := []short{{Query, "SELECT 1", 1, 0}, {Query, "SELECT 2", 0, 0}, {Prepare, "SEL ?", 0, 0}, {Execute, "SEL ?", 2, 0},
		{Execute, "/* a statement prepared before the proxy recorded it */", 0, 1299}}
	if !reflect.DeepEqual(sh, want) {
		t.Errorf("got  %+v\nwant %+v", sh, want)
	}
	if c.unknownStmt.Load() != 1 || c.untracked.Load() != 0 {
		t.Errorf("unknown %d untracked %d", c.unknownStmt.Load(), c.untracked.Load())
	}
}

func TestSplitStatements(t *testing.T) {
	cases := map[string][]string{
		"SELECT 1; SELECT 2;":                   {"SELECT 1", "SELECT 2"},
		"SELECT ';' ; SELECT \"a;b\"":           {"SELECT ';'", "SELECT \"a;b\""},
		"SELECT `a;b` FROM t; -- x;y\nSELECT 3": {"SELECT `a;b` FROM t", "-- x;y\nSELECT 3"},
		"SELECT 1 /* a; b */; # c;d\n":          {"SELECT 1 /* a; b */", "# c;d"},
		"SELECT 'it\\'s;'; SELECT 2":            {"SELECT 'it\\'s;'", "SELECT 2"},
		";;":                                    nil,
		"SELECT /* unterminated; x":             {"SELECT /* unterminated; x"},
	}
	for in, want := range cases {
		var got []string
		for _, p := range splitStatements([]byte(in)) {
			got = append(got, string(p))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("split(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzHandshake(f *testing.F) {
	f.Add([]byte("\x0a10.11.19-MariaDB\x00\x05\x00\x00\x00abcdefgh\x00\xfe\xf7\x2d\x02\x00\xff\x81\x15\x00\x00\x00\x00\x00\x00\x1d\x00\x00\x00ijklmnopqrst\x00mysql_native_password\x00"))
	f.Add([]byte("\x0a8.0\x00\x01\x00\x00\x00abcdefgh\x00\xff\xff"))
	f.Fuzz(func(t *testing.T, p []byte) {
		g, err := parseGreeting(p)
		if err == nil {
			c := append([]byte(nil), p...)
			rewriteGreeting(c, g, 0)
			if len(c) != len(p) {
				t.Fatal("the greeting changed length")
			}
			if g2, err := parseGreeting(c); err != nil || g2.caps&stripped != 0 || g2.connID != g.connID {
				t.Fatalf("rewritten greeting: %+v %v", g2, err)
			}
		}
		if h, err := parseHandshake(p); err == nil {
			_ = h.refusal()
		}
		_, _, _ = okStatus(p)
		_, _ = eofStatus(p)
	})
}

// handshakeResponse builds a protocol-4.1 handshake response as clients
// send it.
func handshakeResponse(caps uint32, user, auth, db, plugin string, attrs []byte) []byte {
	p := make([]byte, 32)
	p[0], p[1], p[2], p[3] = byte(caps), byte(caps>>8), byte(caps>>16), byte(caps>>24)
	p = append(append(p, user...), 0)
	switch {
	case caps&capPluginAuthLenenc != 0, caps&capSecureConnection != 0:
		p = append(append(p, byte(len(auth))), auth...)
	default:
		p = append(append(p, auth...), 0)
	}
	if caps&capConnectWithDB != 0 {
		p = append(append(p, db...), 0)
	}
	p = append(append(p, plugin...), 0)
	return append(p, attrs...)
}

// FuzzDeferAuth: any handshake response gives a rewritten one or an
// error, never a panic; a rewritten one keeps the username, the database
// and what follows the plugin (the attributes), with an empty auth
// response and deferredPlugin as the plugin.
func FuzzDeferAuth(f *testing.F) {
	base := capProtocol41 | capPluginAuth | capConnectAttrs
	f.Add(uint32(base|capSecureConnection|capConnectWithDB), "app", "0123456789abcdefghij", "shop", "mysql_native_password", []byte{3, 1, 'a', 0})
	f.Add(uint32(base|capPluginAuthLenenc|capSecureConnection), "root", "", "", "client_ed25519", []byte(nil))
	f.Add(uint32(base|capConnectWithDB), "u", "pw", "d", "mysql_clear_password", []byte{})
	f.Fuzz(func(t *testing.T, caps uint32, user, auth, db, plugin string, attrs []byte) {
		clean := func(s string) string { return string(bytes.ReplaceAll([]byte(s), []byte{0}, nil)) }
		user, db, plugin = clean(user), clean(db), clean(plugin)
		if caps&(capPluginAuthLenenc|capSecureConnection) == 0 {
			auth = clean(auth)
		}
		if len(auth) > 250 {
			auth = auth[:250]
		}
		in := handshakeResponse(caps, user, auth, db, plugin, attrs)
		out, err := deferAuth(in, caps)
		if err != nil {
			t.Fatalf("a well-formed response: %v", err)
		}
		want := handshakeResponse(caps, user, "", db, deferredPlugin, attrs)
		if !bytes.Equal(out, want) {
			t.Fatalf("deferAuth(%q) = %q, want %q", in, out, want)
		}
		// Any bytes at all: no panic, and the result (if any) is bounded.
		for cut := 0; cut <= len(in); cut += max(1, len(in)/8) {
			if o, err := deferAuth(in[:cut], caps); err == nil && len(o) > cut+len(deferredPlugin)+2 {
				t.Fatalf("cut at %d: %d bytes out", cut, len(o))
			}
		}
	})
}
