package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
)

// mysql-bulk-insert: an application that inserts rows one statement at a
// time (a loop over a request's items) pays a round trip, a parse and,
// with autocommit, a commit per row; the smartphone game backend made them one multi-row
// INSERT with the rows sorted in the table's key order, so that two
// requests inserting into the same table take their locks in the same
// order and do not deadlock. From the digest of the interval (--queries):
// a class of single-row INSERTs into one table called several times per
// request (the access log of the same interval gives the requests) or in
// a steady stream.
var mysqlBulkInsert = ruleFunc{"mysql-bulk-insert", LayerMySQL, checkMySQLBulkInsert}

const (
	// bulkMinCalls are the calls of a class over the interval that make
	// it worth a change.
	bulkMinCalls = 20
	// bulkPerRequest is the calls per request that show a loop.
	bulkPerRequest = 2.0
	// bulkRate is the calls per second that show a stream, when the
	// requests are not known.
	bulkRate = 10.0
)

func checkMySQLBulkInsert(c *Context) []Finding {
	q := c.Queries
	if q == nil {
		return nil
	}
	var out []Finding
	for _, cl := range q.Classes {
		verb, table, ok := insertTarget(cl.Fingerprint)
		if !ok || cl.Count < bulkMinCalls || valueTuples(cl.Sample) != 1 {
			continue
		}
		src := fmt.Sprintf("digest of the %s (%s)", q.Source, q.Window)
		f := Finding{
			ID:       "mysql-bulk-insert",
			Severity: Info,
			Evidence: []Evidence{ev("statement", cl.Fingerprint, "", src), ev("calls", fmt.Sprint(cl.Count), "", src),
				ev("time", num(cl.TimeTotal), "s", src), ev("sample", cutEvidence(cl.Sample), "", src+", the slowest call")},
			Source: "the smartphone game backend's write-up (single-row INSERTs made one multi-row INSERT, rows in index order to avoid deadlocks)",
		}
		perReq, rate := 0.0, 0.0
		if h := c.HTTPLog; h != nil && h.Requests > 0 && h.Window == q.Window {
			perReq = float64(cl.Count) / float64(h.Requests)
			f.Evidence = append(f.Evidence, ev("calls per request", num(perReq), "", fmt.Sprintf("calls / the %d requests of the access log over the same window", h.Requests)))
		}
		if q.Seconds > 0 {
			rate = float64(cl.Count) / q.Seconds
			f.Evidence = append(f.Evidence, ev("calls per second", num(rate), "", src))
		}
		switch {
		case perReq >= bulkPerRequest:
			f.Title = fmt.Sprintf("%s inserts into %s one row at a time, %s times per request", strings.ToUpper(verb), table, num(perReq))
			f.Severity = Warning
		case perReq == 0 && rate >= bulkRate:
			f.Title = fmt.Sprintf("%s inserts into %s one row at a time, %s times a second", strings.ToUpper(verb), table, num(rate))
		default:
			continue
		}
		f.Change = &changeset.Change{Kind: changeset.App, Target: "application code writing " + table, Name: "row inserts",
			From: fmt.Sprintf("one %s per row", strings.ToUpper(verb)),
			To:   fmt.Sprintf("one %s INTO %s (...) VALUES (...), (...), ... per request, its rows sorted by the table's primary (or unique) key", strings.ToUpper(verb), table), Direction: Set}
		f.Effect = "one round trip, one parse and one commit for the request's rows instead of one each; sorted rows make concurrent requests lock them in the same order, so they wait instead of deadlocking"
		f.Risk = changeset.Risk{Note: "a change to the application's code; keep each statement under max_allowed_packet (batches of a few hundred rows), and an error now fails the whole batch"}
		out = append(out, f)
	}
	return out
}

// insertTarget reads "insert into t ..." (also "insert ignore into",
// "replace into") from a fingerprint.
func insertTarget(fp string) (verb, table string, ok bool) {
	f := strings.Fields(fp)
	if len(f) < 3 {
		return "", "", false
	}
	verb = f[0]
	if verb != "insert" && verb != "replace" {
		return "", "", false
	}
	i := 1
	for i < len(f) && (f[i] == "ignore" || f[i] == "low_priority" || f[i] == "delayed" || f[i] == "high_priority") {
		i++
	}
	if i < len(f) && f[i] == "into" {
		i++
	}
	if i >= len(f) || strings.Contains(fp, " select ") {
		return "", "", false
	}
	table, _, _ = strings.Cut(f[i], "(")
	return verb, strings.Trim(table, "`"), table != ""
}

// valueTuples counts the parenthesised rows after VALUES in an INSERT (0
// when it has no VALUES list, e.g. INSERT ... SELECT or SET).
func valueTuples(sql string) int {
	low := strings.ToLower(sql)
	at := -1
	outsideQuotes(low, 0, func(i int) bool {
		if strings.HasPrefix(low[i:], "values") && (i == 0 || !isWordByte(low[i-1])) && (i+6 == len(low) || !isWordByte(low[i+6])) {
			at = i + 6
			return false
		}
		return true
	})
	if at < 0 {
		return 0
	}
	n, depth := 0, 0
	outsideQuotes(low, at, func(i int) bool {
		switch ch := low[i]; {
		case ch == '(':
			if depth == 0 {
				n++
			}
			depth++
		case ch == ')':
			depth--
		case depth == 0 && isWordByte(ch):
			return false // ON DUPLICATE KEY UPDATE, RETURNING: the rows are over
		}
		return true
	})
	return n
}

// outsideQuotes calls f with each index of s from start that is not in a
// quoted string or identifier ('...', "...", `...`, backslash escapes),
// until f returns false.
func outsideQuotes(s string, start int, f func(i int) bool) {
	var quote byte
	for i := start; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"' || ch == '`':
			quote = ch
		default:
			if !f(i) {
				return
			}
		}
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// cutEvidence keeps a sample short in evidence.
func cutEvidence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// blobTables maps "schema.table" and "table" to its TEXT/BLOB columns.
func blobTables(cols []collect.BlobColumn) map[string][]collect.BlobColumn {
	m := map[string][]collect.BlobColumn{}
	for _, b := range cols {
		t := strings.ToLower(b.Table)
		m[t] = append(m[t], b)
		m[strings.ToLower(b.Schema)+"."+t] = append(m[strings.ToLower(b.Schema)+"."+t], b)
	}
	return m
}
