package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// The five transactions as stored procedures (RunOptions.Procedures):
// the same statements as the client-side transactions, run by the
// server, so a transaction is one round trip (CALL) instead of one per
// statement, as HammerDB runs TPC-C. Each procedure begins and ends its
// own transaction; an error (a deadlock, a lock wait timeout) leaves the
// procedure at once, and the driver rolls back and retries as it does
// for statements. Each returns one result set, which the client reads.
//
// They are written from the spec's clauses 2.4-2.8, as the client-side
// transactions are; no kit's procedures are used.
var procedures = []struct{ name, body string }{
	// The customer by last name, for Payment and Order-Status: the one at
	// position ceil(n/2) of those named, sorted by first name (clause
	// 2.5.2.2); none is an error.
	{"tpcc_customer_by_name", `(IN p_w SMALLINT, IN p_d TINYINT, IN p_last VARCHAR(16), OUT p_c INT)
BEGIN
  DECLARE v_n INT;
  SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
  IF v_n = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer with that last name';
  END IF;
  SET v_n = (v_n + 1) DIV 2 - 1;
  SELECT c_id INTO p_c FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last ORDER BY c_first LIMIT v_n, 1;
END`},
	// New-Order (clause 2.4.2). p_lines holds the order lines in the
	// order their stock rows are locked, (supply warehouse, item), each
	// in 15 fixed-width digits: line number (2), item (6), supply
	// warehouse (5), quantity (2). The unused item of the 1% rollback
	// is not found in item: the procedure rolls back and returns
	// rolled_back = 1.
	{"tpcc_new_order", `(IN p_w SMALLINT, IN p_d TINYINT, IN p_c INT, IN p_all_local TINYINT, IN p_n TINYINT, IN p_lines VARCHAR(255), IN p_now DATETIME)
proc: BEGIN
  DECLARE v_found, k, v_next, v_ol, v_i, v_sw, v_qty, v_sqty INT;
  DECLARE v_w_tax, v_d_tax, v_disc DECIMAL(4,4);
  DECLARE v_last VARCHAR(16);
  DECLARE v_credit CHAR(2);
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_amount DECIMAL(6,2);
  DECLARE v_total DECIMAL(12,2) DEFAULT 0;
  DECLARE v_iname VARCHAR(24);
  DECLARE v_idata, v_sdata VARCHAR(50);
  DECLARE v_dist CHAR(24);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  START TRANSACTION;
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_next FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  SELECT c_discount, c_last, c_credit INTO v_disc, v_last, v_credit FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (v_next, p_d, p_w, p_c, p_now, NULL, p_n, p_all_local);
  INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (v_next, p_d, p_w);
  SET k = 0;
  WHILE k < p_n DO
    SET v_ol = SUBSTRING(p_lines, k * 15 + 1, 2) + 0, v_i = SUBSTRING(p_lines, k * 15 + 3, 6) + 0,
        v_sw = SUBSTRING(p_lines, k * 15 + 9, 5) + 0, v_qty = SUBSTRING(p_lines, k * 15 + 14, 2) + 0;
    SET v_found = 1;
    SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_i;
    IF v_found = 0 THEN
      ROLLBACK;
      SELECT 1 AS rolled_back, 0 AS total;
      LEAVE proc;
    END IF;
    SELECT s_quantity, s_data, ELT(p_d, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10)
      INTO v_sqty, v_sdata, v_dist FROM stock WHERE s_i_id = v_i AND s_w_id = v_sw FOR UPDATE;
    UPDATE stock SET s_quantity = IF(v_sqty < v_qty + 10, v_sqty - v_qty + 91, v_sqty - v_qty), s_ytd = s_ytd + v_qty,
      s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (v_sw <> p_w) WHERE s_i_id = v_i AND s_w_id = v_sw;
    SET v_amount = v_qty * v_price, v_total = v_total + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_next, p_d, p_w, v_ol, v_i, v_sw, NULL, v_qty, v_amount, v_dist);
    SET k = k + 1;
  END WHILE;
  COMMIT;
  SELECT 0 AS rolled_back, v_total * (1 - v_disc) * (1 + v_w_tax + v_d_tax) AS total;
END`},
	// Payment (clause 2.5.2): p_c = 0 picks the customer by last name.
	{"tpcc_payment", `(IN p_w SMALLINT, IN p_d TINYINT, IN p_cw SMALLINT, IN p_cd TINYINT, IN p_c INT, IN p_last VARCHAR(16), IN p_amount DECIMAL(6,2), IN p_now DATETIME)
BEGIN
  DECLARE v_c INT;
  DECLARE v_wname, v_dname VARCHAR(10);
  DECLARE v_s1, v_s2, v_city VARCHAR(20);
  DECLARE v_state CHAR(2);
  DECLARE v_zip CHAR(9);
  DECLARE v_first, v_clast VARCHAR(16);
  DECLARE v_middle, v_credit CHAR(2);
  DECLARE v_phone CHAR(16);
  DECLARE v_since DATETIME;
  DECLARE v_lim, v_bal DECIMAL(12,2);
  DECLARE v_disc DECIMAL(4,4);
  DECLARE v_data VARCHAR(500);
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_wname, v_s1, v_s2, v_city, v_state, v_zip FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_dname, v_s1, v_s2, v_city, v_state, v_zip FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SET v_c = p_c;
  IF p_c = 0 THEN
    CALL tpcc_customer_by_name(p_cw, p_cd, p_last, v_c);
  END IF;
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance
    INTO v_first, v_middle, v_clast, v_s1, v_s2, v_city, v_state, v_zip, v_phone, v_since, v_credit, v_lim, v_disc, v_bal
    FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c FOR UPDATE;
  IF v_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
      c_data = LEFT(CONCAT(v_c, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, '|', v_data), 500)
      WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_cd, p_cw, p_d, p_w, p_now, p_amount, CONCAT(v_wname, '    ', v_dname));
  COMMIT;
  SELECT v_c AS c_id;
END`},
	// Order-Status (clause 2.6.2), read-only: the customer's last order's
	// lines are the result set (none for a customer with no order).
	{"tpcc_order_status", `(IN p_w SMALLINT, IN p_d TINYINT, IN p_c INT, IN p_last VARCHAR(16))
BEGIN
  DECLARE v_c, v_o INT;
  DECLARE v_bal DECIMAL(12,2);
  DECLARE v_first, v_clast VARCHAR(16);
  DECLARE v_middle CHAR(2);
  DECLARE v_entry DATETIME;
  DECLARE v_carrier TINYINT;
  START TRANSACTION READ ONLY;
  SET v_c = p_c;
  IF p_c = 0 THEN
    CALL tpcc_customer_by_name(p_w, p_d, p_last, v_c);
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO v_bal, v_first, v_middle, v_clast FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  BEGIN
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_o = NULL;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  END;
  SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  COMMIT;
END`},
	// Delivery (clause 2.7.4), every district at once; returns the
	// districts that had no order to deliver.
	{"tpcc_delivery", `(IN p_w SMALLINT, IN p_carrier TINYINT, IN p_now DATETIME)
BEGIN
  DECLARE v_d, v_o, v_c, v_found INT;
  DECLARE v_skipped INT DEFAULT 0;
  DECLARE v_amount DECIMAL(12,2);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  START TRANSACTION;
  SET v_d = 1;
  WHILE v_d <= 10 DO
    SET v_found = 1;
    SELECT no_o_id INTO v_o FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_found = 0 THEN
      SET v_skipped = v_skipped + 1;
    ELSE
      DELETE FROM new_orders WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE order_line SET ol_delivery_d = p_now WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      SELECT SUM(ol_amount) INTO v_amount FROM order_line WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET c_balance = c_balance + IFNULL(v_amount, 0), c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
  SELECT v_skipped AS skipped;
END`},
	// Stock-Level (clause 2.8.2) at READ COMMITTED, which clause 3.4.1
	// allows it, for its one transaction.
	{"tpcc_stock_level", `(IN p_w SMALLINT, IN p_d TINYINT, IN p_threshold SMALLINT)
BEGIN
  DECLARE v_next, v_low INT;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION READ ONLY;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line JOIN stock ON s_i_id = ol_i_id AND s_w_id = ol_w_id
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20 AND s_quantity < p_threshold;
  COMMIT;
  SELECT v_low AS low_stock;
END`},
}

// The calls, prepared on each terminal's connection.
const (
	callNewOrderSQL    = "CALL tpcc_new_order(?, ?, ?, ?, ?, ?, ?)"
	callPaymentSQL     = "CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?)"
	callOrderStatusSQL = "CALL tpcc_order_status(?, ?, ?, ?)"
	callDeliverySQL    = "CALL tpcc_delivery(?, ?, ?)"
	callStockLevelSQL  = "CALL tpcc_stock_level(?, ?, ?)"
)

var callStatements = []string{callNewOrderSQL, callPaymentSQL, callOrderStatusSQL, callDeliverySQL, callStockLevelSQL}

// InstallProcedures creates the procedures in db's current database,
// replacing any of the same name (the body may have changed since they
// were made). It needs the CREATE ROUTINE and ALTER ROUTINE privileges.
// A failure part way leaves some procedures dropped or old, and says
// which; nothing else is touched, and Run installs them all again before
// it uses them, so the next run repairs it.
func InstallProcedures(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, p := range procedures {
		for _, st := range []struct{ what, q string }{
			{"dropping", "DROP PROCEDURE IF EXISTS " + p.name},
			{"creating", "CREATE PROCEDURE " + p.name + " " + p.body},
		} {
			if err := installExec(ctx, conn, st.q); err != nil {
				return fmt.Errorf("tpcc: %s procedure %s: %w", st.what, p.name, err)
			}
		}
	}
	return nil
}

// installExec runs one statement of InstallProcedures (tests make a step
// fail).
var installExec = func(ctx context.Context, conn *sql.Conn, q string) error {
	_, err := conn.ExecContext(ctx, q)
	return err
}

// lineWidth is the width of one order line in New-Order's p_lines.
const lineWidth = 15

// orderLines encodes New-Order's lines for tpcc_new_order, in lock order:
// per line, its number (2 digits), item (6), supply warehouse (5) and
// quantity (2). It runs once per New-Order, so it appends digits rather
// than formatting.
func orderLines(in newOrderInput) string {
	order := lockOrder(in.items)
	b := make([]byte, 0, lineWidth*len(order))
	for _, k := range order {
		it := in.items[k]
		b = appendDigits(b, k+1, 2)
		b = appendDigits(b, it.i, 6)
		b = appendDigits(b, it.supplyW, 5)
		b = appendDigits(b, it.qty, 2)
	}
	return string(b)
}

// appendDigits appends v, not negative, as exactly width digits (zero
// padded; only the last width digits of a larger v).
func appendDigits(b []byte, v, width int) []byte {
	n := len(b)
	b = append(b, make([]byte, width)...)
	for i := n + width - 1; i >= n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// lockOrder is the order in which New-Order locks its stock rows:
// (supply warehouse, item), so two New-Orders never wait on each other
// in a cycle; it returns indexes into items.
func lockOrder(items []orderItem) []int {
	order := make([]int, len(items))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := items[a], items[b]
		if x.supplyW != y.supplyW {
			return x.supplyW - y.supplyW
		}
		return x.i - y.i
	})
	return order
}

// The calls: each runs one procedure and reads its result set.

func (s *session) callNewOrder(ctx context.Context, in newOrderInput, now time.Time) error {
	allLocal := 0
	if in.allLoc {
		allLocal = 1
	}
	var rolledBack int
	var total sql.NullString
	if err := s.row(ctx, callNewOrderSQL, in.w, in.d, in.c, allLocal, len(in.items), orderLines(in), now).Scan(&rolledBack, &total); err != nil {
		return err
	}
	if rolledBack != 0 {
		return errRollback
	}
	return nil
}

func (s *session) callPayment(ctx context.Context, in paymentInput, now time.Time) error {
	var c int
	return s.row(ctx, callPaymentSQL, in.w, in.d, in.cw, in.cd, in.c, in.last, appendFixedString(in.amount, 2), now).Scan(&c)
}

func (s *session) callOrderStatus(ctx context.Context, in orderStatusInput) error {
	rows, err := s.stmts[callOrderStatusSQL].QueryContext(ctx, in.w, in.d, in.c, in.last)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i, sw, qty int
		var amount string
		var delivered sql.NullString
		if err := rows.Scan(&i, &sw, &qty, &amount, &delivered); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *session) callDelivery(ctx context.Context, w, carrier int, now time.Time) (skipped int, err error) {
	err = s.row(ctx, callDeliverySQL, w, carrier, now).Scan(&skipped)
	return skipped, err
}

func (s *session) callStockLevel(ctx context.Context, w, d, threshold int) error {
	var low int
	return s.row(ctx, callStockLevelSQL, w, d, threshold).Scan(&low)
}
