package diagnose

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"
)

// qProcesslist reads the connections (information_schema.PROCESSLIST:
// the same columns on MySQL and MariaDB). Without the PROCESS privilege a
// user sees only its own.
const qProcesslist = "SELECT ID, USER, HOST, COALESCE(DB, ''), COMMAND, COALESCE(TIME, 0) FROM information_schema.PROCESSLIST"

// procRow is one connection as the processlist shows it.
type procRow struct {
	Conn
	stateS int64 // seconds in its current command or state
}

// processlist reads the connections by id.
func processlist(ctx context.Context, q queryer) (map[int64]procRow, error) {
	rows, err := q.QueryContext(ctx, qProcesslist)
	if err != nil {
		return nil, fmt.Errorf("reading the processlist: %w", err)
	}
	defer rows.Close()
	out := map[int64]procRow{}
	for rows.Next() {
		var r procRow
		var user, host, cmd sql.NullString
		if err := rows.Scan(&r.ID, &user, &host, &r.DB, &cmd, &r.stateS); err != nil {
			return nil, err
		}
		r.User, r.Host, r.Command = user.String, host.String, cmd.String
		out[r.ID] = r
	}
	return out, rows.Err()
}

// serverThread reports whether a processlist row is the server's own
// (event scheduler, replication, a client still authenticating): not an
// app's connection.
func serverThread(r procRow) bool {
	switch strings.ToLower(r.User) {
	case "system user", "event_scheduler", "unauthenticated user":
		return true
	}
	switch c := strings.ToLower(r.Command); {
	case c == "daemon", c == "killed", strings.HasPrefix(c, "binlog dump"), strings.HasPrefix(c, "slave_"), strings.HasPrefix(c, "replica_"):
		return true
	}
	return false
}

// hostOnly is a processlist host without its port ("10.0.0.5:51234" →
// "10.0.0.5"; "localhost" stays).
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// connWatch finds the connections that existed before the capture's
// change: their id is below boundary (the id of a connection opened right
// after it). firstSeen is when stacktune first saw each one, for a lower
// bound of its age.
type connWatch struct {
	q         queryer
	own       map[int64]bool // stacktune's own connections
	boundary  int64
	firstSeen map[int64]time.Time
}

// see records the connections open now (their first sighting).
func (w *connWatch) see(ctx context.Context) (map[int64]procRow, error) {
	rows, err := processlist(ctx, w.q)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for id := range rows {
		if _, ok := w.firstSeen[id]; !ok {
			w.firstSeen[id] = now
		}
	}
	return rows, nil
}

// uncaptured lists the connections open now that were opened before the
// change, oldest first.
func (w *connWatch) uncaptured(ctx context.Context) ([]Conn, error) {
	rows, err := w.see(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []Conn
	for id, r := range rows {
		if id >= w.boundary || w.own[id] || serverThread(r) {
			continue
		}
		c := r.Conn
		c.AgeAtLeastS = max(float64(r.stateS), now.Sub(w.firstSeen[id]).Seconds())
		c.AgeAtLeastS = float64(int64(c.AgeAtLeastS*10)) / 10
		c.Host = hostOnly(c.Host)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// groupConns counts connections by user@host, most first.
func groupConns(cs []Conn) []ConnGroup {
	idx := map[string]int{}
	var gs []ConnGroup
	for _, c := range cs {
		k := c.User + "@" + c.Host
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, ConnGroup{User: c.User, Host: c.Host, IDs: []int64{}})
		}
		g := &gs[i]
		g.Count++
		if len(g.IDs) < maxGroupIDs {
			g.IDs = append(g.IDs, c.ID)
		}
		g.AgeAtLeastS = max(g.AgeAtLeastS, c.AgeAtLeastS)
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Count > gs[j].Count })
	return gs
}

// maxGroupIDs bounds the ids listed per user@host.
const maxGroupIDs = 10

// connFix says how to capture the connections a check found.
func connFix(n int, restart string) string {
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("%d connection(s) opened before long_query_time was set to 0 keep their session's old value, so their queries are not in the capture", n)
	if restart != "" {
		return what + fmt.Sprintf(" (still open after %q): make the app close its pooled connections on restart, or give --app-restart a command that does", restart)
	}
	return what + ": give --app-restart CMD (a command run after the change and before the bench, e.g. --app-restart 'systemctl restart app'), or make the app reconnect (restart it, or cap its pool's connection lifetime) and run diagnose again"
}
