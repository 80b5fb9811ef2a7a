package diagnose

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/fixplan"
	"github.com/stacktune/stacktune/nplusone"
)

// maxRewrites bounds the N+1 patterns whose one query is built and
// checked.
const maxRewrites = 10

// rewrites builds, for each N+1 pattern, the one query that replaces its
// loop from one request's calls in the captured slow log (their request
// tags), and checks it on the server in a read-only transaction
// (package fixplan): Result.Rewrites, by fingerprint. It runs before the
// slow log is trimmed back; a failure is recorded, never fatal.
func (r *run) rewrites(ctx context.Context) {
	if len(r.res.NPlusOne) == 0 {
		return
	}
	out := map[string]*fixplan.Rewrite{}
	r.res.Rewrites = out
	var db *databaseHandle
	defer func() {
		if db != nil {
			db.close()
		}
	}()
	for i, n := range r.res.NPlusOne {
		if i >= maxRewrites {
			break
		}
		if n.Fingerprint == "" || out[n.Fingerprint] != nil {
			continue
		}
		rw := &fixplan.Rewrite{Check: fixplan.CheckUnchecked, Unchecked: fixplan.UncheckedNoStatements}
		out[n.Fingerprint] = rw
		loop, err := r.loopOf(ctx, n)
		if err != nil {
			rw.Unchecked, rw.Error = fixplan.UncheckedError, err.Error()
			continue
		}
		if loop == nil {
			continue
		}
		rw.Request, rw.Calls = loop.Request, len(loop.Statements)
		p, err := fixplan.Build(loop.Statements)
		if err != nil {
			rw.Unchecked, rw.Error = fixplan.UncheckedShape, err.Error()
			continue
		}
		if db == nil {
			db = r.openChecker(ctx)
		}
		fixplan.Check(ctx, db.db, p, rw)
		rw.Request = loop.Request
		if db.err != "" && rw.Unchecked == fixplan.UncheckedNoDatabase {
			rw.Error = db.err
		}
	}
}

// loopOf reads one request's calls of n from the captured slow log.
func (r *run) loopOf(ctx context.Context, n nplusone.Pattern) (*fixplan.Loop, error) {
	c := r.res.Capture
	if r.slow == "" || c.EndOffset <= c.StartOffset {
		return nil, nil
	}
	f, err := os.Open(r.slow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return fixplan.LoopFromSlowLog(ctx, io.NewSectionReader(f, c.StartOffset, c.EndOffset-c.StartOffset), n.Fingerprint, n.Endpoint)
}

// databaseHandle is the connection the checks run on: the server's, in
// the classes' default database.
type databaseHandle struct {
	db  *sql.DB
	err string
}

func (h *databaseHandle) close() {
	if h.db != nil {
		h.db.Close()
	}
}

// openChecker opens a connection of stacktune's own in Options.Database
// (the app's statements name their tables without it).
func (r *run) openChecker(ctx context.Context) *databaseHandle {
	h := &databaseHandle{}
	cfg, err := mysql.ParseDSN(r.opt.DSN)
	if err != nil {
		h.err = "the DSN: " + err.Error()
		return h
	}
	if r.opt.Database != "" {
		cfg.DBName = r.opt.Database
	}
	db, err := openOwn(ctx, cfg.FormatDSN(), nil)
	if err != nil {
		h.err = fmt.Sprintf("connecting: %v", err)
		return h
	}
	h.db = db
	return h
}
