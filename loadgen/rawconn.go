package loadgen

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// rawConn is the reader under a user's bufio.Reader. It saves one
// syscall per request: the request is written from inside the read of the
// response. Reading right after a write almost always finds no response
// yet (an EAGAIN read, then a wait in the netpoller, then the real read);
// here the write happens in the RawConn.Read callback, after the runtime
// has reset the descriptor's read readiness, so the callback can go
// straight to waiting and read once the netpoller reports the response.
// Writing after the reset (not before) is what makes this safe: a
// response that arrives at once still sets the readiness the wait
// consumes. Deadlines and aborts work as for any net.Conn read.
type rawConn struct {
	conn *net.TCPConn
	rc   syscall.RawConn
	fn   func(fd uintptr) bool // rc.Read's callback, bound once (no allocation per read)

	pending []byte // request bytes to write before reading
	buf     []byte // the current Read's buffer
	n       int
	err     error
}

// errWouldBlock: the socket's send buffer is full; the rest of the
// request is written with an ordinary blocking Write.
var errWouldBlock = errors.New("write would block")

func newRawConn(c net.Conn) (*rawConn, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, errors.New("not a TCP connection")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawConn{conn: tc, rc: rc}
	r.fn = r.step
	return r, nil
}

// send queues req to be written by the next Read.
func (r *rawConn) send(req []byte) { r.pending = req }

// step is the RawConn.Read callback: true when the read is done (data,
// EOF or an error), false to wait for readability.
func (r *rawConn) step(fd uintptr) bool {
	for len(r.pending) > 0 {
		w, err := syscall.Write(int(fd), r.pending)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			r.err = errWouldBlock
			return true
		case err != nil:
			r.err = &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", err)}
			return true
		}
		r.pending = r.pending[w:]
		if len(r.pending) == 0 {
			return false // the response cannot be there yet: wait for it
		}
	}
	for {
		n, err := syscall.Read(int(fd), r.buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			r.err = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
		case n == 0:
			r.err = io.EOF
		}
		r.n = max(n, 0)
		return true
	}
}

// Read writes any pending request, then reads.
func (r *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.buf, r.n, r.err = p, 0, nil
	err := r.rc.Read(r.fn)
	r.buf = nil
	if err != nil {
		return 0, err // deadline exceeded (timeout or abort), or closed
	}
	if r.err == errWouldBlock {
		pending := r.pending
		r.pending = nil
		if _, err := r.conn.Write(pending); err != nil {
			return 0, err
		}
		return r.Read(p)
	}
	return r.n, r.err
}
