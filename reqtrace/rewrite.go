package reqtrace

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/stacktune/stacktune/nplusone"
)

// The shapes Rewrite recognises, on a fingerprint with its spacing
// normalised (shape: lower case, literals as ?, one space between words,
// none around =).
var (
	reSelect   = regexp.MustCompile(`^select (.+?) from ([\w.` + "`" + `]+)(?: as \w+| \w+)? where (.+?)(?: order by .*?)?(?: limit \?)?$`)
	reEq       = regexp.MustCompile(`^\(?([\w.` + "`" + `]+)=\?\)?$`)
	rePairs    = regexp.MustCompile(`^\(?\(([\w.` + "`" + `]+)=\? and ([\w.` + "`" + `]+)=\?\) or \(([\w.` + "`" + `]+)=\? and ([\w.` + "`" + `]+)=\?\)\)?$`)
	reAggr     = regexp.MustCompile(`^(count|sum|avg|min|max)\(`)
	reInsert   = regexp.MustCompile(`^(insert|replace)(?: ignore)? into ([\w.` + "`" + `]+)`)
	reModifyEq = regexp.MustCompile(`^(update ([\w.` + "`" + `]+) set .+|delete from ([\w.` + "`" + `]+)) where ([\w.` + "`" + `]+)=\?$`)
)

// Rewrite suggests how to turn a statement run once per row into one
// query, from the shape of its fingerprint (fp, as pt-query-digest writes
// it) and a sample:
//
//   - SELECT agg(...) FROM t WHERE c = ?: one grouped query,
//     SELECT c, agg(...) FROM t WHERE c IN (...) GROUP BY c;
//   - SELECT ... FROM t WHERE c = ?: one query with c IN (...) for all
//     the rows, or a JOIN into the query that lists them;
//   - SELECT ... WHERE (a = ? AND b = ?) OR (a = ? AND b = ?) (a check
//     of a pair, as a friendship test per row): the set loaded once per
//     request and each row checked against it in memory;
//   - INSERT/REPLACE of one row: one multi-row INSERT;
//   - UPDATE/DELETE ... WHERE c = ?: one statement with c IN (...);
//   - anything else: the rows loaded in one query (IN (...) or a JOIN).
func Rewrite(fp, sample string) string {
	m := shape(fp)
	if s := reSelect.FindStringSubmatch(m); s != nil {
		cols, table, where := s[1], s[2], s[3]
		if e := reEq.FindStringSubmatch(where); e != nil {
			col := e[1]
			if reAggr.MatchString(cols) {
				return fmt.Sprintf("one grouped query for all the rows: SELECT %s, %s FROM %s WHERE %s IN (...) GROUP BY %s (with an index on %s)", col, cols, table, col, col, col)
			}
			return fmt.Sprintf("one query for all the rows: SELECT %s FROM %s WHERE %s IN (...), or a JOIN of %s into the query that lists the rows", cols, table, col, table)
		}
		if p := rePairs.FindStringSubmatch(where); p != nil && ((p[1] == p[3] && p[2] == p[4]) || (p[1] == p[4] && p[2] == p[3])) {
			return fmt.Sprintf("load the set once per request (one query for the user's rows of %s, both columns %s and %s) and check each row against it in memory, instead of one query per row", table, p[1], p[2])
		}
		if strings.Count(where, "=?") > 0 && !strings.Contains(where, " or ") {
			return fmt.Sprintf("one query for all the rows (the changing key in an IN (...) list, or a JOIN of %s into the query that lists the rows)", table)
		}
	}
	if s := reInsert.FindStringSubmatch(m); s != nil {
		return fmt.Sprintf("one multi-row INSERT INTO %s ... VALUES (...), (...), ... for all the rows, in the order of the primary key", s[2])
	}
	if s := reModifyEq.FindStringSubmatch(m); s != nil {
		table := s[2]
		if table == "" {
			table = s[3]
		}
		return fmt.Sprintf("one statement for all the rows: ... %s ... WHERE %s IN (...)", table, s[4])
	}
	return "load the rows in one query (an IN (...) list or a JOIN) instead of one query per row"
}

// shape normalises a fingerprint's spacing for Rewrite's patterns.
func shape(fp string) string {
	s := strings.Join(strings.Fields(fp), " ")
	s = strings.ReplaceAll(strings.ReplaceAll(s, " =", "="), "= ", "=")
	return strings.TrimRight(s, "; ")
}

// problemLine is a measured pattern in one line (Pattern.Problem): where,
// what, how many times, what it costs and what to do.
func problemLine(n nplusone.Pattern) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s runs %s %.1f times per request on average", n.Endpoint, strings.TrimRight(n.Fingerprint, " "), n.PerRequest)
	if n.Max >= 0 {
		fmt.Fprintf(&b, " (up to %d in one request", n.Max)
		if n.Flagged >= 0 {
			fmt.Fprintf(&b, "; %d of %d requests %d times or more", n.Flagged, n.Requests, n.N)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ": %s per request", seconds(n.TimePerRequestS))
	if n.RequestShare > 0 {
		fmt.Fprintf(&b, ", %.0f%% of the request's time", 100*n.RequestShare)
	}
	fmt.Fprintf(&b, ", %s in the run. Rewrite: %s", seconds(n.TimeS), n.Rewrite)
	return b.String()
}

// seconds formats a duration in seconds for a sentence.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond).String()
}
