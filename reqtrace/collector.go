package reqtrace

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/stacktune/stacktune/mysqlproxy"
)

// MaxTraceStatements bounds the statements a trace run keeps (about 50
// bytes each); later ones are counted as skipped.
const MaxTraceStatements = 1 << 20

// rawStmt is a statement as a source reads it.
type rawStmt struct {
	conn       uint64
	start, end time.Time
	text       []byte // nil for a command that runs no statement
	rowsSent   int64
	rowsEx     int64
	exKnown    bool
	cut        bool // the source cut the text (tags may be lost)
}

// traceStmt is a statement kept by a trace run.
type traceStmt struct {
	conn       uint64
	start, end int64 // unix nanoseconds
	class      int32 // -1: a command that runs no statement (prepare, ping): DB time only
	rowsSent   int64
	rowsEx     int64
	exKnown    bool
}

// collector keeps a trace run's statements: each is fingerprinted as it
// comes (its class interned), so what is kept per statement is small.
type collector struct {
	mu      sync.Mutex
	classes *classTable
	sts     []traceStmt
	dropped int64
	cut     int64
}

func newCollector() *collector { return &collector{classes: newClassTable()} }

func (c *collector) statement(s rawStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sts) >= MaxTraceStatements {
		c.dropped++
		return
	}
	ts := traceStmt{conn: s.conn, start: s.start.UnixNano(), end: s.end.UnixNano(), class: -1, rowsSent: s.rowsSent, rowsEx: s.rowsEx, exKnown: s.exKnown}
	if s.text != nil {
		ts.class = c.classes.of(s.text)
	}
	if s.cut {
		c.cut++
	}
	c.sts = append(c.sts, ts)
}

// Tap records the statements a mysqlproxy.Proxy reports, while a trace
// run is on: give Tap.Statement as the proxy's Options.OnStatement. Off,
// it costs one atomic load per statement.
type Tap struct {
	on    atomic.Bool
	mu    sync.Mutex
	col   *collector
	proxy *mysqlproxy.Proxy // Watch's
}

// Watch has the trace runs through t say what p refused or closed while
// they ran (connections past its cap, handshake and idle timeouts).
func (t *Tap) Watch(p *mysqlproxy.Proxy) {
	t.mu.Lock()
	t.proxy = p
	t.mu.Unlock()
}

// watched is Watch's proxy, nil when none.
func (t *Tap) watched() *mysqlproxy.Proxy {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proxy
}

// NewTap returns a Tap, off.
func NewTap() *Tap { return &Tap{} }

// Statement is the proxy's OnStatement.
func (t *Tap) Statement(s *mysqlproxy.Statement) {
	if !t.on.Load() {
		return
	}
	t.mu.Lock()
	col := t.col
	t.mu.Unlock()
	if col == nil {
		return
	}
	rs := rawStmt{conn: s.Conn, start: s.Start, end: s.End, rowsSent: s.RowsSent, cut: s.Cut}
	if s.Command == mysqlproxy.Query || s.Command == mysqlproxy.Execute {
		rs.text = s.Text
	}
	col.statement(rs)
}

// start begins a recording.
func (t *Tap) start() *collector {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.col = newCollector()
	t.on.Store(true)
	return t.col
}

// stop ends it, after a grace for the statements still being reported
// (the proxy reports a statement just after forwarding its response).
func (t *Tap) stop() {
	time.Sleep(tapGrace)
	t.on.Store(false)
	t.mu.Lock()
	t.col = nil
	t.mu.Unlock()
}

const tapGrace = 50 * time.Millisecond

// Record starts recording as a trace run does and returns the function
// that ends it, what was recorded dropped: for a caller that measures
// what recording costs (bench/tracebench).
func (t *Tap) Record() (stop func()) {
	t.start()
	return t.stop
}
