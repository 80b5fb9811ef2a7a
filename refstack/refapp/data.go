package refapp

import (
	"context"
	"crypto/sha512"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Schema is the DDL of the first version, as it was written: relations has
// no index on one or another, footprints none at all, comments none on
// entry_id or created_at. Generate drops and recreates these tables.
var Schema = []string{
	`CREATE TABLE users (
  id INT NOT NULL PRIMARY KEY,
  account_name VARCHAR(64) NOT NULL UNIQUE,
  nick_name VARCHAR(64) NOT NULL,
  email VARCHAR(255) NOT NULL UNIQUE,
  passhash VARCHAR(128) NOT NULL,
  salt VARCHAR(32) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE relations (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  one INT NOT NULL,
  another INT NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE profiles (
  user_id INT NOT NULL PRIMARY KEY,
  first_name VARCHAR(64) NOT NULL,
  last_name VARCHAR(64) NOT NULL,
  sex VARCHAR(16) NOT NULL,
  birthday DATE NOT NULL,
  pref VARCHAR(16) NOT NULL,
  updated_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE entries (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id INT NOT NULL,
  private TINYINT NOT NULL,
  title VARCHAR(255) NOT NULL,
  body TEXT NOT NULL,
  created_at DATETIME NOT NULL,
  KEY user_id (user_id, created_at),
  KEY created_at (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE comments (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  entry_id INT NOT NULL,
  user_id INT NOT NULL,
  comment TEXT NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE footprints (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id INT NOT NULL,
  owner_id INT NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
	// generated remembers the last generated id of each table, so
	// /initialize can delete what a run added.
	`CREATE TABLE generated (
  name VARCHAR(32) NOT NULL PRIMARY KEY,
  max_id INT NOT NULL
) ENGINE=InnoDB`,
}

// tables in drop order.
var tables = []string{"generated", "footprints", "comments", "entries", "profiles", "relations", "users"}

// sizes is how much data a scale factor means.
type sizes struct {
	Users             int
	FriendsPerUser    int // relations rows per user (stored once per pair)
	EntriesPerUser    int
	CommentsPerEntry  int
	FootprintsPerUser int
}

// sizesFor returns the sizes of scale s: 1000 users per unit, each with 40
// relations, 10 entries, 3 comments per entry and 30 footprints; scale 1
// is about 110k rows.
func sizesFor(s int) sizes {
	return sizes{Users: 1000 * s, FriendsPerUser: 40, EntriesPerUser: 10, CommentsPerEntry: 3, FootprintsPerUser: 30}
}

// tinySizes is the test data set: it still holds every account and entry
// id the scenario names (100 users, 500 entries).
var tinySizes = sizes{Users: 100, FriendsPerUser: 10, EntriesPerUser: 5, CommentsPerEntry: 2, FootprintsPerUser: 5}

// AccountName is the account name of user id (1-based): user00001.
func AccountName(id int) string { return fmt.Sprintf("user%05d", id) }

// Email is the login e-mail address of user id.
func Email(id int) string { return AccountName(id) + "@example.com" }

// Password is the plain password of user id.
func Password(id int) string { return "pw-" + AccountName(id) }

// IsPrivate tells whether the generated entry id is private: every fourth.
func IsPrivate(entryID int) bool { return entryID%4 == 0 }

// Epoch is the time the generated data ends: every generated row is
// created before it, so rows added by a run sort first.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// passHash is the stored password hash: hex(sha512(password + salt)).
func passHash(password, salt string) string {
	h := sha512.Sum512([]byte(password + salt))
	return hex.EncodeToString(h[:])
}

// Generate drops and recreates the reference app's tables in db's current
// database and loads them deterministically: the same scale always gives
// the same rows. Scale 1 is 1000 users, 20k relations, 10k entries (every
// fourth private), 30k comments and 30k footprints; it loads in a few
// seconds. User n logs in with Email(n) and Password(n).
func Generate(ctx context.Context, db *sql.DB, scale int) error {
	if scale < 1 {
		return errors.New("refapp: scale must be at least 1")
	}
	return generate(ctx, db, sizesFor(scale))
}

// GenerateSmall loads the small data set the tests use (100 users, 10
// relations each, 500 entries, 1000 comments, 500 footprints) as Generate
// does: it holds every account and entry id the scenario names, and loads
// in well under a second, for tests of other packages that need the app.
func GenerateSmall(ctx context.Context, db *sql.DB) error { return generate(ctx, db, tinySizes) }

// Load creates the database refapp through admin, opens it at dsn (a DSN
// naming that database) and loads it: the small set at scale 0, Generate's
// above it. The caller closes the connection it returns.
func Load(ctx context.Context, admin *sql.DB, dsn string, scale int) (*sql.DB, error) {
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE refapp"); err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	if scale > 0 {
		err = Generate(ctx, db, scale)
	} else {
		err = GenerateSmall(ctx, db)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func generate(ctx context.Context, db *sql.DB, sz sizes) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("refapp: %w", err)
	}
	defer conn.Close()
	for _, t := range tables {
		if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("refapp: dropping %s: %w", t, err)
		}
	}
	for _, ddl := range Schema {
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("refapp: creating tables: %w", err)
		}
	}
	rng := rand.New(rand.NewPCG(5, 2015))
	span := 86400 * 365
	at := func() string {
		return Epoch.Add(-time.Duration(1+rng.IntN(span)) * time.Second).Format(time.DateTime)
	}
	n := sz.Users
	prefs := []string{"Tokyo", "Osaka", "Hokkaido", "Okinawa", "Kyoto", "Fukuoka"}
	load := func(prefix string, rows func(add func(string) error) error) error {
		b := &bulk{conn: conn, prefix: prefix}
		if err := rows(b.add(ctx)); err != nil {
			return err
		}
		return b.flush(ctx)
	}
	err = load("INSERT INTO users (id, account_name, nick_name, email, passhash, salt) VALUES ", func(add func(string) error) error {
		for i := 1; i <= n; i++ {
			salt := fmt.Sprintf("%08x", rng.Uint32())
			if err := add(fmt.Sprintf("(%d,'%s','nick %d','%s','%s','%s')", i, AccountName(i), i, Email(i), passHash(Password(i), salt), salt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = load("INSERT INTO profiles (user_id, first_name, last_name, sex, birthday, pref, updated_at) VALUES ", func(add func(string) error) error {
			for i := 1; i <= n; i++ {
				sex := []string{"male", "female", "other"}[rng.IntN(3)]
				bd := time.Date(1960+rng.IntN(40), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
				if err := add(fmt.Sprintf("(%d,'First%d','Last%d','%s','%s','%s','%s')", i, i, i, sex, bd, prefs[rng.IntN(len(prefs))], at())); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		// Each pair is stored once, in either order: finding a user's
		// friends needs one = ? OR another = ?.
		err = load("INSERT INTO relations (one, another, created_at) VALUES ", func(add func(string) error) error {
			seen := make(map[[2]int]bool)
			for i := 1; i <= n; i++ {
				for j := 0; j < sz.FriendsPerUser/2; j++ {
					f := 1 + rng.IntN(n)
					k := [2]int{min(i, f), max(i, f)}
					if f == i || seen[k] {
						continue
					}
					seen[k] = true
					one, another := i, f
					if rng.IntN(2) == 0 {
						one, another = f, i
					}
					if err := add(fmt.Sprintf("(%d,%d,'%s')", one, another, at())); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	entries := n * sz.EntriesPerUser
	if err == nil {
		err = load("INSERT INTO entries (id, user_id, private, title, body, created_at) VALUES ", func(add func(string) error) error {
			for id := 1; id <= entries; id++ {
				u := 1 + rng.IntN(n)
				priv := 0
				if IsPrivate(id) {
					priv = 1
				}
				body := strings.Repeat(fmt.Sprintf("Diary line %d of entry %d. ", rng.IntN(1000), id), 1+rng.IntN(8))
				if err := add(fmt.Sprintf("(%d,%d,%d,'Entry %d','%s','%s')", id, u, priv, id, body, at())); err != nil {
					return err
				}
			}
			return nil
		})
	}
	comments := entries * sz.CommentsPerEntry
	if err == nil {
		err = load("INSERT INTO comments (id, entry_id, user_id, comment, created_at) VALUES ", func(add func(string) error) error {
			for id := 1; id <= comments; id++ {
				if err := add(fmt.Sprintf("(%d,%d,%d,'Comment %d: nice entry.','%s')", id, 1+rng.IntN(entries), 1+rng.IntN(n), id, at())); err != nil {
					return err
				}
			}
			return nil
		})
	}
	footprints := n * sz.FootprintsPerUser
	if err == nil {
		err = load("INSERT INTO footprints (id, user_id, owner_id, created_at) VALUES ", func(add func(string) error) error {
			for id := 1; id <= footprints; id++ {
				u, o := 1+rng.IntN(n), 1+rng.IntN(n)
				if err := add(fmt.Sprintf("(%d,%d,%d,'%s')", id, u, o, at())); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	q := "INSERT INTO generated (name, max_id) SELECT 'relations', COALESCE(MAX(id), 0) FROM relations"
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("refapp: %w", err)
	}
	q = fmt.Sprintf("INSERT INTO generated (name, max_id) VALUES ('entries', %d), ('comments', %d), ('footprints', %d)", entries, comments, footprints)
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("refapp: %w", err)
	}
	return nil
}

// bulk batches rows into multi-row INSERTs.
type bulk struct {
	conn   *sql.Conn
	prefix string
	rows   []string
	size   int
}

func (b *bulk) add(ctx context.Context) func(string) error {
	return func(row string) error {
		b.rows = append(b.rows, row)
		b.size += len(row)
		if b.size >= 256<<10 {
			return b.flush(ctx)
		}
		return nil
	}
}

func (b *bulk) flush(ctx context.Context) error {
	if len(b.rows) == 0 {
		return nil
	}
	q := b.prefix + strings.Join(b.rows, ",")
	b.rows, b.size = b.rows[:0], 0
	if _, err := b.conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("refapp: loading data: %w", err)
	}
	return nil
}
