package tpcc

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCheckConditions breaks a freshly loaded warehouse in the way each
// consistency condition catches, on a copy of the load each: the
// condition sees it, with the rows that break it counted and named, and
// every other condition still holds. The data is TinySizes': per
// district 60 orders, 1 to 42 delivered at load (their lines 0.00),
// 43 to 60 new.
func TestCheckConditions(t *testing.T) {
	m, db := newDB(t)
	ctx := context.Background()
	if _, err := Load(ctx, db, LoadOptions{Warehouses: 1, Sizes: TinySizes, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, db, "after the load")
	delivered := TinySizes.delivered() // 42
	middle := delivered + TinySizes.NewOrders/2
	// A history row with no district or no customer of the load: it
	// counts in the sums of one condition and not in the others'.
	history := func(cID, cD, cW, d, w int, amount string) string {
		return fmt.Sprintf("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (%d, %d, %d, %d, %d, NOW(), %s, 'x')", cID, cD, cW, d, w, amount)
	}
	orderLine := func(o, d, number int, delivery, amount string) string {
		return fmt.Sprintf("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (%d, %d, 1, %d, 1, 1, %s, 5, %s, 'xxxxxxxxxxxxxxxxxxxxxxxx')", o, d, number, delivery, amount)
	}
	tests := []struct {
		name       string
		condition  int
		corrupt    []string
		violations int64
		example    string // the first example starts so
	}{
		{"a payment counted in W_YTD by no district of the warehouse", 1, []string{
			history(1, 1, 99, 11, 1, "5.00"), // no district 11 (the spec's payments always have one)
			"UPDATE warehouse SET w_ytd = w_ytd + 5 WHERE w_id = 1",
		}, 1, "warehouse 1: w_ytd 6005.00, sum(d_ytd) 6000.00"},
		{"D_NEXT_O_ID moved on without an order", 2, []string{
			"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 3",
		}, 1, "warehouse 1 district 3: d_next_o_id - 1 = 61, max(o_id) 60"},
		{"an order delivered out of turn, the oldest undelivered again", 3, []string{
			// Order middle delivered as Delivery would (its customer
			// charged), order 42 undelivered again (its lines are 0.00):
			// the counts still add up, the new orders have a gap.
			fmt.Sprintf("UPDATE customer SET c_balance = c_balance + (SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = %[1]d), c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 6 AND o_id = %[1]d)", middle),
			fmt.Sprintf("UPDATE orders SET o_carrier_id = 3 WHERE o_w_id = 1 AND o_d_id = 6 AND o_id = %d", middle),
			fmt.Sprintf("UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = %d", middle),
			fmt.Sprintf("DELETE FROM new_orders WHERE no_w_id = 1 AND no_d_id = 6 AND no_o_id = %d", middle),
			fmt.Sprintf("UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 6 AND o_id = %d", delivered),
			fmt.Sprintf("UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = %d", delivered),
			fmt.Sprintf("INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (%d, 6, 1)", delivered),
		}, 1, "warehouse 1 district 6: max 60 - min 42 + 1 = 19, rows 18"},
		{"an order line of no order", 4, []string{
			orderLine(9999, 1, 1, "NULL", "1.00"),
		}, 1, "warehouse 1 district 1: sum(o_ol_cnt) "},
		{"a delivered order undelivered without its new-order row", 5, []string{
			"UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 10",
			"UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = 10",
		}, 1, "warehouse 1 district 4 order 10: o_carrier_id null, new-order row none"},
		{"an order line deleted and O_OL_CNT lowered to match", 6, []string{
			"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 1 AND ol_number = 1",
			"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 1",
		}, 1, "warehouse 1 district 2 order 1: o_ol_cnt "},
		{"an order of 4 lines", 6, []string{
			"UPDATE orders SET o_ol_cnt = 4 WHERE o_w_id = 1 AND o_d_id = 9 AND o_id = 7",
			"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 9 AND ol_o_id = 7 AND ol_number > 4",
		}, 1, "warehouse 1 district 9 order 7: o_ol_cnt 4, order lines 4 numbered 1 to 4"},
		{"an order line of a delivered order undelivered", 7, []string{
			"UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = 10 AND ol_number = 2",
		}, 1, "warehouse 1 district 5 order 10 line 2: ol_delivery_d null, o_carrier_id "},
		{"a payment to the warehouse in no district", 8, []string{
			history(1, 1, 99, 11, 1, "5.00"),
		}, 1, "warehouse 1: w_ytd 6000.00, sum(h_amount) 6005.00"},
		{"a payment moved between districts' D_YTD", 9, []string{
			"UPDATE district SET d_ytd = d_ytd + 5 WHERE d_w_id = 1 AND d_id = 1",
			"UPDATE district SET d_ytd = d_ytd - 5 WHERE d_w_id = 1 AND d_id = 2",
		}, 2, "warehouse 1 district 1: d_ytd 605.00, sum(h_amount) 600.00"},
		{"a payment by a customer not charged", 10, []string{
			history(5, 1, 1, 1, 99, "5.00"), // to no warehouse of the load
		}, 1, "warehouse 1 district 1 customer 5: c_balance -10.00, delivered 0.00 - paid 15.00 = -15.00"},
		{"an extra delivered order", 11, []string{
			"INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (0, 8, 1, 1, NOW(), 1, 5, 1)",
			orderLine(0, 8, 1, "NOW()", "0.00"), orderLine(0, 8, 2, "NOW()", "0.00"), orderLine(0, 8, 3, "NOW()", "0.00"),
			orderLine(0, 8, 4, "NOW()", "0.00"), orderLine(0, 8, 5, "NOW()", "0.00"),
		}, 1, "warehouse 1 district 8: orders 61 - new orders 18 = 43, want 42"},
		{"C_YTD_PAYMENT moved without a payment", 12, []string{
			"UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_w_id = 1 AND c_d_id = 7 AND c_id = 3",
		}, 1, "warehouse 1 district 7 customer 3: c_balance -10.00 + c_ytd_payment 11.00 = 1.00, delivered 0.00"},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.condition, tt.name), func(t *testing.T) {
			c := cloneDB(t, m, "tpcc", fmt.Sprintf("tpcc_c%d", i))
			for _, q := range tt.corrupt {
				if _, err := c.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			res, err := Check(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK() || res.Holds {
				t.Error("the check holds on broken data")
			}
			found := false
			for _, cond := range res.Conditions {
				switch {
				case cond.Number == tt.condition:
					found = true
					if cond.Violations != tt.violations || len(cond.Examples) != int(tt.violations) || !strings.HasPrefix(cond.Examples[0], tt.example) {
						t.Errorf("condition %d: %d violations %q, want %d, the first starting %q", cond.Number, cond.Violations, cond.Examples, tt.violations, tt.example)
					}
				case !cond.OK() || cond.NotChecked != "" || cond.Checked == 0:
					t.Errorf("condition %d (%s) broken too: %d checked, %d violations %v %s", cond.Number, cond.Rule, cond.Checked, cond.Violations, cond.Examples, cond.NotChecked)
				}
			}
			if !found {
				t.Errorf("condition %d not checked", tt.condition)
			}
		})
	}
}
