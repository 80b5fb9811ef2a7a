package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Schema is the DDL of the workload's tables. relations has no index on
// one/another and comments none on entry_id: the faults to be found.
var Schema = []string{
	`CREATE TABLE users (id INT PRIMARY KEY, account_name VARCHAR(64) NOT NULL, nick_name VARCHAR(64) NOT NULL, email VARCHAR(255) NOT NULL)`,
	`CREATE TABLE relations (id INT AUTO_INCREMENT PRIMARY KEY, one INT NOT NULL, another INT NOT NULL, created_at DATETIME NOT NULL)`,
	`CREATE TABLE entries (id INT AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, private TINYINT NOT NULL, body TEXT, created_at DATETIME NOT NULL, KEY user_id (user_id, created_at))`,
	`CREATE TABLE comments (id INT AUTO_INCREMENT PRIMARY KEY, entry_id INT NOT NULL, user_id INT NOT NULL, comment TEXT, created_at DATETIME NOT NULL)`,
}

// Scale sizes the data set.
type Scale struct {
	Users, RelationsPerUser, EntriesPerUser, CommentsPerEntry int
}

// DefaultScale is small enough to load in a few seconds and large enough for
// the scan to show.
var DefaultScale = Scale{Users: 1000, RelationsPerUser: 20, EntriesPerUser: 5, CommentsPerEntry: 2}

// Setup creates database name and loads it deterministically.
func Setup(ctx context.Context, db *sql.DB, name string, sc Scale) error {
	if sc.Users <= 0 {
		return errors.New("workload: scale needs at least one user")
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"`"); err != nil {
		return fmt.Errorf("workload: creating database: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE `"+name+"`"); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	for _, ddl := range Schema {
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("workload: %s: %w", ddl[:40], err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ins := newBulk(conn, "INSERT INTO users (id, account_name, nick_name, email) VALUES ")
	for i := 1; i <= sc.Users; i++ {
		if err := ins.add(ctx, fmt.Sprintf("(%d,'user%d','nick%d','user%d@example.com')", i, i, i, i)); err != nil {
			return err
		}
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	ins = newBulk(conn, "INSERT INTO relations (one, another, created_at) VALUES ")
	for i := 1; i <= sc.Users; i++ {
		for j := 0; j < sc.RelationsPerUser; j++ {
			at := base.Add(time.Duration(rng.IntN(86400*90)) * time.Second).Format(time.DateTime)
			if err := ins.add(ctx, fmt.Sprintf("(%d,%d,'%s')", i, 1+rng.IntN(sc.Users), at)); err != nil {
				return err
			}
		}
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	ins = newBulk(conn, "INSERT INTO entries (user_id, private, body, created_at) VALUES ")
	for i := 1; i <= sc.Users; i++ {
		for j := 0; j < sc.EntriesPerUser; j++ {
			at := base.Add(time.Duration(rng.IntN(86400*90)) * time.Second).Format(time.DateTime)
			if err := ins.add(ctx, fmt.Sprintf("(%d,%d,'entry %d of user %d','%s')", i, rng.IntN(2), j, i, at)); err != nil {
				return err
			}
		}
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	entries := sc.Users * sc.EntriesPerUser
	ins = newBulk(conn, "INSERT INTO comments (entry_id, user_id, comment, created_at) VALUES ")
	for e := 1; e <= entries; e++ {
		for j := 0; j < sc.CommentsPerEntry; j++ {
			at := base.Add(time.Duration(rng.IntN(86400*90)) * time.Second).Format(time.DateTime)
			if err := ins.add(ctx, fmt.Sprintf("(%d,%d,'comment %d','%s')", e, 1+rng.IntN(sc.Users), j, at)); err != nil {
				return err
			}
		}
	}
	return ins.flush(ctx)
}

// bulk batches rows into multi-row INSERTs.
type bulk struct {
	conn   *sql.Conn
	prefix string
	rows   []string
}

func newBulk(conn *sql.Conn, prefix string) *bulk { return &bulk{conn: conn, prefix: prefix} }

func (b *bulk) add(ctx context.Context, row string) error {
	b.rows = append(b.rows, row)
	if len(b.rows) >= 500 {
		return b.flush(ctx)
	}
	return nil
}

func (b *bulk) flush(ctx context.Context) error {
	if len(b.rows) == 0 {
		return nil
	}
	q := b.prefix + strings.Join(b.rows, ",")
	b.rows = b.rows[:0]
	if _, err := b.conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("workload: loading data: %w", err)
	}
	return nil
}

// Options bound a run. Both bounds apply; zero values take the defaults.
type Options struct {
	Database    string
	Connections int           // default 4
	Duration    time.Duration // default 5 s; at most 10 min
	MaxPages    int64         // default 100000
	Users       int           // users in the data set (DefaultScale.Users if 0)
}

// Result counts what a run did. Pages counts completed pages; one cut off
// by the end of the run is in neither Pages nor Errors.
type Result struct {
	Pages, Queries, Errors int64
	Elapsed                time.Duration
	FirstError             string
}

// The statements a page runs, as the naive first version writes them.
const (
	qFriends      = "SELECT * FROM relations WHERE one = ? OR another = ? ORDER BY created_at DESC"
	qUser         = "SELECT id, account_name, nick_name FROM users WHERE id = ?"
	qEntries      = "SELECT id, body, created_at FROM entries WHERE user_id = ? ORDER BY created_at DESC LIMIT 5"
	qCommentCount = "SELECT COUNT(*) FROM comments WHERE entry_id IN (%s)"
	qAddComment   = "INSERT INTO comments (entry_id, user_id, comment, created_at) VALUES (?, ?, ?, NOW())"
	qTouchUser    = "UPDATE users SET nick_name = ? WHERE id = ?"
)

// Run drives the workload until Duration passes, MaxPages pages are done or
// ctx ends, whichever comes first.
func Run(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	if o.Database == "" {
		return Result{}, errors.New("workload: no database")
	}
	conns := orDefault(o.Connections, 4)
	dur := o.Duration
	if dur <= 0 {
		dur = 5 * time.Second
	}
	if dur > 10*time.Minute {
		return Result{}, fmt.Errorf("workload: duration %s is over the 10 min bound", dur)
	}
	maxPages := o.MaxPages
	if maxPages <= 0 {
		maxPages = 100000
	}
	users := orDefault(o.Users, DefaultScale.Users)
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var started, pages, queries, errs atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			conn, err := db.Conn(ctx)
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, "USE `"+o.Database+"`"); err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			for ctx.Err() == nil && started.Add(1) <= maxPages {
				n, err := page(ctx, conn, rng, users)
				queries.Add(int64(n))
				switch {
				case err == nil:
					pages.Add(1)
				case ctx.Err() == nil:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}(uint64(w + 1))
	}
	wg.Wait()
	r := Result{Pages: pages.Load(), Queries: queries.Load(), Errors: errs.Load(), Elapsed: time.Since(start)}
	if s, ok := firstErr.Load().(string); ok {
		r.FirstError = s
	}
	return r, nil
}

// page is one home-page view: friends by the OR scan, each friend looked up
// one by one (N+1), recent entries, a comment count with an IN list, and now
// and then a write.
func page(ctx context.Context, conn *sql.Conn, rng *rand.Rand, users int) (int, error) {
	n := 0
	me := 1 + rng.IntN(users)
	rows, err := conn.QueryContext(ctx, qFriends, me, me)
	n++
	if err != nil {
		return n, err
	}
	var friends []int
	for rows.Next() {
		var id, one, another int
		var at []byte
		if err := rows.Scan(&id, &one, &another, &at); err != nil {
			rows.Close()
			return n, err
		}
		if one == me {
			friends = append(friends, another)
		} else {
			friends = append(friends, one)
		}
	}
	rows.Close()
	if len(friends) > 10 {
		friends = friends[:10]
	}
	for _, f := range friends {
		var id int
		var acct, nick string
		err := conn.QueryRowContext(ctx, qUser, f).Scan(&id, &acct, &nick)
		n++
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return n, err
		}
	}
	erows, err := conn.QueryContext(ctx, qEntries, me)
	n++
	if err != nil {
		return n, err
	}
	var ids []string
	for erows.Next() {
		var id int
		var body string
		var at []byte
		if err := erows.Scan(&id, &body, &at); err != nil {
			erows.Close()
			return n, err
		}
		ids = append(ids, fmt.Sprint(id))
	}
	erows.Close()
	if len(ids) > 0 {
		var cnt int
		// Literal IN list, as an ORM writes it: one class whatever its length.
		err := conn.QueryRowContext(ctx, fmt.Sprintf(qCommentCount, strings.Join(ids, ","))).Scan(&cnt)
		n++
		if err != nil {
			return n, err
		}
	}
	if rng.IntN(10) == 0 {
		_, err := conn.ExecContext(ctx, qAddComment, 1+rng.IntN(users*DefaultScale.EntriesPerUser), me, "nice")
		n++
		if err != nil {
			return n, err
		}
		_, err = conn.ExecContext(ctx, qTouchUser, fmt.Sprintf("nick%d-%d", me, rng.IntN(100)), me)
		n++
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
