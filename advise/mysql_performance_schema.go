package advise

import "github.com/stacktune/stacktune/changeset"

// mysql-performance-schema: statement digests from performance_schema
// (stacktune digest --pfs) show where query time goes without a slow log.
// It is off by default in MariaDB and read-only at run time.
var mysqlPerformanceSchema = ruleFunc{"mysql-performance-schema", LayerMySQL, checkMySQLPerformanceSchema}

func checkMySQLPerformanceSchema(c *Context) []Finding {
	if !c.mysqlReady() || !c.Has("performance_schema") {
		return nil
	}
	ps := c.My.PerformanceSchema
	f := Finding{
		ID:       "mysql-performance-schema",
		Severity: Info,
		Source:   "the ISUCON5 qualifier write-up (slow-log digests ranked by total time); MySQL manual 'Performance Schema Statement Digests'",
	}
	if !ps.Enabled {
		f.Title = "performance_schema is off: no statement digests"
		f.Evidence = []Evidence{c.varEv("performance_schema", "")}
		f.Change = c.MySQLChange("performance_schema", "ON", Set)
		f.Effect = "stacktune digest --pfs can rank queries by total time from two readings, without a slow log"
		f.Risk = changeset.Risk{Restart: true, Memory: "performance_schema allocates its tables at start, typically 100-400 MiB, sized from max_connections and the table cache",
			Note: "a few percent of CPU under heavy load"}
		return []Finding{f}
	}
	if ps.StatementsDigest != nil && !*ps.StatementsDigest {
		f.Title = "performance_schema is on but its statements_digest consumer is off"
		f.Evidence = []Evidence{c.varEv("performance_schema", ""), ev("statements_digest consumer", "NO", "", "performance_schema.setup_consumers")}
		f.Change = &changeset.Change{Kind: changeset.MySQLOption, Target: "mysqld", Name: "performance-schema-consumer-statements-digest", From: "OFF", To: "ON", Direction: Set,
			Apply: "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'statements_digest'"}
		f.Effect = "statement digests are collected, so stacktune digest --pfs works"
		return []Finding{f}
	}
	return nil
}
