package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/histogram"
)

// RunOptions configures Run.
type RunOptions struct {
	// Duration is the measured interval (required, at most MaxDuration).
	Duration time.Duration
	// WarmUp runs before it, not measured (the ramp-up: caches fill).
	WarmUp time.Duration
	// Connections is the number of terminals without think times
	// (default 2 × warehouses, at most MaxConnections); with ThinkTimes
	// it is ignored: there are ten terminals per warehouse, as in the
	// spec.
	Connections int
	// ThinkTimes runs the spec's terminals: keying time before each
	// transaction and a think time after it (clause 5.2.5), ten
	// terminals per warehouse, each on its own connection. The result is
	// then also an efficiency against 12.86 tpmC per warehouse. Without
	// it, each connection runs transactions back to back: throughput.
	ThinkTimes bool
	// Procedures runs each transaction as one CALL of a stored procedure
	// that Run installs in the database (InstallProcedures), as HammerDB
	// does, instead of one round trip per statement as tpcc-mysql does:
	// the same statements, without the client's round trips between
	// them, so more of the server's time goes to the storage engine.
	Procedures bool
	// MaxRetries is how often a transaction that hit a deadlock or a
	// lock wait timeout is run again with the same input (default 5).
	MaxRetries int
	// Seed seeds the terminals' choices (default 1).
	Seed uint64
	// Progress, when set, is called about once a second.
	Progress func(Progress)
	// Grace bounds how long transactions still running at the end are
	// waited for (default 30 s); they count only if they end inside the
	// measured interval.
	Grace time.Duration
	// now is the clock (tests).
	now func() time.Time
}

// MaxDuration bounds a run's measured interval; MaxConnections its
// terminals.
const (
	MaxDuration    = 2 * time.Hour
	MaxConnections = 2000
)

// Progress is a run's state, for a live line on a terminal.
type Progress struct {
	WarmUp   bool
	Elapsed  time.Duration // in the phase
	Phase    time.Duration // the phase's length
	TpmC     float64       // so far, in the measured interval
	TpmTotal float64
	Errors   int64
	Retries  int64
}

// terminal is one emulated terminal (or connection without think
// times): a home warehouse and district, its deck, its own random
// stream.
type terminal struct {
	id         int
	w, d       int
	warehouses int
	sizes      Sizes
	g          *gen
	deck       []Kind
	next       int
}

// draw takes the next card of the terminal's deck, reshuffling a fresh
// deck when it runs out (clause 5.2.4.2: the mix comes from a deck, not
// from independent random picks, so every 100 transactions have exactly
// the mix).
func (t *terminal) draw() Kind {
	if t.next == len(t.deck) {
		if t.deck == nil {
			for k, n := range deckCards {
				for i := 0; i < n; i++ {
					t.deck = append(t.deck, Kind(k))
				}
			}
		}
		t.g.r.Shuffle(len(t.deck), func(i, j int) { t.deck[i], t.deck[j] = t.deck[j], t.deck[i] })
		t.next = 0
	}
	k := t.deck[t.next]
	t.next++
	return k
}

// stats are one terminal's counts for one transaction kind.
type stats struct {
	done       int64 // completed in the measured interval (rollbacks included)
	rolledBack int64
	failed     int64
	retries    int64
	deadlocks  int64
	lockWaits  int64
	skipped    int64 // Delivery: districts with nothing to deliver
	rt         histogram.Histogram
	rtMin      float64
	rtMax      float64
	rtSum      float64
	overLimit  int64
	errSamples []string
}

func (s *stats) add(o *stats) {
	s.done += o.done
	s.rolledBack += o.rolledBack
	s.failed += o.failed
	s.retries += o.retries
	s.deadlocks += o.deadlocks
	s.lockWaits += o.lockWaits
	s.skipped += o.skipped
	s.rt.Merge(&o.rt)
	if o.rt.Count() > 0 {
		if s.rt.Count() == o.rt.Count() || o.rtMin < s.rtMin {
			s.rtMin = o.rtMin
		}
		s.rtMax = math.Max(s.rtMax, o.rtMax)
	}
	s.rtSum += o.rtSum
	s.overLimit += o.overLimit
	for _, e := range o.errSamples {
		if len(s.errSamples) < maxErrSamples {
			s.errSamples = append(s.errSamples, e)
		}
	}
}

const maxErrSamples = 5

// Run runs the five transactions against a loaded database (db's current
// database): a warm-up, then the measured interval, then it waits at
// most Grace for transactions still running. It always ends: the whole
// run is bounded by WarmUp + Duration + Grace and by ctx. When the server
// went away during the run, the result (its rates over the time the
// server was up) comes with an error wrapping ErrServerLost.
func Run(ctx context.Context, db *sql.DB, opt RunOptions) (*Result, error) {
	if opt.Duration <= 0 || opt.Duration > MaxDuration {
		return nil, fmt.Errorf("tpcc: run duration %s: want more than 0 and at most %s", opt.Duration, MaxDuration)
	}
	if opt.WarmUp < 0 || opt.WarmUp > MaxDuration {
		return nil, fmt.Errorf("tpcc: warm-up %s: want 0 to %s", opt.WarmUp, MaxDuration)
	}
	info, err := ReadInfo(ctx, db)
	if err != nil {
		return nil, err
	}
	if !info.Complete {
		return nil, fmt.Errorf("tpcc: the load is incomplete (%d units missing): run prepare again to finish it", info.Missing)
	}
	if opt.MaxRetries <= 0 {
		opt.MaxRetries = 5
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.Grace <= 0 {
		opt.Grace = 30 * time.Second
	}
	if opt.now == nil {
		opt.now = time.Now
	}
	n := opt.Connections
	if opt.ThinkTimes {
		n = 10 * info.Warehouses
	} else if n <= 0 {
		n = 2 * info.Warehouses
	}
	if n < 1 || n > MaxConnections {
		return nil, fmt.Errorf("tpcc: %d terminals: want 1 to %d", n, MaxConnections)
	}
	if limit := db.Stats().MaxOpenConnections; limit > 0 && limit < n {
		return nil, fmt.Errorf("tpcc: %d terminals need as many connections, and the pool allows %d (SetMaxOpenConns)", n, limit)
	}
	db.SetMaxIdleConns(n + 2)
	if opt.Procedures {
		if err := InstallProcedures(ctx, db); err != nil {
			return nil, err
		}
	}

	seedRand := rand.New(rand.NewPCG(opt.Seed, info.Seed))
	cs := runConstants(loadConstants(info.Seed), seedRand)
	terms := make([]*terminal, n)
	for i := range terms {
		// Terminal i: warehouse i mod W, district (i / W) mod 10, so the
		// first W terminals cover every warehouse and the spec's ten per
		// warehouse cover every district.
		terms[i] = &terminal{id: i, w: i%info.Warehouses + 1, d: (i/info.Warehouses)%Districts + 1,
			warehouses: info.Warehouses, sizes: info.Sizes, g: newGen(opt.Seed, uint64(i)+1, cs)}
	}
	sessions := make([]*session, n)
	var openErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			s, err := openSession(ctx, db, opt.Procedures)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && openErr == nil {
				openErr = err
			}
			sessions[i] = s
		}(i)
	}
	wg.Wait()
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.close()
			}
		}
	}()
	if openErr != nil {
		return nil, fmt.Errorf("tpcc: opening %d connections: %w", n, openErr)
	}
	// From here the data is no longer as loaded (consistency condition
	// 11 holds only then): say so before the first transaction.
	if _, err := db.ExecContext(ctx, markRanSQL); err != nil {
		return nil, fmt.Errorf("tpcc: writing tpcc_meta: %w", err)
	}

	r := &runner{opt: opt, info: info, db: db, sessions: sessions}
	r.start = opt.now()
	r.measureFrom = r.start.Add(opt.WarmUp)
	r.measureTo = r.measureFrom.Add(opt.Duration)
	runCtx, cancel := context.WithDeadline(ctx, r.measureTo.Add(opt.Grace))
	defer cancel()
	r.perTerm = make([][numKinds]stats, n)
	r.live = make([]liveCounts, n)
	done := make(chan struct{})
	for i, t := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.terminalLoop(runCtx, t, i)
		}()
	}
	go func() { wg.Wait(); close(done) }()
	if opt.Progress != nil {
		tick := time.NewTicker(time.Second)
	loop:
		for {
			select {
			case <-done:
				break loop
			case <-tick.C:
				opt.Progress(r.progress())
			}
		}
		tick.Stop()
	} else {
		<-done
	}
	end := opt.now()
	res := r.result(n, end)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("tpcc: run stopped: %w", err)
	}
	return res, res.ServerLost()
}

// runner holds a run's shared state; each terminal writes only its own
// slots.
type runner struct {
	opt                    RunOptions
	info                   *Info
	db                     *sql.DB
	sessions               []*session
	start                  time.Time
	measureFrom, measureTo time.Time
	perTerm                [][numKinds]stats
	live                   []liveCounts
	avail                  availability
}

// liveCounts are read by the progress line.
type liveCounts struct {
	mu      sync.Mutex
	no, all int64
	errs    int64
	retries int64
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// terminalLoop runs terminal i until the measured interval is over.
func (r *runner) terminalLoop(ctx context.Context, t *terminal, i int) {
	st := &r.perTerm[i]
	live := &r.live[i]
	sleep := func(d time.Duration) bool {
		if r.opt.now().Add(d).After(r.measureTo) {
			return false // the run is over before the terminal would act again
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-tm.C:
			return true
		}
	}
	// lostAt is when this terminal's connection broke (a transaction
	// failed on it), until a new one is open.
	var lostAt time.Time
	for ctx.Err() == nil && r.opt.now().Before(r.measureTo) {
		if r.sessions[i] == nil {
			s, err := openSession(ctx, r.db, r.opt.Procedures)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				live.mu.Lock()
				live.errs++
				live.mu.Unlock()
				// No new connection after one broke: the server went
				// away (a server that answers with an error, such as
				// too many connections, is still there).
				var me *mysql.MySQLError
				if !errors.As(err, &me) {
					if lostAt.IsZero() {
						lostAt = r.opt.now()
					}
					r.avail.lost(lostAt, err)
				}
				if !sleep(time.Second) {
					return
				}
				continue
			}
			r.sessions[i] = s
			r.avail.back(r.opt.now())
			lostAt = time.Time{}
		}
		k := t.draw()
		if r.opt.ThinkTimes && !sleep(seconds(keying[k])) {
			return
		}
		started := r.opt.now()
		if !started.Before(r.measureTo) {
			return
		}
		out := r.execute(ctx, t, r.sessions[i], k)
		ended := r.opt.now()
		measured := !started.Before(r.measureFrom) && !ended.After(r.measureTo)
		err := out.err
		rolledBack := errors.Is(err, errRollback)
		if rolledBack {
			err = nil
		}
		if measured {
			x := &st[k]
			x.retries += int64(out.retries)
			x.deadlocks += int64(out.deadlocks)
			x.lockWaits += int64(out.lockWaits)
			if err != nil {
				x.failed++
				if len(x.errSamples) < maxErrSamples {
					x.errSamples = append(x.errSamples, err.Error())
				}
			} else {
				rt := ended.Sub(started).Seconds()
				if x.rt.Count() == 0 || rt < x.rtMin {
					x.rtMin = rt
				}
				x.done++
				x.skipped += int64(out.skipped)
				if rolledBack {
					x.rolledBack++
				}
				x.rtMax = math.Max(x.rtMax, rt)
				x.rtSum += rt
				x.rt.Add(rt)
				if rt > rtLimit[k] {
					x.overLimit++
				}
			}
			live.mu.Lock()
			if err == nil {
				live.all++
				if k == NewOrder {
					live.no++
				}
			} else {
				live.errs++
			}
			live.retries += int64(out.retries)
			live.mu.Unlock()
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// A server error leaves the connection usable (the
			// transaction was rolled back); anything else (the server
			// went away, or this connection was killed) reopens it, and
			// a reopen that fails says the server went away.
			if connectionLost(err) {
				r.sessions[i].close()
				r.sessions[i] = nil
				lostAt = ended
			}
			if !sleep(50 * time.Millisecond) {
				return
			}
		}
		if r.opt.ThinkTimes && !sleep(seconds(t.g.thinkTime(thinkMean[k]))) {
			return
		}
	}
}

// outcome is one transaction's end.
type outcome struct {
	err                           error
	skipped                       int
	retries, deadlocks, lockWaits int
}

// MySQL errors that roll a transaction back and are worth running again.
const (
	errDeadlock     = 1213
	errLockWaitTime = 1205
)

// execute draws the input of a transaction of kind k and runs it, again
// with the same input after a deadlock or a lock wait timeout, up to
// MaxRetries times.
func (r *runner) execute(ctx context.Context, t *terminal, s *session, k Kind) outcome {
	var run func(now time.Time) (int, error)
	switch k {
	case NewOrder:
		in := t.newOrderInput()
		run = func(now time.Time) (int, error) { return 0, s.newOrder(ctx, in, now) }
	case Payment:
		in := t.paymentInput()
		run = func(now time.Time) (int, error) { return 0, s.payment(ctx, in, now) }
	case OrderStatus:
		in := t.orderStatusInput()
		run = func(time.Time) (int, error) { return 0, s.orderStatus(ctx, in) }
	case Delivery:
		carrier := t.g.intn(1, 10)
		run = func(now time.Time) (int, error) { return s.delivery(ctx, t.w, carrier, now) }
	case StockLevel:
		threshold := t.g.intn(10, 20)
		run = func(time.Time) (int, error) { return 0, s.stockLevel(ctx, t.w, t.d, threshold) }
	}
	var o outcome
	for attempt := 0; ; attempt++ {
		o.skipped, o.err = run(r.opt.now().UTC())
		if o.err == nil {
			return o
		}
		s.rollback()
		var me *mysql.MySQLError
		if !errors.As(o.err, &me) || (me.Number != errDeadlock && me.Number != errLockWaitTime) {
			return o
		}
		if me.Number == errDeadlock {
			o.deadlocks++
		} else {
			o.lockWaits++
		}
		if attempt >= r.opt.MaxRetries || ctx.Err() != nil {
			o.err = fmt.Errorf("%s gave up after %d retries: %w", k, attempt, o.err)
			return o
		}
		o.retries++
	}
}

// progress sums the live counters.
func (r *runner) progress() Progress {
	now := r.opt.now()
	p := Progress{WarmUp: now.Before(r.measureFrom)}
	if p.WarmUp {
		p.Elapsed, p.Phase = now.Sub(r.start), r.opt.WarmUp
	} else {
		p.Elapsed, p.Phase = min(now.Sub(r.measureFrom), r.opt.Duration), r.opt.Duration
	}
	var no, all int64
	for i := range r.live {
		l := &r.live[i]
		l.mu.Lock()
		no += l.no
		all += l.all
		p.Errors += l.errs
		p.Retries += l.retries
		l.mu.Unlock()
	}
	if !p.WarmUp && p.Elapsed > 0 {
		m := p.Elapsed.Minutes()
		p.TpmC, p.TpmTotal = float64(no)/m, float64(all)/m
	}
	return p
}

// MySQL errors that end the connection: the server shutting down, the
// connection killed.
const (
	errServerShutdown   = 1053
	errConnectionKilled = 1927
)

// connectionLost says err ended the connection the transaction ran on:
// any error that is not the server's answer (EOF, a broken pipe, an
// invalid connection), or the server's shutdown or kill.
func connectionLost(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return true
	}
	return me.Number == errServerShutdown || me.Number == errConnectionKilled
}

// Outage is a time the server went away during a run: from the first
// transaction that lost its connection to the first new connection that
// worked. To is zero when the server was not back by the end of the run.
type Outage struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to,omitzero"`
	Error string    `json:"error"`
}

// availability is what the terminals saw of the server: the outages,
// the last one open while the server is away.
type availability struct {
	mu      sync.Mutex
	outages []Outage
	down    bool
}

// lost records that a terminal's connection broke at t and a new one
// could not be opened (err): the server is away since t, or since an
// earlier terminal saw it go.
func (a *availability) lost(t time.Time, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.down {
		a.outages = append(a.outages, Outage{From: t, Error: err.Error()})
		a.down = true
		return
	}
	if o := &a.outages[len(a.outages)-1]; t.Before(o.From) {
		o.From = t
	}
}

// back records that a new connection opened at t: an outage ends.
func (a *availability) back(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		a.outages[len(a.outages)-1].To = t
		a.down = false
	}
}

// away returns the outages and how much of [from, to] they cover (an
// outage not over by the end lasts to it).
func (a *availability) away(from, to time.Time) ([]Outage, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var d time.Duration
	for _, o := range a.outages {
		end := o.To
		if end.IsZero() {
			end = to
		}
		s, e := o.From, end
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			d += e.Sub(s)
		}
	}
	return slices.Clone(a.outages), d
}
