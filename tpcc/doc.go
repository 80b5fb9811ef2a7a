// Package tpcc is stacktune's TPC-C: the schema and a loader, the five
// transactions with the specification's mix, a bounded driver, and the
// consistency checks, against MySQL or MariaDB. It is written from the
// TPC Benchmark C Standard Specification (revision 5.11); no code of
// tpcc-mysql, go-tpc or another kit is used. The 2015 tpcc-mysql contest
// (tpcc-mysql on MySQL, scored in tpmC) is what it is for.
//
// # The load (Load)
//
// Warehouses are the scale. Each warehouse is four units (its warehouse
// and district rows, its stock, its customers with their history, its
// orders with their new orders and order lines), and the item table is
// one more. Units are split into contiguous warehouse ranges, one per
// worker, each on its own connection, and loaded as multi-row INSERTs of
// about 1 MiB in primary-key order, generated on the fly (no file, no
// memory beyond one batch per table). Values follow clause 4.3.3:
// random alphanumeric strings, the "ORIGINAL" marker in 10% of item and
// stock data, last names from the ten syllables (the first 1000
// customers of a district in order, the rest by NURand), 10% bad credit,
// the last 900 orders of each district undelivered. The data depends
// only on the seed: a unit has its own random stream.
//
// A load can always be run again. Each unit finished is recorded in
// tpcc_load; a unit not recorded is first cleared (its warehouse's rows
// deleted from its tables) and loaded again. So a prepare killed at any
// point, by a crash or Ctrl-C, is finished by running it again, never
// failing on a duplicate key, and a prepare with more warehouses than
// before adds the missing ones. tpcc_meta keeps the scale, the sizes and
// the seed; a second prepare with other sizes or seed is refused.
//
// # The run (Run)
//
// Terminals each have a home warehouse and district (terminal i:
// warehouse i mod W, district (i div W) mod 10) and a deck of 100 cards:
// 45 New-Order, 43 Payment, 4 Order-Status, 4 Delivery, 4 Stock-Level,
// shuffled, drawn in turn and shuffled again when empty (clause 5.2.4.2:
// the mix comes from the deck, not from independent draws, so it holds
// exactly over every 100 transactions of a terminal). Inputs follow
// clauses 2.4.1-2.8.1: NURand(1023) customers and NURand(8191) items
// with the run's C constants (C_LAST at a distance of 65-119, not 96 or
// 112, from the load's: clause 2.1.6.1), 1% of New-Orders with an
// unused item that rolls the transaction back (counted as completed, and
// apart as rolled back), 1% remote order lines and 15% remote payments
// when there is more than one warehouse, 60% of customers chosen by last
// name.
//
// With ThinkTimes a run has the spec's ten terminals per warehouse, each
// keying for a fixed time before a transaction (18, 3, 2, 2, 2 s) and
// thinking for a negative-exponential time after it (means 12, 12, 10,
// 5, 5 s, cut at ten times the mean): at most 12.86 tpmC per warehouse,
// against which the result's efficiency is given. Without them each of
// Connections terminals runs transactions back to back, as tpcc-mysql
// does: the figure is throughput, and not a TPC-C result (said in the
// result's notes).
//
// Each terminal has its own connection with every statement prepared on
// it, and runs a transaction between START TRANSACTION and COMMIT on
// that connection, at the server's isolation level (REPEATABLE READ
// unless the server is set otherwise: the level is a setting under
// test), Stock-Level at READ COMMITTED, which clause 3.4.1 allows it, set
// for its one transaction. New-Order locks its stock
// rows in (warehouse, item) order rather than the order keyed, so two
// New-Orders cannot deadlock over stock. A deadlock (error 1213) or a
// lock wait timeout (1205) rolls the transaction back and runs it again
// with the same input, up to MaxRetries times; both are counted, and the
// response time is from the first attempt. Delivery runs at once, not
// queued (as tpcc-mysql runs it): its response time is the whole
// transaction, held to the 5 s limit. A district with no order to
// deliver is skipped and counted (clause 2.7.4.2).
//
// # Stored procedures
//
// With RunOptions.Procedures each transaction is one CALL of a stored
// procedure (tpcc_new_order, tpcc_payment, tpcc_order_status,
// tpcc_delivery, tpcc_stock_level, and tpcc_customer_by_name that
// Payment and Order-Status share) that Run installs first
// (InstallProcedures: dropped and created again, so a changed body is
// never stale), as HammerDB runs TPC-C; without it, one round trip per
// statement, as tpcc-mysql does. The procedures hold the same
// statements and rules: each begins and commits its own transaction,
// New-Order takes its lines already in lock order (encoded in one
// fixed-width string) and rolls back on the unused item, Stock-Level
// sets READ COMMITTED for its one transaction, a customer by last name
// missing is a SIGNAL. An error leaves the procedure at once, and the
// driver rolls back and retries as for statements. The figures of the
// two ways differ (the procedures save the round trips and the client's
// CPU), so the result and its history scenario say which ran ("sp").
//
// The run warms up for WarmUp, then measures Duration; a transaction
// counts when it started and ended inside the measured interval.
// Transactions still running at the end are waited for at most Grace,
// so the whole run is bounded. Response times go into a bounded
// histogram per kind (package histogram, ±3%).
//
// # The result
//
// tpmC (New-Orders per minute), tpmTotal (all five), per kind: completed,
// rolled back, failed, retries, deadlocks, lock wait timeouts, the mix
// achieved against the spec's minimums (43% Payment, 4% each of the
// others), response times (average, median, 90th and 99th percentile,
// max) against the 90th-percentile limits (5 s; 20 s for Stock-Level).
// HistoryRun makes it a record of the run history, with tpmC as the
// score.
//
// A server that goes away during the run is said so: a transaction that
// loses its connection (not a server's error: EOF, a reset, a refused
// dial, or the server's shutdown or kill) is failed, its terminal opens
// a new connection, and when that fails too the server is away from the
// first such loss until a new connection opens (Result.Outages; one
// killed connection on a server still there is no outage). The rates are
// then over the part of the measured interval the server was up
// (Result.Up; no tpmC when it never was), the run is not passed in the
// history, and Run returns the result with ErrServerLost, saying when
// the server went away and whether it came back.
//
// # The check (Check)
//
// Consistency conditions 1-12 of clause 3.3.2. Per warehouse or
// district: W_YTD = sum(D_YTD) (1); D_NEXT_O_ID - 1 = max(O_ID) =
// max(NO_O_ID) (2); max(NO_O_ID) - min(NO_O_ID) + 1 = the rows of
// NEW-ORDER (3); sum(O_OL_CNT) = the rows of ORDER-LINE (4); W_YTD (8)
// and D_YTD (9) = sum(H_AMOUNT) of their payments. Per order: O_CARRIER_ID
// is null exactly when the order has a NEW-ORDER row (5); O_OL_CNT = its
// ORDER-LINE rows (6), which this check also wants numbered 1 to
// O_OL_CNT, with O_OL_CNT 5 to 15, as the load and New-Order make them
// (so a line deleted with O_OL_CNT lowered to match is caught, unless it
// was the last line of an order of more than 5: such an order is valid).
// Per order line: OL_DELIVERY_D is null exactly when its order's
// O_CARRIER_ID is (7). Per customer: C_BALANCE = sum(OL_AMOUNT) of its
// delivered lines - sum(H_AMOUNT) of its payments (10), C_BALANCE +
// C_YTD_PAYMENT = sum(OL_AMOUNT) of its delivered lines (12). They hold
// after a load and after any run, but 11: rows of ORDER - rows of
// NEW-ORDER = the orders delivered at load (2,100) per district, which
// every Delivery raises by one; it is checked only while the data is as
// loaded (Run records in tpcc_meta that a run started, Reload clears
// it), else reported as not checked. 8 and 9 hold from the load on
// because the loader's D_YTD is the history it writes, 10.00 per
// customer (30,000.00 at the spec's sizes, as clause 4.3.3.1 has it),
// and W_YTD ten times that.
//
// Each condition is counted on the server (the rows checked and those
// that break it, one aggregate query) and the first few that break it
// are read only when there are some, so Go reads a handful of rows
// whatever the scale; the server scans the tables, a while on a large
// scale, not to be done during a measured interval.
//
// # Sizes
//
// SpecSizes are the specification's (100,000 items; 3,000 customers and
// orders, 900 of them new, per district). TinySizes scale the per-
// warehouse tables down about a hundredfold so tests load in seconds;
// every code path is the same, but its figures are marked as not TPC-C.
//
// # Concurrency
//
// Load and Run use their own connections from the pool they are given
// and may be called from any goroutine; a run's terminals each own their
// connection and their counters, which are summed at the end.
package tpcc
