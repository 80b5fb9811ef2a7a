package advise

import (
	"fmt"
	"strings"
)

// mysql-aborted-connects: Aborted_connects counts connection attempts that
// failed (wrong password or database, no privilege, a handshake that timed
// out, a full server). The smartphone game backend answered it with thread_cache_size and
// wait_timeout, which do not prevent any of those: the rule says which
// cause the counters show instead. wait_timeout ends idle sessions (they
// count in Aborted_clients, not here).
var mysqlAbortedConnects = ruleFunc{"mysql-aborted-connects", LayerMySQL, checkMySQLAbortedConnects}

// abortedCauses are the counters that split Aborted_connects (MySQL 5.6+,
// MariaDB 10.0+; Access_denied_errors is MariaDB's and Percona's).
var abortedCauses = []struct{ status, cause string }{
	{"Connection_errors_max_connections", "max_connections reached (see mysql-max-connections)"},
	{"Access_denied_errors", "wrong user, password or database, or a missing privilege: fix the client's credentials"},
	{"Connection_errors_internal", "server errors such as out of memory"},
	{"Connection_errors_peer_address", "errors looking up the client's address"},
	{"Connection_errors_select", "errors in the listener's poll()"},
	{"Connection_errors_accept", "errors in accept()"},
	{"Connection_errors_tcpwrap", "refused by libwrap"},
}

func checkMySQLAbortedConnects(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	d, ok := c.Delta("Aborted_connects")
	if !ok || d <= 0 {
		return nil
	}
	r, _ := c.Rate("Aborted_connects")
	f := Finding{
		ID:       "mysql-aborted-connects",
		Title:    fmt.Sprintf("%s connection attempts failed over the interval (%s/s)", num(d), num(r)),
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Aborted_connects")},
		Source:   "the smartphone game backend's write-up (corrected: it raised thread_cache_size and lowered wait_timeout, which prevent none of these); MySQL manual 'Communication Errors and Aborted Connections'",
	}
	if r >= 1 {
		f.Severity = Warning
	}
	explained := 0.0
	var causes []string
	for _, ac := range abortedCauses {
		if cd, ok := c.Delta(ac.status); ok && cd > 0 {
			f.Evidence = append(f.Evidence, c.deltaEv(ac.status))
			explained += cd
			causes = append(causes, fmt.Sprintf("%s × %s", num(cd), ac.cause))
		}
	}
	if rest := d - explained; rest > 0 {
		causes = append(causes, fmt.Sprintf("%s × no counter names the cause: usually a client that did not finish the handshake within connect_timeout, a client killed mid-connect, or a TLS or protocol mismatch (the error log shows them with log_warnings >= 2)", num(rest)))
	}
	if c.Has("connect_timeout") {
		f.Evidence = append(f.Evidence, c.varEv("connect_timeout", "s"))
	}
	f.Effect = "causes: " + strings.Join(causes, "; ") +
		". Neither thread_cache_size nor wait_timeout changes these; Aborted_clients (sessions that ended without closing) is the counter wait_timeout affects"
	return []Finding{f}
}
