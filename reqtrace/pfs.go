package reqtrace

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// The statements the performance_schema history reader runs.
const (
	qPFSOn        = "SELECT @@performance_schema"
	qConsumers    = "SELECT NAME, ENABLED FROM performance_schema.setup_consumers WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'events_statements_current', 'events_statements_history_long')"
	qEnable       = "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = ?"
	qDisable      = "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = ?"
	qOwnThread    = "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()"
	qCalibrate    = "SELECT TIMER_START FROM performance_schema.events_statements_current WHERE THREAD_ID = ?"
	qHistoryEnd   = "SELECT IFNULL(MAX(TIMER_END), 0), IFNULL(MIN(TIMER_END), 0) FROM performance_schema.events_statements_history_long"
	qHistorySince = "SELECT THREAD_ID, EVENT_ID, EVENT_NAME, TIMER_START, TIMER_END, SQL_TEXT, ROWS_SENT, ROWS_EXAMINED " +
		"FROM performance_schema.events_statements_history_long WHERE TIMER_END >= ? AND THREAD_ID <> ? AND NESTING_EVENT_ID IS NULL"
	qTextLength = "SELECT @@performance_schema_max_sql_text_length"
)

// pfsPoll is how often the history is read during a run: its ring holds
// performance_schema_events_statements_history_long_size statements
// (1000 or 10000 by default), so it is read often.
const pfsPoll = 50 * time.Millisecond

// pfsMargin re-reads the history this far back (in the server's timer)
// at each poll: a statement that ends just before another can reach the
// history just after it.
const pfsMargin = uint64(500 * time.Millisecond / time.Nanosecond * 1000) // picoseconds

// pfsHistory reads performance_schema.events_statements_history_long
// during a run (see the package documentation).
type pfsHistory struct {
	conn     *sql.Conn
	own      uint64
	offset   int64 // wall nanoseconds = offset + timer picoseconds / 1000
	slack    time.Duration
	lastEnd  uint64
	seen     map[[2]uint64]uint64 // rows passed on: their TIMER_END
	pending  map[[2]uint64]pfsRow // rows read once (see poll)
	enabled  []string             // the consumers it turned on
	sink     func(rawStmt)
	textMax  int
	noText   int64
	lostRuns int64
	polls    int64
	mu       sync.Mutex
	stopPoll chan struct{}
	done     chan struct{}
	pollErr  error
}

// ErrPFSOff is returned when performance_schema is off: it is turned on
// only at the server's start (performance_schema=ON in my.cnf).
var ErrPFSOff = errors.New("performance_schema is off: it can only be turned on at the server's start (performance_schema=ON in my.cnf); use the proxy instead (the app's DSN pointed at it)")

// startPFS checks performance_schema, turns on the consumers the history
// needs (saying so through say, with the statements that turn them off),
// calibrates the server's timer against this host's clock and starts
// reading.
func startPFS(ctx context.Context, db *sql.DB, sink func(rawStmt), say func(string)) (_ *pfsHistory, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	h := &pfsHistory{conn: conn, seen: map[[2]uint64]uint64{}, pending: map[[2]uint64]pfsRow{}, sink: sink}
	defer func() {
		if err != nil {
			h.restore()
			conn.Close()
		}
	}()
	var on string
	if err := conn.QueryRowContext(ctx, qPFSOn).Scan(&on); err != nil {
		return nil, fmt.Errorf("performance_schema: %w", err)
	}
	if on != "1" && !strings.EqualFold(on, "ON") {
		return nil, ErrPFSOff
	}
	rows, err := conn.QueryContext(ctx, qConsumers)
	if err != nil {
		return nil, fmt.Errorf("performance_schema consumers: %w", err)
	}
	var off []string
	found := 0
	for rows.Next() {
		var name, enabled string
		if err := rows.Scan(&name, &enabled); err != nil {
			rows.Close()
			return nil, err
		}
		found++
		if !strings.EqualFold(enabled, "YES") {
			off = append(off, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if found < 4 {
		return nil, errors.New("performance_schema has no events_statements_history_long consumer on this server")
	}
	if len(off) > 0 {
		var undo []string
		for _, name := range off {
			undo = append(undo, fmt.Sprintf("UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = '%s';", name))
		}
		say(fmt.Sprintf("turning on the performance_schema consumers %s for the run (if stacktune is killed before it turns them off, run: %s)", strings.Join(off, ", "), strings.Join(undo, " ")))
		for _, name := range off {
			if _, err := conn.ExecContext(ctx, qEnable, name); err != nil {
				return nil, fmt.Errorf("turning on the consumer %s: %w", name, err)
			}
			h.enabled = append(h.enabled, name)
		}
	}
	if err := conn.QueryRowContext(ctx, qOwnThread).Scan(&h.own); err != nil {
		return nil, fmt.Errorf("performance_schema threads: %w", err)
	}
	_ = conn.QueryRowContext(ctx, qTextLength).Scan(&h.textMax)
	if err := h.calibrate(ctx); err != nil {
		return nil, err
	}
	var lo uint64
	if err := conn.QueryRowContext(ctx, qHistoryEnd).Scan(&h.lastEnd, &lo); err != nil {
		return nil, fmt.Errorf("performance_schema history: %w", err)
	}
	h.stopPoll, h.done = make(chan struct{}), make(chan struct{})
	go h.loop(ctx)
	return h, nil
}

// calibrate ties the server's statement timer to this host's clock: the
// TIMER_START of the statement that reads it lies between the times the
// query was sent and answered. Three tries, the tightest kept.
func (h *pfsHistory) calibrate(ctx context.Context) error {
	best := time.Duration(-1)
	for range 3 {
		t0 := time.Now()
		var ts uint64
		if err := h.conn.QueryRowContext(ctx, qCalibrate, h.own).Scan(&ts); err != nil {
			return fmt.Errorf("calibrating performance_schema's timer: %w", err)
		}
		rtt := time.Since(t0)
		if best < 0 || rtt < best {
			best = rtt
			h.offset = t0.UnixNano() + int64(rtt/2) - int64(ts/1000)
		}
	}
	h.slack = best/2 + 100*time.Microsecond
	return nil
}

func (h *pfsHistory) loop(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(pfsPoll)
	defer t.Stop()
	for {
		select {
		case <-h.stopPoll:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if err := h.poll(ctx); err != nil {
				h.mu.Lock()
				h.pollErr = err
				h.mu.Unlock()
				return
			}
		}
	}
}

// poll reads the statements that ended since the last poll. A row is
// passed on only once a second read returns it unchanged: the server
// copies a finished statement into the history without a lock, so a read
// can catch a row half written (its text or times not yet there), and the
// window each read re-reads (pfsMargin, many polls long) gives every row
// a second read.
func (h *pfsHistory) poll(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polls++
	var hi, lo uint64
	if err := h.conn.QueryRowContext(ctx, qHistoryEnd).Scan(&hi, &lo); err != nil {
		return err
	}
	if lo > h.lastEnd && h.lastEnd > 0 {
		h.lostRuns++ // the ring went round since the last read
	}
	since := uint64(0)
	if h.lastEnd > pfsMargin {
		since = h.lastEnd - pfsMargin
	}
	rows, err := h.conn.QueryContext(ctx, qHistorySince, since, h.own)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r pfsRow
		var text sql.RawBytes
		if err := rows.Scan(&r.thread, &r.event, &r.name, &r.start, &r.end, &text, &r.sent, &r.examined); err != nil {
			return err
		}
		r.text, r.hasText = text, text != nil // valid until the next Scan: take copies what it keeps
		h.take(r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	h.expire()
	return nil
}

// take handles a row as one read returned it: a row already passed on
// is skipped, a new or changed one is kept until a later read agrees,
// and one that agrees is passed on (the kept copy). r.text may be the
// driver's buffer: only a row kept is copied, so the rows every poll
// re-reads cost no allocation.
func (h *pfsHistory) take(r pfsRow) {
	k := [2]uint64{r.thread, r.event}
	if _, ok := h.seen[k]; ok {
		return
	}
	p, ok := h.pending[k]
	if !ok || !p.same(r) {
		r.text = bytes.Clone(r.text)
		r.readAt = h.lastEnd
		h.pending[k] = r
		return
	}
	h.accept(k, p)
}

// expire forgets what is past the margin; a row read once that no later
// read returned (it left the window between two reads) is taken as read.
// That is judged by when it was read, not by its TIMER_END, which a
// half-written row may not have yet.
func (h *pfsHistory) expire() {
	for k, r := range h.pending {
		if r.readAt+2*pfsMargin < h.lastEnd {
			h.accept(k, r)
		}
	}
	for k, end := range h.seen {
		if end+2*pfsMargin < h.lastEnd {
			delete(h.seen, k)
		}
	}
}

// flush passes on every row still waiting for a second read, in the
// order they ended (the last reads are over).
func (h *pfsHistory) flush() {
	for _, k := range slices.SortedFunc(maps.Keys(h.pending), func(a, b [2]uint64) int {
		return cmp.Or(cmp.Compare(h.pending[a].end, h.pending[b].end), cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		h.accept(k, h.pending[k])
	}
}

// pfsRow is a row of the history as one read returned it.
type pfsRow struct {
	thread, event, start, end uint64
	name                      string
	text                      []byte
	hasText                   bool // SQL_TEXT was not NULL
	sent, examined            int64
	readAt                    uint64 // the reader's lastEnd when this version was read
}

func (r pfsRow) same(o pfsRow) bool {
	return r.start == o.start && r.end == o.end && r.name == o.name && r.hasText == o.hasText &&
		r.sent == o.sent && r.examined == o.examined && bytes.Equal(r.text, o.text)
}

// accept passes a row on to the sink, once.
func (h *pfsHistory) accept(k [2]uint64, r pfsRow) {
	delete(h.pending, k)
	h.seen[k] = r.end
	if r.end > h.lastEnd {
		h.lastEnd = r.end
	}
	if strings.HasSuffix(r.name, "/Quit") || strings.HasSuffix(r.name, "/Sleep") {
		return
	}
	rs := rawStmt{conn: r.thread, start: time.Unix(0, h.offset+int64(r.start/1000)), end: time.Unix(0, h.offset+int64(r.end/1000)),
		rowsSent: r.sent, rowsEx: r.examined, exKnown: true}
	switch {
	case r.hasText:
		rs.text = r.text
		rs.cut = h.textMax > 0 && len(r.text) >= h.textMax
	case strings.HasSuffix(r.name, "/Execute"):
		h.noText++
	}
	h.sink(rs)
}

// stop reads the history a last time, turns off the consumers it turned
// on and closes its connection.
func (h *pfsHistory) stop(ctx context.Context) error {
	close(h.stopPoll)
	<-h.done
	h.mu.Lock()
	err := h.pollErr
	h.mu.Unlock()
	for range 2 { // the second read confirms the rows the first saw first
		if err == nil {
			err = h.poll(ctx)
		}
	}
	h.mu.Lock()
	h.flush()
	h.mu.Unlock()
	if rerr := h.restore(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	h.conn.Close()
	return err
}

// restore turns off the consumers it turned on, on a context of its own
// (it runs on failure and cancellation too).
func (h *pfsHistory) restore() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, name := range h.enabled {
		if _, err := h.conn.ExecContext(ctx, qDisable, name); err != nil {
			errs = append(errs, fmt.Errorf("turning the consumer %s off again: %w (run: UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = '%s')", name, err, name))
		}
	}
	h.enabled = nil
	return errors.Join(errs...)
}

// notes say what the reader could not see.
func (h *pfsHistory) notes(b *builder) {
	if h.noText > 0 {
		b.note("%d executions of prepared statements have no text in performance_schema's history (MariaDB records none): their time counts in their requests' DB time, but they are in no class; the proxy sees their text", h.noText)
		b.skip(ReasonPreparedWithoutText, h.noText)
	}
	if h.lostRuns > 0 {
		b.note("performance_schema's history went round between two reads %d times: statements were lost (raise performance_schema_events_statements_history_long_size, a restart option, or use the proxy)", h.lostRuns)
		b.skip(ReasonHistoryWentRound, h.lostRuns)
	}
}
