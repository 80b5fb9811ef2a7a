package mysqlproxy

import (
	"context"
	"database/sql"
	"fmt"
)

// SizeMaxConns is Options.MaxConns for a proxy in front of a server whose
// max_connections is maxConnections, inUse of them taken: what is free
// less a quarter of it (at least 4) for the server's other clients and
// its administrators, at most DefaultMaxConns, at least 1.
func SizeMaxConns(maxConnections, inUse int) int {
	free := maxConnections - inUse
	return max(1, min(DefaultMaxConns, free-max(4, free/4)))
}

// MaxConnsFor reads the server's max_connections and Threads_connected
// through db and sizes Options.MaxConns from them (SizeMaxConns).
func MaxConnsFor(ctx context.Context, db *sql.DB) (int, error) {
	var maxConns, inUse int
	err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.max_connections, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED')").Scan(&maxConns, &inUse)
	if err != nil {
		return 0, fmt.Errorf("reading max_connections and Threads_connected: %w", err)
	}
	return SizeMaxConns(maxConns, inUse), nil
}
