package dbconn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Sentinel errors, matched with errors.Is.
var (
	ErrBadDSN       = errors.New("invalid DSN")
	ErrUnreachable  = errors.New("server unreachable")
	ErrAccessDenied = errors.New("access denied")
)

// Mask returns dsn with its password replaced by "***". A DSN that does not
// parse is reduced to "(unparseable DSN)" so that nothing secret leaks.
func Mask(dsn string) string {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "(unparseable DSN)"
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "***"
	}
	return cfg.FormatDSN()
}

// Open connects and pings with the given timeout (0 means 10 s). Errors are
// wrapped with one of the sentinels and mention the masked DSN, never the
// password.
func Open(ctx context.Context, dsn string, timeout time.Duration) (*sql.DB, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s (expected user:pass@unix(/path/mysqld.sock)/db or user:pass@tcp(host:3306)/db)", ErrBadDSN, redact(err.Error(), dsn))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = timeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 5 * timeout
	}
	cfg.ParseTime = true
	// The driver logs a pooled connection a server restart closed ("bad
	// idle connection", "broken pipe") and then retries on a new one:
	// nothing is lost, and stacktune restarts servers on purpose.
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, Explain(err, dsn)
	}
	return db, nil
}

// Explain wraps a driver error with a sentinel and a hint, naming the masked
// DSN.
func Explain(err error, dsn string) error {
	masked := Mask(dsn)
	var me *mysql.MySQLError
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1698):
		return fmt.Errorf("%w for %s: %s (check the user name and password)", ErrAccessDenied, masked, me.Message)
	case errors.As(err, &me) && (me.Number == 1044 || me.Number == 1142 || me.Number == 1227):
		return fmt.Errorf("%w for %s: %s (the user lacks a privilege; stacktune needs SELECT on performance_schema and PROCESS for reading)", ErrAccessDenied, masked, me.Message)
	case errors.As(err, &oe), errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded), errors.Is(err, mysql.ErrInvalidConn):
		return fmt.Errorf("%w: %s: %s (is the server running, and is the socket path or host:port right?)", ErrUnreachable, masked, redact(err.Error(), dsn))
	}
	return fmt.Errorf("%s: %s", masked, redact(err.Error(), dsn))
}

// redact removes the DSN's password from a message, in case a driver quotes
// it back.
func redact(msg, dsn string) string {
	if cfg, err := mysql.ParseDSN(dsn); err == nil && cfg.Passwd != "" {
		return strings.ReplaceAll(msg, cfg.Passwd, "***")
	}
	if at := strings.LastIndex(dsn, "@"); at > 0 {
		if colon := strings.Index(dsn[:at], ":"); colon >= 0 && colon+1 < at {
			return strings.ReplaceAll(msg, dsn[colon+1:at], "***")
		}
	}
	return msg
}
