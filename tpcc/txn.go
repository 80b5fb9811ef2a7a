package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is one of the five transactions.
type Kind int

// The five transactions, in the order of the spec's clauses 2.4-2.8.
const (
	NewOrder Kind = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numKinds
)

// Kinds lists the transactions in order.
var Kinds = []Kind{NewOrder, Payment, OrderStatus, Delivery, StockLevel}

func (k Kind) String() string {
	switch k {
	case NewOrder:
		return "New-Order"
	case Payment:
		return "Payment"
	case OrderStatus:
		return "Order-Status"
	case Delivery:
		return "Delivery"
	case StockLevel:
		return "Stock-Level"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Per-transaction facts of the spec.
var (
	// deckCards is the mix: of every 100 transactions a terminal runs,
	// 45 New-Order, 43 Payment and 4 of each other (clause 5.2.3 sets the
	// minimums 43% Payment and 4% each; clause 5.2.4.2 the deck).
	deckCards = [numKinds]int{45, 43, 4, 4, 4}
	// minMix are the spec's minimum shares (clause 5.2.3); New-Order has
	// none, it is what is left.
	minMix = [numKinds]float64{0, 0.43, 0.04, 0.04, 0.04}
	// keying times in seconds (clause 5.2.5.2).
	keying = [numKinds]float64{18, 3, 2, 2, 2}
	// mean think times in seconds (clause 5.2.5.4).
	thinkMean = [numKinds]float64{12, 12, 10, 5, 5}
	// rtLimit is the 90th-percentile response-time limit, seconds
	// (clause 5.2.5.3; Delivery's is for the terminal's part, as a
	// driver that runs it at once measures it).
	rtLimit = [numKinds]float64{5, 5, 5, 5, 20}
)

// MaxTpmCPerWarehouse is the most New-Orders per minute a warehouse's ten
// terminals can enter with the keying and think times: 60 s over the
// mean cycle (keying + think) weighted by the mix, times 0.45 × 10.
const MaxTpmCPerWarehouse = 12.86

// SQL of the transactions, prepared once per terminal connection.
const (
	noWarehouseSQL = "SELECT w_tax FROM warehouse WHERE w_id = ?"
	noDistrictSQL  = "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"
	noNextOrderSQL = "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"
	noCustomerSQL  = "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	noOrderSQL     = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)"
	noNewOrderSQL  = "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
	noItemSQL      = "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"
	noStockSQL     = "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"
	noStockUpdSQL  = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"
	noOrderLineSQL = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
	pWarehouseUpd  = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"
	pWarehouseSQL  = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?"
	pDistrictUpd   = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"
	pDistrictSQL   = "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?"
	byLastNameSQL  = "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
	pCustomerSQL   = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"
	pCustDataSQL   = "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	pCustBCUpd     = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	pCustUpd       = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	pHistorySQL    = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	osCustomerSQL  = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	osLastOrderSQL = "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"
	osLinesSQL     = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	dOldestSQL     = "SELECT no_o_id FROM new_orders WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"
	dDeleteSQL     = "DELETE FROM new_orders WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"
	dOrderSQL      = "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
	dCarrierUpd    = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
	dLinesUpd      = "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	dAmountSQL     = "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	dCustomerUpd   = "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	slNextOrderSQL = "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"
	slCountSQL     = "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id AND s_w_id = ol_w_id WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_quantity < ?"
	beginSQL       = "START TRANSACTION"
	beginReadSQL   = "START TRANSACTION READ ONLY"
	commitSQL      = "COMMIT"
	rollbackSQL    = "ROLLBACK"
	// Without SESSION, the level holds for the next transaction only.
	isolationRCSQL  = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"
	maxCustomerData = 500
)

var allStatements = []string{
	noWarehouseSQL, noDistrictSQL, noNextOrderSQL, noCustomerSQL, noOrderSQL, noNewOrderSQL, noItemSQL,
	noStockSQL, noStockUpdSQL, noOrderLineSQL, pWarehouseUpd, pWarehouseSQL, pDistrictUpd, pDistrictSQL,
	byLastNameSQL, pCustomerSQL, pCustDataSQL, pCustBCUpd, pCustUpd, pHistorySQL, osCustomerSQL,
	osLastOrderSQL, osLinesSQL, dOldestSQL, dDeleteSQL, dOrderSQL, dCarrierUpd, dLinesUpd, dAmountSQL,
	dCustomerUpd, slNextOrderSQL, slCountSQL,
}

// session is one terminal's connection with its statements prepared on
// it (so every execution is one round trip, parsed once by the server).
// Transactions are begun and ended with statements on the same
// connection; with procs, each is one CALL of its stored procedure
// (procs.go), and only the calls are prepared.
type session struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	procs bool
}

func openSession(ctx context.Context, db *sql.DB, procs bool) (*session, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	qs := allStatements
	if procs {
		qs = callStatements
	}
	s := &session{conn: conn, stmts: make(map[string]*sql.Stmt, len(qs)), procs: procs}
	for _, q := range qs {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("preparing %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	return s, nil
}

func (s *session) close() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.conn.Close()
}

func (s *session) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.stmts[q].ExecContext(ctx, args...)
}

func (s *session) row(ctx context.Context, q string, args ...any) *sql.Row {
	return s.stmts[q].QueryRowContext(ctx, args...)
}

// begin starts a transaction; readCommitted runs it at READ COMMITTED,
// which clause 3.4.1 allows for Stock-Level (level 1 isolation), else at
// the server's own level (REPEATABLE READ unless the server is set to
// another): the level is set for that one transaction, so the setting
// being tuned holds for every other transaction.
func (s *session) begin(ctx context.Context, readCommitted, readOnly bool) error {
	if readCommitted {
		if _, err := s.conn.ExecContext(ctx, isolationRCSQL); err != nil {
			return err
		}
	}
	q := beginSQL
	if readOnly {
		q = beginReadSQL
	}
	_, err := s.conn.ExecContext(ctx, q)
	return err
}

func (s *session) commit(ctx context.Context) error {
	_, err := s.conn.ExecContext(ctx, commitSQL)
	return err
}

// rollback ends the transaction; its error matters only as a sign that
// the connection is gone, which the next statement shows anyway.
func (s *session) rollback() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = s.conn.ExecContext(ctx, rollbackSQL)
}

// errRollback is New-Order's intended rollback (an unused item number,
// clause 2.4.2.3): the transaction completed as the spec wants.
var errRollback = errors.New("item number is not valid")

// newOrderInput is what the terminal keys in (clause 2.4.1).
type newOrderInput struct {
	w, d, c int
	items   []orderItem
	allLoc  bool
}

type orderItem struct {
	i, supplyW, qty int
}

func (t *terminal) newOrderInput() newOrderInput {
	g, sz := t.g, t.sizes
	in := newOrderInput{w: t.w, d: g.intn(1, Districts), c: g.nurand(1023, 1, sz.Customers), allLoc: true}
	n := g.intn(5, 15)
	rbk := g.intn(1, 100) == 1
	for k := 0; k < n; k++ {
		it := orderItem{i: g.nurand(8191, 1, sz.Items), supplyW: t.w, qty: g.intn(1, 10)}
		if k == n-1 && rbk {
			it.i = sz.Items + 1 // unused
		}
		if t.warehouses > 1 && g.intn(1, 100) == 1 {
			for it.supplyW == t.w {
				it.supplyW = g.intn(1, t.warehouses)
			}
			in.allLoc = false
		}
		in.items = append(in.items, it)
	}
	return in
}

// newOrder runs clause 2.4.2. Stock rows are locked in (warehouse, item)
// order, not the order keyed, so two New-Orders never wait on each other
// in a cycle over stock; the order lines keep the keyed order and
// numbers.
func (s *session) newOrder(ctx context.Context, in newOrderInput, now time.Time) error {
	if s.procs {
		return s.callNewOrder(ctx, in, now)
	}
	if err := s.begin(ctx, false, false); err != nil {
		return err
	}
	var wTax, dTax, cDiscount float64
	var next int
	var cLast, cCredit string
	if err := s.row(ctx, noWarehouseSQL, in.w).Scan(&wTax); err != nil {
		return err
	}
	if err := s.row(ctx, noDistrictSQL, in.w, in.d).Scan(&dTax, &next); err != nil {
		return err
	}
	if _, err := s.exec(ctx, noNextOrderSQL, in.w, in.d); err != nil {
		return err
	}
	if err := s.row(ctx, noCustomerSQL, in.w, in.d, in.c).Scan(&cDiscount, &cLast, &cCredit); err != nil {
		return err
	}
	allLocal := 0
	if in.allLoc {
		allLocal = 1
	}
	if _, err := s.exec(ctx, noOrderSQL, next, in.d, in.w, in.c, now, len(in.items), allLocal); err != nil {
		return err
	}
	if _, err := s.exec(ctx, noNewOrderSQL, next, in.d, in.w); err != nil {
		return err
	}
	type line struct {
		n       int
		price   float64
		name    string
		iData   string
		sQty    int
		sData   string
		dist    string
		remote  int
		item    orderItem
		amount  float64
		present bool
	}
	lines := make([]line, len(in.items))
	for k, it := range in.items {
		lines[k] = line{n: k + 1, item: it}
		err := s.row(ctx, noItemSQL, it.i).Scan(&lines[k].price, &lines[k].name, &lines[k].iData)
		if errors.Is(err, sql.ErrNoRows) {
			return errRollback
		}
		if err != nil {
			return err
		}
	}
	order := lockOrder(in.items)
	var dists [Districts]string
	for _, k := range order {
		l := &lines[k]
		var sData string
		if err := s.row(ctx, noStockSQL, l.item.i, l.item.supplyW).Scan(&l.sQty, &sData,
			&dists[0], &dists[1], &dists[2], &dists[3], &dists[4], &dists[5], &dists[6], &dists[7], &dists[8], &dists[9]); err != nil {
			return err
		}
		l.sData, l.dist = sData, dists[in.d-1]
		q := l.sQty - l.item.qty
		if l.sQty < l.item.qty+10 {
			q += 91
		}
		if l.item.supplyW != in.w {
			l.remote = 1
		}
		if _, err := s.exec(ctx, noStockUpdSQL, q, l.item.qty, l.remote, l.item.i, l.item.supplyW); err != nil {
			return err
		}
		l.amount = float64(l.item.qty) * l.price
	}
	total := 0.0
	for _, l := range lines {
		// The brand-generic flag ('B' when both i_data and s_data hold
		// "ORIGINAL") goes to the terminal's screen, which has no one to
		// show it to; computing it keeps the work the spec asks for.
		_ = strings.Contains(l.iData, "ORIGINAL") && strings.Contains(l.sData, "ORIGINAL")
		if _, err := s.exec(ctx, noOrderLineSQL, next, in.d, in.w, l.n, l.item.i, l.item.supplyW, l.item.qty, fmt.Sprintf("%.2f", l.amount), l.dist); err != nil {
			return err
		}
		total += l.amount
	}
	_ = total * (1 - cDiscount) * (1 + wTax + dTax)
	return s.commit(ctx)
}

// paymentInput is clause 2.5.1.
type paymentInput struct {
	w, d, cw, cd int
	c            int    // by number, when last == ""
	last         string // by last name
	amount       int64  // cents
}

func (t *terminal) paymentInput() paymentInput {
	g := t.g
	in := paymentInput{w: t.w, d: g.intn(1, Districts), amount: int64(g.intn(100, 500000))}
	in.cw, in.cd = in.w, in.d
	if t.warehouses > 1 && g.intn(1, 100) > 85 {
		for in.cw == in.w {
			in.cw = g.intn(1, t.warehouses)
		}
		in.cd = g.intn(1, Districts)
	}
	if g.intn(1, 100) <= 60 {
		in.last = lastName(g.lastNameNumber(t.sizes.Customers))
	} else {
		in.c = g.nurand(1023, 1, t.sizes.Customers)
	}
	return in
}

// customerByLastName picks the customer at position ceil(n/2) of those
// with the name, sorted by first name (clause 2.5.2.2).
func (s *session) customerByLastName(ctx context.Context, w, d int, last string) (int, error) {
	rows, err := s.stmts[byLastNameSQL].QueryContext(ctx, w, d, last)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d: %w", last, w, d, sql.ErrNoRows)
	}
	return ids[(len(ids)+1)/2-1], nil
}

func (s *session) payment(ctx context.Context, in paymentInput, now time.Time) error {
	if s.procs {
		return s.callPayment(ctx, in, now)
	}
	if err := s.begin(ctx, false, false); err != nil {
		return err
	}
	amount := appendFixedString(in.amount, 2)
	if _, err := s.exec(ctx, pWarehouseUpd, amount, in.w); err != nil {
		return err
	}
	var wName, dName string
	var a1, a2, a3, a4, a5 string
	if err := s.row(ctx, pWarehouseSQL, in.w).Scan(&wName, &a1, &a2, &a3, &a4, &a5); err != nil {
		return err
	}
	if _, err := s.exec(ctx, pDistrictUpd, amount, in.w, in.d); err != nil {
		return err
	}
	if err := s.row(ctx, pDistrictSQL, in.w, in.d).Scan(&dName, &a1, &a2, &a3, &a4, &a5); err != nil {
		return err
	}
	c := in.c
	if in.last != "" {
		var err error
		if c, err = s.customerByLastName(ctx, in.cw, in.cd, in.last); err != nil {
			return err
		}
	}
	var first, middle, last, phone, since, credit, lim, disc, bal string
	if err := s.row(ctx, pCustomerSQL, in.cw, in.cd, c).Scan(&first, &middle, &last, &a1, &a2, &a3, &a4, &a5, &phone, &since, &credit, &lim, &disc, &bal); err != nil {
		return err
	}
	if credit == "BC" {
		var data string
		if err := s.row(ctx, pCustDataSQL, in.cw, in.cd, c).Scan(&data); err != nil {
			return err
		}
		data = fmt.Sprintf("%d %d %d %d %d %s|%s", c, in.cd, in.cw, in.d, in.w, amount, data)
		if len(data) > maxCustomerData {
			data = data[:maxCustomerData]
		}
		if _, err := s.exec(ctx, pCustBCUpd, amount, amount, data, in.cw, in.cd, c); err != nil {
			return err
		}
	} else if _, err := s.exec(ctx, pCustUpd, amount, amount, in.cw, in.cd, c); err != nil {
		return err
	}
	hData := wName + "    " + dName
	if _, err := s.exec(ctx, pHistorySQL, c, in.cd, in.cw, in.d, in.w, now, amount, hData); err != nil {
		return err
	}
	return s.commit(ctx)
}

// appendFixedString is v·10^-places as a string ("12.34").
func appendFixedString(v int64, places int) string { return string(appendFixed(nil, v, places)) }

// orderStatusInput is clause 2.6.1.
type orderStatusInput struct {
	w, d, c int
	last    string
}

func (t *terminal) orderStatusInput() orderStatusInput {
	g := t.g
	in := orderStatusInput{w: t.w, d: g.intn(1, Districts)}
	if g.intn(1, 100) <= 60 {
		in.last = lastName(g.lastNameNumber(t.sizes.Customers))
	} else {
		in.c = g.nurand(1023, 1, t.sizes.Customers)
	}
	return in
}

func (s *session) orderStatus(ctx context.Context, in orderStatusInput) error {
	if s.procs {
		return s.callOrderStatus(ctx, in)
	}
	if err := s.begin(ctx, false, true); err != nil {
		return err
	}
	c := in.c
	if in.last != "" {
		var err error
		if c, err = s.customerByLastName(ctx, in.w, in.d, in.last); err != nil {
			return err
		}
	}
	var bal, first, middle, last string
	if err := s.row(ctx, osCustomerSQL, in.w, in.d, c).Scan(&bal, &first, &middle, &last); err != nil {
		return err
	}
	var oID int
	var entry string
	var carrier sql.NullInt64
	err := s.row(ctx, osLastOrderSQL, in.w, in.d, c).Scan(&oID, &entry, &carrier)
	if errors.Is(err, sql.ErrNoRows) {
		return s.commit(ctx) // a customer with no order yet: nothing more to show
	}
	if err != nil {
		return err
	}
	rows, err := s.stmts[osLinesSQL].QueryContext(ctx, in.w, in.d, oID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var i, sw, qty int
		var amount string
		var delivered sql.NullString
		if err := rows.Scan(&i, &sw, &qty, &amount, &delivered); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return s.commit(ctx)
}

// delivery runs clause 2.7.4 for every district of the warehouse, in one
// transaction, at once (not queued): its response time is then the whole
// of it. It returns the districts that had no order to deliver.
func (s *session) delivery(ctx context.Context, w, carrier int, now time.Time) (skipped int, err error) {
	if s.procs {
		return s.callDelivery(ctx, w, carrier, now)
	}
	if err := s.begin(ctx, false, false); err != nil {
		return 0, err
	}
	for d := 1; d <= Districts; d++ {
		var oID int
		err := s.row(ctx, dOldestSQL, w, d).Scan(&oID)
		if errors.Is(err, sql.ErrNoRows) {
			skipped++ // clause 2.7.4.2: skipped, and reported
			continue
		}
		if err != nil {
			return skipped, err
		}
		if _, err := s.exec(ctx, dDeleteSQL, w, d, oID); err != nil {
			return skipped, err
		}
		var c int
		if err := s.row(ctx, dOrderSQL, w, d, oID).Scan(&c); err != nil {
			return skipped, err
		}
		if _, err := s.exec(ctx, dCarrierUpd, carrier, w, d, oID); err != nil {
			return skipped, err
		}
		if _, err := s.exec(ctx, dLinesUpd, now, w, d, oID); err != nil {
			return skipped, err
		}
		var sum sql.NullString
		if err := s.row(ctx, dAmountSQL, w, d, oID).Scan(&sum); err != nil {
			return skipped, err
		}
		amount := "0"
		if sum.Valid {
			amount = sum.String
		}
		if _, err := s.exec(ctx, dCustomerUpd, amount, w, d, c); err != nil {
			return skipped, err
		}
	}
	return skipped, s.commit(ctx)
}

// stockLevel runs clause 2.8.2 for the terminal's own district, at READ
// COMMITTED.
func (s *session) stockLevel(ctx context.Context, w, d, threshold int) error {
	if s.procs {
		return s.callStockLevel(ctx, w, d, threshold)
	}
	if err := s.begin(ctx, true, true); err != nil {
		return err
	}
	var next, low int
	if err := s.row(ctx, slNextOrderSQL, w, d).Scan(&next); err != nil {
		return err
	}
	if err := s.row(ctx, slCountSQL, w, d, next, next-20, threshold).Scan(&low); err != nil {
		return err
	}
	return s.commit(ctx)
}
