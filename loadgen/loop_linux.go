//go:build linux

package loadgen

import (
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// The closed model of a URL plan runs on event loops instead of one
// goroutine per connection: GOMAXPROCS loops, each owning its share of
// the connections (non-blocking sockets, level-triggered epoll), as wrk
// does. Per request that is a write, a read and a share of an epoll_wait,
// with no goroutine to wake: the netpoller's per-request wakeups and
// thread handoffs are what made the goroutine client cost more CPU per
// request than wrk. The loops follow the same rules as the goroutine
// users (ticket counting, warm-up, end of the duration, retry of a stale
// keep-alive connection, error kinds), share the response parser, and
// record into the same shards.

// loopsSupported says whether this platform has the event loops.
const loopsSupported = true

// maxLoopConns bounds the connections per loop (the epoll event's data
// field holds a 16-bit index).
const maxLoopConns = 1 << 16

// loopPoll is the longest epoll wait: how often a loop looks at the stop
// flag and the deadlines when nothing happens.
const loopPoll = 10 // ms

// Connection states.
const (
	lcIdle       = iota // no request in flight (about to send, or waiting to retry)
	lcConnecting        // non-blocking connect in progress (EPOLLOUT)
	lcWriting           // request partly written (EPOLLOUT)
	lcReading           // waiting for the response (EPOLLIN)
	lcDone              // no more requests for this connection
)

type loopConn struct {
	fd       int // -1: no connection
	gen      uint16
	state    uint8
	reused   bool // the connection carried a complete response before
	retried  bool // this request was already retried on a new connection
	measured bool // the request started in the measured phase
	wantOut  bool // registered for EPOLLOUT
	start    time.Time
	deadline time.Time
	wpos     int
	buf      []byte // bytes [r, w) are not parsed yet
	r, w     int
	parser   respParser
}

// loop is one event loop and its connections.
type loop struct {
	r      *runner
	p      *urlWorkload
	sh     *shard
	epfd   int
	conns  []loopConn
	events []syscall.EpollEvent
	// pending holds the connections to start their next request once the
	// events of this turn are handled: requests are written in a burst
	// after the responses are read, as wrk's EPOLLOUT round does, so the
	// server wakes once for several requests rather than once for each.
	pending []int
	sa      syscall.Sockaddr
	family  int
	addrErr error
	timeout time.Duration
	active  int
	last    time.Time // last measured completion
	scanAt  time.Time // next deadline scan
}

// loopCount is the number of event loops for GOMAXPROCS procs: one fewer
// than the procs, but at least one. A loop blocks in epoll_wait as a
// system call; while every P is held that way, the runtime's sysmon keeps
// retaking the Ps from the blocked threads and handing them off (futex
// wake-ups, thread switches, and sysmon itself polling every 20µs). With
// one P left idle it does not, and the idle P runs the timers and
// Progress. On 2 cores this measured 14 µs of client CPU per request with
// one loop against 20 µs with two (nginx on loopback, bench/loadbench).
func loopCount(procs int) int { return max(1, procs-1) }

// loopWorkers returns the workers of the event-loop engine, or ok false
// when the plan cannot use it.
func (r *runner) loopWorkers(p *urlWorkload) (workers []func() time.Time, cleanup func(), ok bool) {
	n := min(loopCount(runtime.GOMAXPROCS(0)), r.opt.Connections)
	if (r.opt.Connections+n-1)/n > maxLoopConns {
		return nil, nil, false
	}
	timeout := r.opt.Timeout
	if p.timeout > 0 {
		timeout = min(timeout, p.timeout)
	}
	sa, family, addrErr := loopAddr(r, p)
	loops := make([]*loop, 0, n)
	cleanup = func() {
		for _, l := range loops {
			l.closeAll()
		}
	}
	for j := 0; j < n; j++ {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			cleanup()
			return nil, nil, false
		}
		k := (r.opt.Connections - j + n - 1) / n
		l := &loop{
			r: r, p: p, sh: r.shards[j%len(r.shards)], epfd: epfd,
			conns:  make([]loopConn, k),
			events: make([]syscall.EpollEvent, min(k, 256)),
			sa:     sa, family: family, addrErr: addrErr, timeout: timeout,
			active: k,
		}
		for i := range l.conns {
			l.conns[i].fd = -1
			l.conns[i].buf = make([]byte, readBufferSize)
		}
		loops = append(loops, l)
		workers = append(workers, l.run)
	}
	return workers, cleanup, true
}

// loopAddr resolves the plan's address once for the loops.
func loopAddr(r *runner, p *urlWorkload) (syscall.Sockaddr, int, error) {
	addr, err := p.addr(r.ctx)
	if err != nil {
		return nil, 0, err
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, 0, err
	}
	if ap.Addr().Is4() || ap.Addr().Is4In6() {
		return &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}, syscall.AF_INET, nil
	}
	sa := &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	if z := ap.Addr().Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		} else if n, err := strconv.Atoi(z); err == nil {
			sa.ZoneId = uint32(n)
		}
	}
	return sa, syscall.AF_INET6, nil
}

// run drives the loop's connections until the run stops or every
// connection is done, and returns the time of its last measured
// completion.
func (l *loop) run() time.Time {
	defer l.closeAll()
	for i := range l.conns {
		l.next(i)
	}
	for l.active > 0 && !l.r.stopped.Load() {
		wait := loopPoll
		if len(l.pending) > 0 {
			wait = 0
		}
		n, err := syscall.EpollWait(l.epfd, l.events, wait)
		if err != nil && err != syscall.EINTR {
			break // EBADF or EINVAL: the loop cannot go on
		}
		for _, ev := range l.events[:max(n, 0)] {
			i, gen := int(uint32(ev.Fd)&0xffff), uint16(uint32(ev.Fd)>>16)
			c := &l.conns[i]
			if c.gen != gen || c.fd < 0 {
				continue // an event for a connection closed meanwhile
			}
			switch c.state {
			case lcConnecting:
				l.connected(i)
			case lcWriting:
				l.write(i)
			case lcReading:
				l.read(i)
			}
		}
		if len(l.pending) > 0 {
			pending := l.pending
			l.pending = l.pending[len(l.pending):]
			for _, i := range pending {
				l.next(i)
			}
			if len(l.pending) == 0 {
				l.pending = pending[:0]
			}
		}
		if now := time.Now(); now.After(l.scanAt) {
			l.scanAt = now.Add(loopPoll * time.Millisecond)
			l.expire(now)
		}
	}
	// The run stopped (or the loop failed): the requests still out are in
	// flight at the end.
	for i := range l.conns {
		switch l.conns[i].state {
		case lcConnecting, lcWriting, lcReading:
			l.sh.addInFlight(l.conns[i].start)
			l.finish(i)
		}
	}
	return l.last
}

// next starts connection i's next request, or finishes the connection
// when a bound is reached.
func (l *loop) next(i int) {
	c := &l.conns[i]
	if l.r.stopped.Load() {
		l.finish(i)
		return
	}
	now := time.Now()
	if l.r.pastEnd(now) {
		l.finish(i)
		return
	}
	c.measured = !now.Before(l.r.mstart)
	if c.measured && l.r.opt.Requests > 0 && l.r.next.Add(1) > l.r.opt.Requests {
		l.finish(i)
		return
	}
	c.start, c.deadline, c.retried = now, now.Add(l.timeout), false
	l.send(i)
}

// send dials if needed and writes the request.
func (l *loop) send(i int) {
	c := &l.conns[i]
	c.wpos = 0
	c.parser.reset(l.p.head)
	if c.fd < 0 {
		if err := l.dial(i); err != nil {
			l.fail(i, err)
			return
		}
		if c.state == lcConnecting {
			return
		}
	}
	l.write(i)
}

// dial opens a non-blocking connection for connection i.
func (l *loop) dial(i int) error {
	c := &l.conns[i]
	if l.addrErr != nil {
		return &dialError{l.addrErr}
	}
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return &dialError{os.NewSyscallError("socket", err)}
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	err = syscall.Connect(fd, l.sa)
	events := uint32(syscall.EPOLLIN)
	switch err {
	case nil:
		c.state = lcWriting
	case syscall.EINPROGRESS:
		c.state = lcConnecting
		events = syscall.EPOLLOUT
	default:
		syscall.Close(fd)
		return &dialError{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	c.gen++
	c.fd, c.reused, c.wantOut, c.r, c.w = fd, false, events == syscall.EPOLLOUT, 0, 0
	ev := syscall.EpollEvent{Events: events, Fd: int32(uint32(c.gen)<<16 | uint32(i))}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.closeConn(i)
		return &dialError{os.NewSyscallError("epoll_ctl", err)}
	}
	return nil
}

// interest changes connection i's epoll events.
func (l *loop) interest(i int, out bool) error {
	c := &l.conns[i]
	if c.wantOut == out {
		return nil
	}
	events := uint32(syscall.EPOLLIN)
	if out {
		events = syscall.EPOLLOUT
	}
	ev := syscall.EpollEvent{Events: events, Fd: int32(uint32(c.gen)<<16 | uint32(i))}
	c.wantOut = out
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// connected completes a non-blocking connect.
func (l *loop) connected(i int) {
	c := &l.conns[i]
	errno, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	if err == nil && errno != 0 {
		err = syscall.Errno(errno)
	}
	if err != nil {
		l.fail(i, &dialError{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}})
		return
	}
	c.state = lcWriting
	l.write(i)
}

// write writes what is left of the request, then waits for the response.
func (l *loop) write(i int) {
	c := &l.conns[i]
	req := l.p.req
	for c.wpos < len(req) {
		n, err := syscall.Write(c.fd, req[c.wpos:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			c.state = lcWriting
			if err := l.interest(i, true); err != nil {
				l.fail(i, err)
			}
			return
		case err != nil:
			l.fail(i, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", err)})
			return
		}
		c.wpos += n
	}
	if err := l.interest(i, false); err != nil {
		l.fail(i, err)
		return
	}
	c.state = lcReading
}

// read reads and parses what has arrived of the response.
func (l *loop) read(i int) {
	c := &l.conns[i]
	for {
		switch {
		case c.r == c.w:
			c.r, c.w = 0, 0
		case c.w == len(c.buf):
			c.w = copy(c.buf, c.buf[c.r:c.w]) // an incomplete line: make room
			c.r = 0
		}
		space := len(c.buf) - c.w
		n, err := syscall.Read(c.fd, c.buf[c.w:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return
		case err != nil:
			l.fail(i, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)})
			return
		case n == 0:
			if err := c.parser.eof(c.buf[c.r:c.w]); err != nil {
				l.fail(i, err)
			} else {
				l.complete(i)
			}
			return
		}
		c.w += n
		used, perr := c.parser.feed(c.buf[c.r:c.w], c.r == 0 && c.w == len(c.buf))
		c.r += used
		if perr != nil {
			l.fail(i, perr)
			return
		}
		if c.parser.done() {
			l.complete(i)
			return
		}
		if n < space {
			return // drained: level-triggered epoll reports the rest
		}
	}
}

// complete records a response; the connection's next request is sent
// after this turn's events.
func (l *loop) complete(i int) {
	c := &l.conns[i]
	now := time.Now()
	p := &c.parser
	s := Sample{Latency: now.Sub(c.start), Status: p.status, Bytes: p.n}
	switch {
	case s.Latency > l.timeout:
		s.Err, s.Detail = ErrTimeout, "response took longer than the timeout "+l.timeout.String()
	case p.status >= 400:
		s.Err, s.Detail = ErrStatus, "HTTP status "+strconv.Itoa(p.status)
	}
	keep := p.keep && l.p.keepAlive
	if keep && c.r < c.w && s.Err == OK {
		s.Err, s.Detail = ErrProtocol, strconv.Itoa(c.w-c.r)+" unexpected bytes after the response"
		keep = false
	}
	if keep {
		c.reused = true
		c.state = lcIdle
	} else {
		l.closeConn(i)
	}
	if l.record(i, &s, now) {
		l.pending = append(l.pending, i)
	}
}

// fail handles a failed request: a reused keep-alive connection that the
// server closed before answering is retried once on a new connection;
// anything else is recorded, and the connection goes on with its next
// request after this turn's events.
func (l *loop) fail(i int, err error) {
	c := &l.conns[i]
	retry := c.reused && !c.retried && c.parser.n == 0 && retryable(err)
	l.closeConn(i)
	if retry && !l.r.stopped.Load() {
		c.retried = true
		l.send(i)
		return
	}
	now := time.Now()
	s := Sample{Latency: now.Sub(c.start)}
	s.Err, s.Detail = classify(err)
	if l.record(i, &s, now) {
		l.pending = append(l.pending, i)
	}
}

// record counts a sample; false when it completed after the end or
// after the run stopped (discarded and counted as in flight at the end,
// and the connection finished).
func (l *loop) record(i int, s *Sample, now time.Time) bool {
	if l.r.late(now) {
		l.sh.addInFlight(l.conns[i].start)
		l.finish(i)
		return false
	}
	if l.conns[i].measured {
		l.sh.record(s)
		l.last = now
	} else {
		l.sh.recordWarm()
	}
	return true
}

// expire fails the requests past their deadline.
func (l *loop) expire(now time.Time) {
	for i := range l.conns {
		c := &l.conns[i]
		if c.fd < 0 || c.state == lcIdle || c.state == lcDone || now.Before(c.deadline) {
			continue
		}
		if c.state == lcConnecting {
			l.fail(i, &dialError{&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}})
		} else {
			l.fail(i, os.ErrDeadlineExceeded)
		}
	}
}

// closeConn closes connection i's socket (which leaves the epoll set);
// events already fetched for it are ignored by generation.
func (l *loop) closeConn(i int) {
	c := &l.conns[i]
	if c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
		c.gen++
	}
	if c.state != lcDone {
		c.state = lcIdle
	}
}

// finish closes connection i for good.
func (l *loop) finish(i int) {
	l.closeConn(i)
	if l.conns[i].state != lcDone {
		l.conns[i].state = lcDone
		l.active--
	}
}

// closeAll closes every socket and the epoll instance (idempotent).
func (l *loop) closeAll() {
	for i := range l.conns {
		l.closeConn(i)
	}
	if l.epfd >= 0 {
		syscall.Close(l.epfd)
		l.epfd = -1
	}
}
