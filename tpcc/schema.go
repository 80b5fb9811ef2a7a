package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sizes are the cardinalities of one warehouse and of the item table.
// SpecSizes are the specification's (clause 4.2.2); anything smaller is
// for tests and quick looks only, and results on it are not TPC-C
// figures (the run says so).
type Sizes struct {
	// Items is the item table's rows (100,000) and each warehouse's
	// stock rows.
	Items int `json:"items"`
	// Customers is customers per district (3,000); each district also
	// starts with as many orders and history rows.
	Customers int `json:"customers"`
	// NewOrders is the undelivered orders per district (the last 900 of
	// the 3,000).
	NewOrders int `json:"new_orders"`
}

// Districts per warehouse, fixed by the spec.
const Districts = 10

// SpecSizes are the specification's cardinalities.
var SpecSizes = Sizes{Items: 100000, Customers: 3000, NewOrders: 900}

// TinySizes load in seconds, for tests: every table and every
// transaction is exercised, at about 1/100 of the data.
var TinySizes = Sizes{Items: 1000, Customers: 60, NewOrders: 18}

// Spec reports whether the sizes are the specification's.
func (s Sizes) Spec() bool { return s == SpecSizes }

// Validate refuses sizes no load can make sense of.
func (s Sizes) Validate() error {
	switch {
	case s.Items < 100 || s.Items > 10000000:
		return fmt.Errorf("tpcc: %d items: want 100 to 10,000,000 (the spec has 100,000)", s.Items)
	case s.Customers < 10 || s.Customers > 100000:
		return fmt.Errorf("tpcc: %d customers per district: want 10 to 100,000 (the spec has 3,000)", s.Customers)
	case s.NewOrders < 1 || s.NewOrders >= s.Customers:
		return fmt.Errorf("tpcc: %d new orders per district: want 1 to %d (the spec has 900 of 3,000)", s.NewOrders, s.Customers-1)
	}
	return nil
}

// delivered is the highest order id delivered at load time (2,100).
func (s Sizes) delivered() int { return s.Customers - s.NewOrders }

// districtYTD is a district's D_YTD at load, in whole units: the
// history's 10.00 per customer (30,000.00 at the spec's sizes, clause
// 4.3.3.1), so conditions 8 and 9 (W_YTD and D_YTD are the sums of
// H_AMOUNT) hold at any size. W_YTD is ten times it.
func (s Sizes) districtYTD() int { return 10 * s.Customers }

// MaxWarehouses bounds the scale: w_id is a SMALLINT.
const MaxWarehouses = 32767

// Tables are the nine TPC-C tables in load order.
var Tables = []string{"warehouse", "district", "customer", "history", "new_orders", "orders", "order_line", "item", "stock"}

// schema is the DDL, one statement per table (clause 1.3), with the
// secondary indexes the transactions need: customers by last name
// (Payment and Order-Status) and orders by customer (Order-Status).
// history has no key in the spec; InnoDB gives it a hidden one.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS warehouse (
  w_id SMALLINT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS district (
  d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
  d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS customer (
  c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME,
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt SMALLINT, c_delivery_cnt SMALLINT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id), KEY idx_customer_last (c_w_id, c_d_id, c_last, c_first)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS history (
  h_c_id INT, h_c_d_id TINYINT, h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT,
  h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS new_orders (
  no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS orders (
  o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT,
  o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id), KEY idx_orders_customer (o_w_id, o_d_id, o_c_id, o_id)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS order_line (
  ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL,
  ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d DATETIME, ol_quantity TINYINT,
  ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS item (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
  PRIMARY KEY (i_id)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS stock (
  s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
  s_ytd DECIMAL(8,0), s_order_cnt SMALLINT, s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id)) ENGINE=InnoDB`,
	// What the loader knows: the scale and sizes (tpcc_meta) and which
	// units are complete (tpcc_load), so a second prepare resumes.
	`CREATE TABLE IF NOT EXISTS tpcc_meta (k VARCHAR(32) NOT NULL, v VARCHAR(255) NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS tpcc_load (unit VARCHAR(64) NOT NULL, row_count BIGINT NOT NULL, done_at DATETIME NOT NULL, PRIMARY KEY (unit)) ENGINE=InnoDB`,
}

// Info is what a loaded database says about itself.
type Info struct {
	Warehouses int   `json:"warehouses"`
	Sizes      Sizes `json:"sizes"`
	// Seed is the load's seed; the run's NURand constants derive from
	// it (clause 2.1.6.1).
	Seed uint64 `json:"seed"`
	// Complete is false while some unit of the load is missing.
	Complete bool `json:"complete"`
	Missing  int  `json:"missing_units,omitempty"`
	// Ran is when the first run since the load started (UTC, as the
	// server prints a DATETIME), empty while the data is as loaded:
	// consistency condition 11 holds only then.
	Ran string `json:"ran,omitempty"`
}

// ErrNotLoaded says a database holds no TPC-C load (run prepare first).
var ErrNotLoaded = errors.New("tpcc: the database holds no TPC-C load: run stacktune tpcc prepare first")

const (
	selectMetaSQL = "SELECT k, v FROM tpcc_meta"
	upsertMetaSQL = "INSERT INTO tpcc_meta (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	countDoneSQL  = "SELECT COUNT(*) FROM tpcc_load"
	// ranKey in tpcc_meta is when the first run since the load started
	// (Info.Ran); markRanSQL sets it once, Reload removes it.
	ranKey         = "first_run"
	markRanSQL     = "INSERT IGNORE INTO tpcc_meta (k, v) VALUES ('" + ranKey + "', DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:%s'))"
	clearRanSQL    = "DELETE FROM tpcc_meta WHERE k = '" + ranKey + "'"
	tableExistsSQL = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tpcc_meta'"
)

// ReadInfo reads the scale of the load in db's current database.
func ReadInfo(ctx context.Context, db *sql.DB) (*Info, error) {
	var n int
	if err := db.QueryRowContext(ctx, tableExistsSQL).Scan(&n); err != nil {
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	if n == 0 {
		return nil, ErrNotLoaded
	}
	rows, err := db.QueryContext(ctx, selectMetaSQL)
	if err != nil {
		return nil, fmt.Errorf("tpcc: reading tpcc_meta: %w", err)
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("tpcc: reading tpcc_meta: %w", err)
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tpcc: reading tpcc_meta: %w", err)
	}
	if len(meta) == 0 {
		return nil, ErrNotLoaded
	}
	info := &Info{}
	var bad []string
	num := func(k string) int {
		v, err := strconv.Atoi(meta[k])
		if err != nil {
			bad = append(bad, k)
		}
		return v
	}
	info.Warehouses = num("warehouses")
	info.Sizes = Sizes{Items: num("items"), Customers: num("customers"), NewOrders: num("new_orders")}
	seed, err := strconv.ParseUint(meta["seed"], 10, 64)
	if err != nil {
		bad = append(bad, "seed")
	}
	info.Seed = seed
	info.Ran = meta[ranKey]
	if len(bad) > 0 {
		return nil, fmt.Errorf("tpcc: tpcc_meta has no valid %s: the load is damaged; drop the database and prepare again", strings.Join(bad, ", "))
	}
	if err := info.Sizes.Validate(); err != nil {
		return nil, err
	}
	var done int
	if err := db.QueryRowContext(ctx, countDoneSQL).Scan(&done); err != nil {
		return nil, fmt.Errorf("tpcc: reading tpcc_load: %w", err)
	}
	total := len(plan(info.Warehouses))
	info.Missing = max(0, total-done)
	info.Complete = info.Missing == 0
	return info, nil
}
