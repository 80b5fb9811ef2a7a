package mysqlproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Defaults of Options.
const (
	DefaultMaxConns    = 512
	DefaultMaxText     = 16 << 10
	DefaultMaxPrepared = 256 << 10
	DefaultDialTimeout = 10 * time.Second
	// maxPending bounds the commands a connection may send ahead of
	// their responses (clients send one at a time).
	maxPending = 64
	// maxHandshake bounds the greeting and the handshake response.
	maxHandshake = 1 << 20
	// bufSize is each direction's read and write buffer.
	bufSize = 16 << 10
	// serverPrefix is how much of a server packet the session reads.
	serverPrefix = 32
)

// Options configures a Proxy.
type Options struct {
	// Listen is where the app connects: "host:port" (":0" or
	// "127.0.0.1:0" for a free port) or "unix:/path/to.sock".
	Listen string
	// Network and Address are the server's ("tcp", "127.0.0.1:3306";
	// "unix", "/run/mysqld/mysqld.sock"); see Upstream.
	Network, Address string
	// OnStatement receives every command with its response, on the
	// goroutine that forwards the server's packets to that connection:
	// it must be quick and must not keep s.Text. Nil records nothing.
	OnStatement func(s *Statement)
	// MaxConns bounds the connections proxied at once (default
	// DefaultMaxConns); a connection over it gets error 1040.
	MaxConns int
	// MaxText bounds the statement text kept (default DefaultMaxText
	// bytes); MaxPrepared the bytes of prepared statements' texts kept
	// per connection (default DefaultMaxPrepared): an EXECUTE of one not
	// kept is reported with a placeholder text.
	MaxText, MaxPrepared int
	// DialTimeout bounds connecting to the server (default
	// DefaultDialTimeout).
	DialTimeout time.Duration

	// extraStrip, for tests, removes more capabilities from the greeting
	// (CLIENT_DEPRECATE_EOF, to read result sets that end with EOF).
	extraStrip uint32
}

// Upstream returns the network and address of the server a
// go-sql-driver DSN names (tcp(host:port) or unix(/path)).
func Upstream(dsn string) (network, address string, err error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", "", fmt.Errorf("the DSN: %w", err)
	}
	return c.Net, c.Addr, nil
}

// Stats count what a proxy did.
type Stats struct {
	// Conns are the connections accepted, Active those open now, Refused
	// those turned away (over MaxConns, the server unreachable, TLS or
	// compression asked for, a handshake the proxy cannot read).
	Conns, Active, Refused int64
	// Statements are the commands reported to OnStatement.
	Statements int64
	// Untracked are connections passed through without recording from
	// some point on: a response the proxy could not follow, a binlog
	// stream, too many commands sent ahead.
	Untracked int64
	// Cut are statements whose text was over MaxText; PreparedDropped
	// prepared statements whose text was not kept (over MaxPrepared);
	// UnknownStatements executions of statements prepared before the
	// proxy saw them (or not kept).
	Cut, PreparedDropped, UnknownStatements int64
}

type counters struct {
	conns, active, refused, statements, untracked, cut, preparedDropped, unknownStmt atomic.Int64
}

// Proxy is a running MySQL protocol pass-through.
type Proxy struct {
	opt    Options
	ln     net.Listener
	counts counters
	nextID atomic.Uint64
	mu     sync.Mutex
	open   map[net.Conn]bool
	wg     sync.WaitGroup
	closed atomic.Bool
	stop   func() bool // stops the watch of Start's context
}

// Start listens and serves until Close or ctx ends.
func Start(ctx context.Context, opt Options) (*Proxy, error) {
	if opt.Network == "" || opt.Address == "" {
		return nil, errors.New("mysqlproxy: no server address")
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = DefaultMaxConns
	}
	if opt.MaxText <= 0 {
		opt.MaxText = DefaultMaxText
	}
	if opt.MaxPrepared <= 0 {
		opt.MaxPrepared = DefaultMaxPrepared
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = DefaultDialTimeout
	}
	network, addr := "tcp", opt.Listen
	if p, ok := strings.CutPrefix(opt.Listen, "unix:"); ok {
		network, addr = "unix", p
	} else if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("mysqlproxy: listen: %w", err)
	}
	p := &Proxy{opt: opt, ln: ln, open: map[net.Conn]bool{}}
	if network == "unix" {
		os.Chmod(addr, 0o666) // an app running as another user connects
	}
	p.wg.Add(1)
	go p.serve()
	p.stop = context.AfterFunc(ctx, func() { p.Close() })
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// DSN returns dsn with its server replaced by the proxy: the DSN the app
// uses to connect through it.
func (p *Proxy) DSN(dsn string) (string, error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("the DSN: %w", err)
	}
	c.Net, c.Addr = p.ln.Addr().Network(), p.ln.Addr().String()
	return c.FormatDSN(), nil
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	c := &p.counts
	return Stats{Conns: c.conns.Load(), Active: c.active.Load(), Refused: c.refused.Load(), Statements: c.statements.Load(),
		Untracked: c.untracked.Load(), Cut: c.cut.Load(), PreparedDropped: c.preparedDropped.Load(), UnknownStatements: c.unknownStmt.Load()}
}

// Close stops listening, closes every proxied connection and waits for
// their goroutines. It is safe to call more than once.
func (p *Proxy) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	if p.stop != nil {
		p.stop()
	}
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.closed.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return
		}
		p.counts.conns.Add(1)
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			p.handle(c)
		}()
	}
}

// track adds or removes an open connection; false when the proxy is
// closing.
func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.open, c)
		return true
	}
	if p.closed.Load() {
		return false
	}
	p.open[c] = true
	return true
}

// refuse sends an ERR packet to a client and counts it.
func (p *Proxy) refuse(c net.Conn, seq byte, code uint16, msg string) {
	p.counts.refused.Add(1)
	pkt := errPacket(code, "HY000", "stacktune trace proxy: "+msg)
	hdr := []byte{byte(len(pkt)), byte(len(pkt) >> 8), byte(len(pkt) >> 16), seq}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.Write(append(hdr, pkt...))
}

// handle proxies one connection.
func (p *Proxy) handle(client net.Conn) {
	defer client.Close()
	active := p.counts.active.Add(1)
	defer p.counts.active.Add(-1)
	if active > int64(p.opt.MaxConns) {
		p.refuse(client, 0, 1040, fmt.Sprintf("too many connections (more than %d)", p.opt.MaxConns))
		return
	}
	d := net.Dialer{Timeout: p.opt.DialTimeout}
	server, err := d.Dial(p.opt.Network, p.opt.Address)
	if err != nil {
		p.refuse(client, 0, 2003, fmt.Sprintf("cannot reach the server %s: %v", p.opt.Address, err))
		return
	}
	defer server.Close()
	if !p.track(server, true) {
		return
	}
	defer p.track(server, false)
	cr, sr := bufio.NewReaderSize(client, bufSize), bufio.NewReaderSize(server, bufSize)
	cw, sw := bufio.NewWriterSize(client, bufSize), bufio.NewWriterSize(server, bufSize)

	// The greeting, without TLS and compression.
	g, seq, err := readWhole(sr)
	if err != nil {
		return
	}
	if first(g) == hdrERR { // the server refuses the connection itself
		writePacket(cw, seq, g)
		cw.Flush()
		return
	}
	gr, err := parseGreeting(g)
	if err != nil {
		p.refuse(client, seq, 1105, err.Error())
		return
	}
	rewriteGreeting(g, gr, p.opt.extraStrip)
	if writePacket(cw, seq, g) != nil || cw.Flush() != nil {
		return
	}
	// The client's handshake response.
	h, seq, err := readWhole(cr)
	if err != nil {
		return
	}
	hs, err := parseHandshake(h)
	if err != nil {
		p.refuse(client, seq+1, 1105, err.Error())
		return
	}
	if why := hs.refusal(); why != "" {
		p.refuse(client, seq+1, 1105, why)
		return
	}
	if writePacket(sw, seq, h) != nil || sw.Flush() != nil {
		return
	}
	s := newSession(p.nextID.Add(1), gr.connID, hs.caps&gr.caps, limits{maxText: p.opt.MaxText, maxPrepared: p.opt.MaxPrepared, maxPending: maxPending}, &p.counts)

	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serverToClient(s, sr, cw)
		client.Close()
		server.Close()
	}()
	p.clientToServer(s, cr, sw)
	client.Close()
	server.Close()
	<-done
}

// clientToServer forwards the client's packets, telling the session about
// each.
func (p *Proxy) clientToServer(s *session, r *bufio.Reader, w *bufio.Writer) {
	buf := make([]byte, p.opt.MaxText+1)
	for {
		n, seq, err := readHeader(r)
		if err != nil {
			return
		}
		now := time.Now()
		k := min(n, len(buf))
		if _, err := io.ReadFull(r, buf[:k]); err != nil {
			return
		}
		s.fromClient(n, buf[:k], now)
		if forward(w, r, n, seq, buf[:k]) != nil {
			return
		}
	}
}

// serverToClient forwards the server's packets, telling the session
// about each and reporting the statements they complete.
func (p *Proxy) serverToClient(s *session, r *bufio.Reader, w *bufio.Writer) {
	buf := make([]byte, serverPrefix)
	var sts []Statement
	for {
		n, seq, err := readHeader(r)
		if err != nil {
			return
		}
		k := min(n, len(buf))
		if _, err := io.ReadFull(r, buf[:k]); err != nil {
			return
		}
		sts = s.fromServer(n, buf[:k], time.Now(), sts[:0])
		// The response goes to the app first, then to OnStatement.
		if forward(w, r, n, seq, buf[:k]) != nil {
			return
		}
		for i := range sts {
			p.counts.statements.Add(1)
			if p.opt.OnStatement != nil {
				p.opt.OnStatement(&sts[i])
			}
		}
	}
}

// readHeader reads a packet header: its payload length and sequence id.
func readHeader(r *bufio.Reader) (int, byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, err
	}
	return int(h[0]) | int(h[1])<<8 | int(h[2])<<16, h[3], nil
}

// readWhole reads one packet of the handshake, bounded by maxHandshake.
func readWhole(r *bufio.Reader) ([]byte, byte, error) {
	n, seq, err := readHeader(r)
	if err != nil {
		return nil, 0, err
	}
	if n >= maxPayload || n > maxHandshake {
		return nil, 0, fmt.Errorf("%w: a handshake packet of %d bytes", errMalformed, n)
	}
	p := make([]byte, n)
	_, err = io.ReadFull(r, p)
	return p, seq, err
}

// writePacket writes a whole packet.
func writePacket(w *bufio.Writer, seq byte, p []byte) error {
	if _, err := w.Write([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}); err != nil {
		return err
	}
	_, err := w.Write(p)
	return err
}

// forward writes a packet whose first bytes were read into head and
// copies the rest of its payload, then flushes when nothing more is
// waiting to be read (so that packets that come together go together).
func forward(w *bufio.Writer, r *bufio.Reader, n int, seq byte, head []byte) error {
	if _, err := w.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}); err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	if rest := int64(n - len(head)); rest > 0 {
		if _, err := io.CopyN(w, r, rest); err != nil {
			return err
		}
	}
	if r.Buffered() == 0 {
		return w.Flush()
	}
	return nil
}
