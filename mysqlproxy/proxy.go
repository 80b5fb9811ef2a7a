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
	// DefaultMaxConns is well under a server's default max_connections
	// (151), so that a trace run never takes the connections the server's
	// other clients (and its administrators) need.
	DefaultMaxConns = 64
	// DefaultMaxHandshakes bounds the clients in their handshake, which
	// cost the server nothing (the proxy greets them itself).
	DefaultMaxHandshakes = 1024
	// DefaultHandshakeTimeout is how long a client has, from its
	// connection, to finish authenticating.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultIdleTimeout is what a trace run gives Options.IdleTimeout:
	// longer than any pause of an app's pool in a trace run.
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxText     = 16 << 10
	DefaultMaxPrepared = 256 << 10
	DefaultDialTimeout = 10 * time.Second
	// ErrConCount is the server's ER_CON_COUNT_ERROR ("Too many
	// connections"), which the proxy sends past its bounds.
	ErrConCount = 1040
	// maxPending bounds the commands a connection may send ahead of
	// their responses (clients send one at a time).
	maxPending = 64
	// maxHandshake bounds the server's greeting; maxClientHandshake the
	// client's handshake response (connection attributes are at most
	// 64 KiB), read as it arrives.
	maxHandshake       = 1 << 20
	maxClientHandshake = 80 << 10
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
	// MaxConns bounds the connections the proxy opens to the server at
	// once (default DefaultMaxConns; MaxConnsFor sizes it from what the
	// server has free): a client past it gets error 1040 (Too many
	// connections) in answer to its handshake, and nothing is opened for
	// it. The proxy greets clients itself and opens a client's server
	// connection only once its handshake response has come, so a socket
	// that never authenticates costs the server nothing.
	MaxConns int
	// MaxHandshakes bounds the clients in their handshake at once
	// (default DefaultMaxHandshakes): one past it gets error 1040 instead
	// of a greeting.
	MaxHandshakes int
	// HandshakeTimeout bounds the time from a client's connection to the
	// end of its authentication (default DefaultHandshakeTimeout): a
	// client that sends nothing, or part of a handshake, is closed then.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a client that has sent nothing for this long
	// between commands (none of its commands awaiting a response, and
	// nothing from the server meanwhile); 0 is no idle timeout.
	IdleTimeout time.Duration
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
	// those turned away (over MaxConns or MaxHandshakes, the server
	// unreachable, TLS or compression asked for, a handshake the proxy
	// cannot read).
	Conns, Active, Refused int64
	// OverCap are the refused connections past MaxConns or MaxHandshakes
	// (error 1040); Upstream the connections to the server open now.
	OverCap, Upstream int64
	// HandshakeTimeouts are clients closed because they had not
	// authenticated within HandshakeTimeout; IdleClosed clients closed
	// after IdleTimeout without a command.
	HandshakeTimeouts, IdleClosed int64
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
	overCap, upstream, handshaking, handshakeTimeouts, idleClosed                    atomic.Int64
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

	// greetMu guards greet, the server's last greeting (rewritten), which
	// the proxy sends clients as its own before it connects for them.
	greetMu sync.Mutex
	greet   []byte
	// greetErr is the last failure to read a greeting, at greetErrAt:
	// the clients within greetRetry of it get it without another try, so
	// a flood of clients of an unreachable server is answered at once.
	greetErr   error
	greetErrAt time.Time
}

// greetRetry is how long a failure to read the server's greeting is
// given to the next clients.
const greetRetry = time.Second

// Start listens and serves until Close or ctx ends.
func Start(ctx context.Context, opt Options) (*Proxy, error) {
	if opt.Network == "" || opt.Address == "" {
		return nil, errors.New("mysqlproxy: no server address")
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = DefaultMaxConns
	}
	if opt.MaxHandshakes <= 0 {
		opt.MaxHandshakes = DefaultMaxHandshakes
	}
	if opt.HandshakeTimeout <= 0 {
		opt.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opt.IdleTimeout < 0 {
		opt.IdleTimeout = 0
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

// Options are the proxy's options, defaults filled in.
func (p *Proxy) Options() Options { return p.opt }

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
		OverCap: c.overCap.Load(), Upstream: c.upstream.Load(), HandshakeTimeouts: c.handshakeTimeouts.Load(), IdleClosed: c.idleClosed.Load(),
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
		if p.counts.handshaking.Add(1) > int64(p.opt.MaxHandshakes) {
			p.counts.handshaking.Add(-1)
			p.counts.overCap.Add(1)
			// A new socket's buffer takes the packet without blocking.
			p.refuse(c, 0, ErrConCount, fmt.Sprintf("Too many connections: more than %d clients in their handshake", p.opt.MaxHandshakes))
			c.Close()
			continue
		}
		if !p.track(c, true) {
			p.counts.handshaking.Add(-1)
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

// greeting returns the greeting to send a client: the server's last one
// (read once from a connection closed at once when the proxy has none
// yet), with the proxy's connection number and its own scramble. A
// server that answers with an ERR packet gets it returned with ok false.
func (p *Proxy) greeting(conn uint64, deadline time.Time) (g []byte, ok bool, err error) {
	p.greetMu.Lock()
	defer p.greetMu.Unlock()
	if p.greet == nil {
		if p.greetErr != nil && time.Since(p.greetErrAt) < greetRetry {
			return nil, false, p.greetErr
		}
		g, err := p.probe(deadline)
		if err != nil {
			p.greetErr, p.greetErrAt = err, time.Now()
			return nil, false, err
		}
		if first(g) == hdrERR {
			return g, false, nil
		}
		gr, err := parseGreeting(g)
		if err != nil {
			return nil, false, err
		}
		rewriteGreeting(g, gr, p.opt.extraStrip)
		p.greet = g
	}
	g = append([]byte(nil), p.greet...)
	ownGreeting(g, uint32(conn))
	return g, true, nil
}

// probe reads the server's greeting from a connection it then closes,
// by deadline and within DialTimeout.
func (p *Proxy) probe(deadline time.Time) ([]byte, error) {
	if d := time.Now().Add(p.opt.DialTimeout); d.Before(deadline) {
		deadline = d
	}
	d := net.Dialer{Deadline: deadline}
	c, err := d.Dial(p.opt.Network, p.opt.Address)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	g, _, err := readWhole(bufio.NewReaderSize(c, 512))
	if err != nil {
		return nil, fmt.Errorf("reading its greeting: %w", err)
	}
	return g, nil
}

// remember keeps the server's latest greeting (rewritten) for the next
// clients.
func (p *Proxy) remember(g []byte) {
	p.greetMu.Lock()
	p.greet, p.greetErr = append(p.greet[:0:0], g...), nil
	p.greetMu.Unlock()
}

// handle proxies one connection: it greets the client itself, reads its
// handshake response within HandshakeTimeout, and only then, under
// MaxConns, connects to the server; the server's auth switch request
// (see deferredPlugin) has the client authenticate with the server.
func (p *Proxy) handle(client net.Conn) {
	defer client.Close()
	p.counts.active.Add(1)
	defer p.counts.active.Add(-1)
	handshaking := true
	defer func() {
		if handshaking {
			p.counts.handshaking.Add(-1)
		}
	}()
	deadline := time.Now().Add(p.opt.HandshakeTimeout)
	client.SetDeadline(deadline)
	conn := p.nextID.Add(1)
	g, ok, err := p.greeting(conn, deadline)
	if err != nil {
		p.refuse(client, 0, 2003, fmt.Sprintf("cannot reach the server %s: %v", p.opt.Address, err))
		return
	}
	if !ok { // the server refuses connections: the client gets its answer
		writeRaw(client, 0, g)
		return
	}
	if writeRaw(client, 0, g) != nil {
		return
	}
	cr := bufio.NewReaderSize(client, bufSize)
	h, seq, err := readClientHandshake(cr)
	if err != nil {
		if isTimeout(err) {
			p.counts.handshakeTimeouts.Add(1)
		}
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
	if h, err = deferAuth(h, hs.caps); err != nil {
		p.refuse(client, seq+1, 1105, err.Error())
		return
	}
	if p.counts.upstream.Add(1) > int64(p.opt.MaxConns) {
		p.counts.upstream.Add(-1)
		p.counts.overCap.Add(1)
		p.refuse(client, seq+1, ErrConCount, fmt.Sprintf("Too many connections: the proxy opens at most %d to the server", p.opt.MaxConns))
		return
	}
	defer p.counts.upstream.Add(-1)
	d := net.Dialer{Timeout: p.opt.DialTimeout}
	server, err := d.Dial(p.opt.Network, p.opt.Address)
	if err != nil {
		p.refuse(client, seq+1, 2003, fmt.Sprintf("cannot reach the server %s: %v", p.opt.Address, err))
		return
	}
	defer server.Close()
	if !p.track(server, true) {
		return
	}
	defer p.track(server, false)
	server.SetDeadline(deadline)
	sr := bufio.NewReaderSize(server, bufSize)
	cw, sw := bufio.NewWriterSize(client, bufSize), bufio.NewWriterSize(server, bufSize)

	// The server's greeting stays here: the client has the proxy's.
	sg, _, err := readWhole(sr)
	if err != nil {
		return
	}
	if first(sg) == hdrERR { // the server refuses the connection itself
		writeRaw(client, seq+1, sg)
		return
	}
	gr, err := parseGreeting(sg)
	if err != nil {
		p.refuse(client, seq+1, 1105, err.Error())
		return
	}
	rewriteGreeting(sg, gr, p.opt.extraStrip)
	p.remember(sg)
	if writePacket(sw, seq, h) != nil || sw.Flush() != nil {
		return
	}
	server.SetDeadline(time.Time{})
	client.SetWriteDeadline(time.Time{})
	// The client's read deadline stays until it has authenticated.
	handshaking = false
	p.counts.handshaking.Add(-1)
	s := newSession(conn, gr.connID, hs.caps&gr.caps, limits{maxText: p.opt.MaxText, maxPrepared: p.opt.MaxPrepared, maxPending: maxPending}, &p.counts)

	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serverToClient(s, sr, cw)
		client.Close()
		server.Close()
	}()
	p.clientToServer(s, client, deadline, cr, sw)
	client.Close()
	server.Close()
	<-done
}

// writeRaw writes one packet straight to c, bounded in time.
func writeRaw(c net.Conn, seq byte, p []byte) error {
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Write(append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}, p...))
	return err
}

// readClientHandshake reads the client's handshake response, bounded by
// maxClientHandshake, its memory growing with what arrives.
func readClientHandshake(r *bufio.Reader) ([]byte, byte, error) {
	n, seq, err := readHeader(r)
	if err != nil {
		return nil, 0, err
	}
	if n > maxClientHandshake {
		return nil, 0, fmt.Errorf("%w: a handshake response of %d bytes", errMalformed, n)
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err == nil && len(b) < n {
		err = io.ErrUnexpectedEOF
	}
	return b, seq, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// waitClient waits for the client's next packet. Until the client has
// authenticated, the handshake's deadline holds (a client past it is
// counted and closed); after, with an IdleTimeout, a client that sends
// nothing for that long while no command of its awaits a response and
// the server has sent nothing is counted and closed.
func (p *Proxy) waitClient(s *session, c net.Conn, handshake time.Time, r *bufio.Reader) error {
	for {
		authed := s.authenticated()
		switch {
		case !authed:
			c.SetReadDeadline(handshake)
		case p.opt.IdleTimeout > 0:
			c.SetReadDeadline(time.Now().Add(p.opt.IdleTimeout))
		default:
			c.SetReadDeadline(time.Time{})
		}
		_, err := r.Peek(1)
		if err == nil || !isTimeout(err) {
			return err
		}
		switch {
		case !authed && !s.authenticated():
			p.counts.handshakeTimeouts.Add(1)
			return err
		case !authed: // authenticated meanwhile: now the idle timeout holds
		case s.busy(p.opt.IdleTimeout):
		default:
			p.counts.idleClosed.Add(1)
			return err
		}
	}
}

// clientToServer forwards the client's packets, telling the session about
// each.
func (p *Proxy) clientToServer(s *session, c net.Conn, handshake time.Time, r *bufio.Reader, w *bufio.Writer) {
	buf := make([]byte, p.opt.MaxText+1)
	for {
		if r.Buffered() == 0 && p.waitClient(s, c, handshake, r) != nil {
			return
		}
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
		now := time.Now()
		s.lastServer.Store(now.UnixNano())
		sts = s.fromServer(n, buf[:k], now, sts[:0])
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
