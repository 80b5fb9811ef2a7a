package dbconn

import (
	"context"
	"database/sql"
	"fmt"
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
