package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LoadOptions configures Load.
type LoadOptions struct {
	// Warehouses is the scale (at least 1).
	Warehouses int
	// Sizes default to SpecSizes.
	Sizes Sizes
	// Workers load warehouse ranges in parallel (default: the cores,
	// at least 2: one connection waits on the server while the other
	// generates rows).
	Workers int
	// Seed makes the data (default 1): the same seed loads the same rows.
	Seed uint64
	// BatchBytes bounds one multi-row INSERT (default 1 MiB; the server's
	// max_allowed_packet must hold it).
	BatchBytes int
	// Progress, when set, is called after each unit with the units done
	// and the total.
	Progress func(LoadProgress)
}

// LoadProgress is where a load is.
type LoadProgress struct {
	UnitsDone, Units int
	Rows             int64
	Elapsed          time.Duration
	Unit             string // the unit just finished
}

// LoadResult is what Load did.
type LoadResult struct {
	Warehouses int           `json:"warehouses"`
	Sizes      Sizes         `json:"sizes"`
	Units      int           `json:"units"`
	Loaded     int           `json:"units_loaded"`
	Skipped    int           `json:"units_skipped"` // complete from an earlier prepare
	Resumed    int           `json:"units_resumed"` // started earlier, cleared and loaded again
	Rows       int64         `json:"rows"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Workers    int           `json:"workers"`
}

// unit is one piece of the load: a table (or tables) of one warehouse, or
// the item table. A unit is complete once its row is in tpcc_load; an
// incomplete one is cleared (its rows deleted) before it is loaded, so a
// prepare killed at any point is resumed by running it again, without a
// duplicate key.
type unit struct {
	name   string
	w      int // 0 for item
	clear  []string
	loadFn func(l *loader, w int, g *gen) (int64, error)
}

// plan lists the units of a load of warehouses, item first.
func plan(warehouses int) []unit {
	us := []unit{{name: "item", clear: []string{"DELETE FROM item"}, loadFn: (*loader).items}}
	for w := 1; w <= warehouses; w++ {
		us = append(us,
			unit{name: fmt.Sprintf("w%d:warehouse", w), w: w, loadFn: (*loader).warehouse,
				clear: []string{"DELETE FROM warehouse WHERE w_id = ?", "DELETE FROM district WHERE d_w_id = ?"}},
			unit{name: fmt.Sprintf("w%d:stock", w), w: w, loadFn: (*loader).stock,
				clear: []string{"DELETE FROM stock WHERE s_w_id = ?"}},
			unit{name: fmt.Sprintf("w%d:customer", w), w: w, loadFn: (*loader).customers,
				clear: []string{"DELETE FROM customer WHERE c_w_id = ?", "DELETE FROM history WHERE h_w_id = ?"}},
			unit{name: fmt.Sprintf("w%d:orders", w), w: w, loadFn: (*loader).orders,
				clear: []string{"DELETE FROM orders WHERE o_w_id = ?", "DELETE FROM new_orders WHERE no_w_id = ?", "DELETE FROM order_line WHERE ol_w_id = ?"}},
		)
	}
	return us
}

const (
	markUnitSQL  = "INSERT INTO tpcc_load (unit, row_count, done_at) VALUES (?, ?, NOW()) ON DUPLICATE KEY UPDATE row_count = VALUES(row_count), done_at = VALUES(done_at)"
	doneUnitsSQL = "SELECT unit FROM tpcc_load"
)

// Load creates the TPC-C tables in db's current database (which must be
// named in the DSN) and loads them, resuming a load that stopped: units
// already complete are skipped, a unit that was started is cleared and
// loaded again. A database loaded with other sizes or another seed is
// refused (drop it first); one with fewer warehouses is extended.
//
// The warehouses are split into ranges, one per worker, each on its own
// connection; item goes first, to the first worker. Rows go in as
// multi-row INSERTs in primary-key order, about BatchBytes each.
func Load(ctx context.Context, db *sql.DB, opt LoadOptions) (*LoadResult, error) {
	if opt.Sizes == (Sizes{}) {
		opt.Sizes = SpecSizes
	}
	if err := opt.Sizes.Validate(); err != nil {
		return nil, err
	}
	if opt.Warehouses < 1 || opt.Warehouses > MaxWarehouses {
		return nil, fmt.Errorf("tpcc: %d warehouses: want 1 to %d", opt.Warehouses, MaxWarehouses)
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = 1 << 20
	}
	if opt.Workers <= 0 {
		opt.Workers = max(2, runtime.NumCPU())
	}
	opt.Workers = min(opt.Workers, opt.Warehouses+1)
	start := time.Now()
	var dbName sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName); err != nil {
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	if !dbName.Valid || dbName.String == "" {
		return nil, errors.New("tpcc: no database selected: name one in the DSN (…/tpcc) or with --db")
	}
	for _, ddl := range schema {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return nil, fmt.Errorf("tpcc: creating the tables: %w", err)
		}
	}
	if err := checkMeta(ctx, db, opt); err != nil {
		return nil, err
	}
	done := map[string]bool{}
	rows, err := db.QueryContext(ctx, doneUnitsSQL)
	if err != nil {
		return nil, fmt.Errorf("tpcc: reading tpcc_load: %w", err)
	}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return nil, fmt.Errorf("tpcc: reading tpcc_load: %w", err)
		}
		done[u] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tpcc: reading tpcc_load: %w", err)
	}

	units := plan(opt.Warehouses)
	res := &LoadResult{Warehouses: opt.Warehouses, Sizes: opt.Sizes, Units: len(units), Workers: opt.Workers}
	var todo []unit
	for _, u := range units {
		if done[u.name] {
			res.Skipped++
			continue
		}
		todo = append(todo, u)
	}
	// Warehouse ranges: worker i takes the i-th contiguous slice of the
	// units (item, being first, goes to worker 0).
	queues := make([][]unit, opt.Workers)
	for i, u := range todo {
		k := i * opt.Workers / max(1, len(todo))
		queues[k] = append(queues[k], u)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		unitsDone atomic.Int64
		rowsDone  atomic.Int64
		resumed   atomic.Int64
	)
	cs := loadConstants(opt.Seed)
	now := time.Now().UTC().Format("2006-01-02 15:04:05")
	for _, q := range queues {
		if len(q) == 0 {
			continue
		}
		wg.Add(1)
		go func(q []unit) {
			defer wg.Done()
			err := func() error {
				conn, err := db.Conn(ctx)
				if err != nil {
					return err
				}
				defer conn.Close()
				l := &loader{conn: conn, ctx: ctx, sizes: opt.Sizes, batch: opt.BatchBytes, now: now, warehouses: opt.Warehouses}
				for _, u := range q {
					n, wasStarted, err := l.run(u, opt.Seed, cs)
					if err != nil {
						return fmt.Errorf("unit %s: %w", u.name, err)
					}
					if wasStarted {
						resumed.Add(1)
					}
					rowsDone.Add(n)
					d := unitsDone.Add(1)
					if opt.Progress != nil {
						mu.Lock()
						opt.Progress(LoadProgress{UnitsDone: int(d) + res.Skipped, Units: len(units), Rows: rowsDone.Load(), Elapsed: time.Since(start), Unit: u.name})
						mu.Unlock()
					}
				}
				return nil
			}()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
			}
		}(q)
	}
	wg.Wait()
	res.Loaded = int(unitsDone.Load())
	res.Resumed = int(resumed.Load())
	res.Rows = rowsDone.Load()
	res.Elapsed = time.Since(start)
	if firstErr != nil {
		return res, fmt.Errorf("tpcc: load stopped after %d of %d units (run prepare again to resume): %w", res.Loaded+res.Skipped, res.Units, firstErr)
	}
	return res, nil
}

// checkMeta records the load's scale, sizes and seed, or refuses a
// database loaded differently.
func checkMeta(ctx context.Context, db *sql.DB, opt LoadOptions) error {
	info, err := ReadInfo(ctx, db)
	switch {
	case errors.Is(err, ErrNotLoaded):
	case err != nil:
		return err
	default:
		if info.Sizes != opt.Sizes || info.Seed != opt.Seed {
			return fmt.Errorf("tpcc: the database was loaded with other sizes or seed (%+v, seed %d; asked %+v, seed %d): drop it first", info.Sizes, info.Seed, opt.Sizes, opt.Seed)
		}
		if info.Warehouses > opt.Warehouses {
			return fmt.Errorf("tpcc: the database already holds %d warehouses, more than the %d asked: drop it first, or prepare %d", info.Warehouses, opt.Warehouses, info.Warehouses)
		}
	}
	for _, kv := range [][2]string{
		{"warehouses", strconv.Itoa(opt.Warehouses)}, {"items", strconv.Itoa(opt.Sizes.Items)},
		{"customers", strconv.Itoa(opt.Sizes.Customers)}, {"new_orders", strconv.Itoa(opt.Sizes.NewOrders)},
		{"seed", strconv.FormatUint(opt.Seed, 10)},
	} {
		if _, err := db.ExecContext(ctx, upsertMetaSQL, kv[0], kv[1]); err != nil {
			return fmt.Errorf("tpcc: writing tpcc_meta: %w", err)
		}
	}
	return nil
}

// loader loads units on one connection.
type loader struct {
	conn       *sql.Conn
	ctx        context.Context
	sizes      Sizes
	batch      int
	now        string
	warehouses int
}

// run loads one unit: clears what an earlier attempt left, loads, marks
// it done. wasStarted says it had left rows.
func (l *loader) run(u unit, seed uint64, cs constants) (n int64, wasStarted bool, err error) {
	for _, q := range u.clear {
		var res sql.Result
		if u.w > 0 {
			res, err = l.conn.ExecContext(l.ctx, q, u.w)
		} else {
			res, err = l.conn.ExecContext(l.ctx, q)
		}
		if err != nil {
			return 0, false, fmt.Errorf("clearing: %w", err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			wasStarted = true
		}
	}
	// Every unit has its own stream of random values, so a unit loads
	// the same rows whichever worker loads it and whatever ran before.
	h := uint64(0)
	for _, c := range u.name {
		h = h*131 + uint64(c)
	}
	g := newGen(seed, h, cs)
	n, err = u.loadFn(l, u.w, g)
	if err != nil {
		return n, wasStarted, err
	}
	if _, err := l.conn.ExecContext(l.ctx, markUnitSQL, u.name, n); err != nil {
		return n, wasStarted, fmt.Errorf("marking it done: %w", err)
	}
	return n, wasStarted, nil
}

// bulk builds multi-row INSERTs of about max bytes.
type bulk struct {
	l      *loader
	prefix string
	buf    []byte
	rows   int64
	open   bool
}

func (l *loader) bulk(table, cols string) *bulk {
	p := "INSERT INTO " + table + " (" + cols + ") VALUES "
	return &bulk{l: l, prefix: p, buf: make([]byte, 0, l.batch+64<<10)}
}

// row starts a row and returns the buffer to append its values to (the
// caller appends "(...)" without the separator).
func (b *bulk) row() []byte {
	if !b.open {
		b.buf = append(b.buf[:0], b.prefix...)
		b.open = true
	} else {
		b.buf = append(b.buf, ',')
	}
	b.rows++
	return b.buf
}

// done takes the row appended to buf and sends the statement when full.
func (b *bulk) done(buf []byte) error {
	b.buf = buf
	if len(b.buf) >= b.l.batch {
		return b.flush()
	}
	return nil
}

func (b *bulk) flush() error {
	if !b.open {
		return nil
	}
	b.open = false
	if _, err := b.l.conn.ExecContext(b.l.ctx, string(b.buf)); err != nil {
		return err
	}
	return nil
}

// Value appenders.
func num(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

// nums appends vs separated by commas.
func nums(b []byte, vs ...int) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = num(b, v)
	}
	return b
}

// quotedAString appends a quoted random a-string of lo to hi characters.
func (g *gen) quotedAString(b []byte, lo, hi int) []byte {
	return quoted(b, func(x []byte) []byte { return g.astring(x, lo, hi) })
}
func str(b []byte, s string) []byte {
	b = append(b, '\'')
	b = append(b, s...)
	return append(b, '\'')
}

// quoted appends 'x' where f appends x.
func quoted(b []byte, f func([]byte) []byte) []byte {
	b = append(b, '\'')
	b = f(b)
	return append(b, '\'')
}

func (l *loader) items(_ int, g *gen) (int64, error) {
	b := l.bulk("item", "i_id, i_im_id, i_name, i_price, i_data")
	for i := 1; i <= l.sizes.Items; i++ {
		r := b.row()
		r = append(r, '(')
		r = nums(r, i, g.intn(1, 10000))
		r = append(r, ',')
		r = g.quotedAString(r, 14, 24)
		r = append(r, ',')
		r = g.decimal(r, 100, 10000, 2)
		r = append(r, ',')
		r = quoted(r, g.data)
		r = append(r, ')')
		if err := b.done(r); err != nil {
			return b.rows, err
		}
	}
	return b.rows, b.flush()
}

// address appends the street 1, street 2, city, state and zip columns.
func address(r []byte, g *gen) []byte {
	r = g.quotedAString(r, 10, 20)
	r = append(r, ',')
	r = g.quotedAString(r, 10, 20)
	r = append(r, ',')
	r = g.quotedAString(r, 10, 20)
	r = append(r, ',')
	r = g.quotedAString(r, 2, 2)
	r = append(r, ',')
	return quoted(r, g.zip)
}

func (l *loader) warehouse(w int, g *gen) (int64, error) {
	r := []byte("INSERT INTO warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd) VALUES (")
	r = num(r, w)
	r = append(r, ',')
	r = g.quotedAString(r, 6, 10)
	r = append(r, ',')
	r = address(r, g)
	r = append(r, ',')
	r = g.decimal(r, 0, 2000, 4)
	r = append(r, ',')
	r = num(r, Districts*l.sizes.districtYTD())
	r = append(r, ".00)"...)
	if _, err := l.conn.ExecContext(l.ctx, string(r)); err != nil {
		return 0, err
	}
	b := l.bulk("district", "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id")
	for d := 1; d <= Districts; d++ {
		r := b.row()
		r = append(r, '(')
		r = nums(r, d, w)
		r = append(r, ',')
		r = g.quotedAString(r, 6, 10)
		r = append(r, ',')
		r = address(r, g)
		r = append(r, ',')
		r = g.decimal(r, 0, 2000, 4)
		r = append(r, ',')
		r = num(r, l.sizes.districtYTD())
		r = append(r, ".00,"...)
		r = num(r, l.sizes.Customers+1)
		r = append(r, ')')
		if err := b.done(r); err != nil {
			return 1 + b.rows, err
		}
	}
	return 1 + b.rows, b.flush()
}

func (l *loader) stock(w int, g *gen) (int64, error) {
	b := l.bulk("stock", "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data")
	for i := 1; i <= l.sizes.Items; i++ {
		r := b.row()
		r = append(r, '(')
		r = nums(r, i, w, g.intn(10, 100))
		for d := 0; d < Districts; d++ {
			r = append(r, ',')
			r = g.quotedAString(r, 24, 24)
		}
		r = append(r, ",0,0,0,"...)
		r = quoted(r, g.data)
		r = append(r, ')')
		if err := b.done(r); err != nil {
			return b.rows, err
		}
	}
	return b.rows, b.flush()
}

func (l *loader) customers(w int, g *gen) (int64, error) {
	b := l.bulk("customer", "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data")
	h := l.bulk("history", "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data")
	n := int64(0)
	for d := 1; d <= Districts; d++ {
		for c := 1; c <= l.sizes.Customers; c++ {
			last := c - 1
			if c > 1000 || c > l.sizes.Customers {
				last = g.lastNameNumber(l.sizes.Customers)
			}
			r := b.row()
			r = append(r, '(')
			r = nums(r, c, d, w)
			r = append(r, ',')
			r = g.quotedAString(r, 8, 16)
			r = append(r, ",'OE',"...)
			r = str(r, lastName(last))
			r = append(r, ',')
			r = address(r, g)
			r = append(r, ',')
			r = quoted(r, func(x []byte) []byte { return g.nstring(x, 16, 16) })
			r = append(r, ',')
			r = str(r, l.now)
			if g.r.IntN(10) == 0 {
				r = append(r, ",'BC'"...)
			} else {
				r = append(r, ",'GC'"...)
			}
			r = append(r, ",50000.00,"...)
			r = g.decimal(r, 0, 5000, 4)
			r = append(r, ",-10.00,10.00,1,0,"...)
			r = g.quotedAString(r, 300, 500)
			r = append(r, ')')
			if err := b.done(r); err != nil {
				return n + b.rows, err
			}
			hr := h.row()
			hr = append(hr, '(')
			hr = nums(hr, c, d, w, d, w)
			hr = append(hr, ',')
			hr = str(hr, l.now)
			hr = append(hr, ",10.00,"...)
			hr = g.quotedAString(hr, 12, 24)
			hr = append(hr, ')')
			if err := h.done(hr); err != nil {
				return n + b.rows + h.rows, err
			}
		}
	}
	if err := b.flush(); err != nil {
		return b.rows + h.rows, err
	}
	return b.rows + h.rows, h.flush()
}

func (l *loader) orders(w int, g *gen) (int64, error) {
	o := l.bulk("orders", "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local")
	ol := l.bulk("order_line", "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info")
	no := l.bulk("new_orders", "no_o_id, no_d_id, no_w_id")
	delivered := l.sizes.delivered()
	for d := 1; d <= Districts; d++ {
		cust := g.perm(l.sizes.Customers)
		for id := 1; id <= l.sizes.Customers; id++ {
			cnt := g.intn(5, 15)
			r := o.row()
			r = append(r, '(')
			r = nums(r, id, d, w, cust[id-1])
			r = append(r, ',')
			r = str(r, l.now)
			r = append(r, ',')
			if id <= delivered {
				r = num(r, g.intn(1, 10))
			} else {
				r = append(r, "NULL"...)
			}
			r = append(r, ',')
			r = num(r, cnt)
			r = append(r, ",1)"...)
			if err := o.done(r); err != nil {
				return o.rows + ol.rows + no.rows, err
			}
			for n := 1; n <= cnt; n++ {
				r := ol.row()
				r = append(r, '(')
				r = nums(r, id, d, w, n, g.intn(1, l.sizes.Items), w)
				r = append(r, ',')
				if id <= delivered {
					r = str(r, l.now)
					r = append(r, ",5,0.00,"...)
				} else {
					r = append(r, "NULL,5,"...)
					r = g.decimal(r, 1, 999999, 2)
					r = append(r, ',')
				}
				r = g.quotedAString(r, 24, 24)
				r = append(r, ')')
				if err := ol.done(r); err != nil {
					return o.rows + ol.rows + no.rows, err
				}
			}
			if id > delivered {
				r := no.row()
				r = append(r, '(')
				r = nums(r, id, d, w)
				r = append(r, ')')
				if err := no.done(r); err != nil {
					return o.rows + ol.rows + no.rows, err
				}
			}
		}
	}
	for _, b := range []*bulk{o, ol, no} {
		if err := b.flush(); err != nil {
			return o.rows + ol.rows + no.rows, err
		}
	}
	return o.rows + ol.rows + no.rows, nil
}

// Reload empties the TPC-C tables of db's current database and loads
// them again with the scale, sizes and seed the load had: the same rows
// as a fresh prepare. It is the reset between a search's trials for a
// server whose data dir cannot be copied (slower: a whole load).
func Reload(ctx context.Context, db *sql.DB, workers int) (*LoadResult, error) {
	info, err := ReadInfo(ctx, db)
	if err != nil {
		return nil, err
	}
	for _, t := range append(slices.Clone(Tables), "tpcc_load") {
		if _, err := db.ExecContext(ctx, "TRUNCATE TABLE "+t); err != nil {
			return nil, fmt.Errorf("tpcc: emptying %s: %w", t, err)
		}
	}
	if _, err := db.ExecContext(ctx, clearRanSQL); err != nil {
		return nil, fmt.Errorf("tpcc: writing tpcc_meta: %w", err)
	}
	return Load(ctx, db, LoadOptions{Warehouses: info.Warehouses, Sizes: info.Sizes, Seed: info.Seed, Workers: workers})
}
