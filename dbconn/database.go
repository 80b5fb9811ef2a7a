package dbconn

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/stacktune/stacktune/mysqlvar"
)

// currentDatabaseSQL is the connection's default database, "" for none.
const currentDatabaseSQL = "SELECT COALESCE(DATABASE(), '')"

// CurrentDatabase returns the default database of db's connections (the
// DSN's /db part), or "" when the DSN names none.
func CurrentDatabase(ctx context.Context, db *sql.DB) (string, error) {
	var name string
	if err := db.QueryRowContext(ctx, currentDatabaseSQL).Scan(&name); err != nil {
		return "", fmt.Errorf("reading the current database: %w", err)
	}
	return name, nil
}

// OpenServer connects to dsn (Open, no timeout of its own) and says which
// server answered (mysqlvar.Detect); a failure to ask is explained
// (Explain).
func OpenServer(ctx context.Context, dsn string) (*sql.DB, mysqlvar.Server, error) {
	db, err := Open(ctx, dsn, 0)
	if err != nil {
		return nil, mysqlvar.Server{}, err
	}
	srv, err := mysqlvar.Detect(ctx, db)
	if err != nil {
		db.Close()
		return nil, srv, Explain(err, dsn)
	}
	return db, srv, nil
}
