package advise

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-tmp-table-size: implicit temporary tables (GROUP BY, DISTINCT,
// UNION, derived tables) start in memory and move to disk past the
// smaller of tmp_table_size and max_heap_table_size. Created_tmp_disk_tables
// growing over the interval means they do (the smartphone game backend set both to 256 MB).
// Both are set equal: the smaller one is the limit.
var mysqlTmpTableSize = ruleFunc{"mysql-tmp-table-size", LayerMySQL, checkMySQLTmpTableSize}

const (
	// tmpDiskMin is the disk temporary tables an interval needs.
	tmpDiskMin = 5
	// tmpDiskShare is the share of temporary tables on disk that is
	// worth a change.
	tmpDiskShare = 0.1
	// tmpTableMin and tmpTableMax bound the proposal: 64 MiB at least,
	// at most the smartphone game backend's 256 MB (each session may hold one this large per
	// temporary table).
	tmpTableMin = 64 * mib
	tmpTableMax = 256 * mib
)

func checkMySQLTmpTableSize(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	disk, ok := c.Delta("Created_tmp_disk_tables")
	if !ok || disk < tmpDiskMin {
		return nil
	}
	all, _ := c.Delta("Created_tmp_tables")
	rate, _ := c.Rate("Created_tmp_disk_tables")
	share := 1.0
	if all > 0 {
		share = disk / all
	}
	if share < tmpDiskShare && rate < 1 {
		return nil
	}
	tmp, ok1 := c.Int("tmp_table_size")
	heap, ok2 := c.Int("max_heap_table_size")
	if !ok1 || !ok2 {
		return nil
	}
	tempTable := false
	if e, ok := c.Var("internal_tmp_mem_storage_engine"); ok && strings.EqualFold(e, "TempTable") {
		tempTable = true
	}
	eff := min(tmp, heap)
	if tempTable {
		eff = tmp // MySQL 8's TempTable engine ignores max_heap_table_size
	}
	f := Finding{
		ID:       "mysql-tmp-table-size",
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Created_tmp_disk_tables"), c.deltaEv("Created_tmp_tables"),
			ev("share on disk", pct(share), "", "Created_tmp_disk_tables / Created_tmp_tables, "+c.StatusSource()),
			c.varEv("tmp_table_size", "bytes"), c.varEv("max_heap_table_size", "bytes")},
		Source: "the smartphone game backend's write-up (Created_tmp_disk_tables rising → tmp_table_size = max_heap_table_size = 256 MB); MySQL manual 'Internal Temporary Table Use in MySQL'",
	}
	if rate >= 1 {
		f.Severity = Warning
	}
	f.Title = fmt.Sprintf("%s of temporary tables went to disk (%s/s) at a %s in-memory limit", pct(share), num(rate), fmtBytes(eff))
	if tempTable {
		f.Evidence = append(f.Evidence, c.varEv("internal_tmp_mem_storage_engine", ""))
		if c.Has("temptable_max_ram") {
			f.Evidence = append(f.Evidence, c.varEv("temptable_max_ram", "bytes"))
		}
	}
	value := min(tmpTableMax, max(tmpTableMin, eff*4))
	bc := c.tmpDiskCauses()
	f.Evidence = append(f.Evidence, bc.evidence...)
	if bc.blob > 0 && bc.other == 0 {
		// Every disk temporary table of the interval holds a TEXT or BLOB
		// column: no size keeps one in memory.
		f.Title = fmt.Sprintf("%s of temporary tables went to disk (%s/s), all of them holding TEXT or BLOB columns", pct(share), num(rate))
		f.Change = &changeset.Change{Kind: changeset.App, Target: "application queries", Name: "TEXT/BLOB in temporary tables",
			From: "GROUP BY, DISTINCT, ORDER BY or UNION over rows with " + strings.Join(bc.columns, ", "),
			To:   "the temporary table without the TEXT/BLOB column: group or sort by the key, then fetch the text by it (or a VARCHAR where the values are short)", Direction: Set}
		f.Effect = "the temporary tables fit in memory again; raising tmp_table_size would not help: " + bc.why
		f.Risk.Note = "a change to the queries; " + bc.why
		return []Finding{f}
	}
	causes := "temporary tables also go to disk for reasons no size fixes: BLOB/TEXT columns in the result (MySQL before 8.0.13), or results larger than any sane limit; " +
		"find the queries in the slow log (stacktune digest; MariaDB logs Tmp_disk_tables per query with log_slow_verbosity=query_plan) and add the index that avoids the temporary table"
	if value <= eff {
		f.Effect = fmt.Sprintf("the in-memory limit is already %s: %s", fmtBytes(eff), causes)
		return []Finding{f}
	}
	f.Change = c.MySQLChange("tmp_table_size", fmt.Sprint(value), Increase)
	if !tempTable || heap < value {
		f.Also = append(f.Also, *c.MySQLChange("max_heap_table_size", fmt.Sprint(value), Increase))
	}
	f.Effect = fmt.Sprintf("temporary tables up to %s stay in memory instead of being written to and read from disk; %s", fmtBytes(value), causes)
	f.Risk.Memory = fmt.Sprintf("up to %s per in-memory temporary table, per session: N queries building one at once can use N × %s", fmtBytes(value), fmtBytes(value))
	if tempTable {
		f.Risk.Memory += "; MySQL's TempTable engine caps them all together at temptable_max_ram"
	}
	f.Risk.Restart = c.Restart("tmp_table_size")
	f.Risk.Note = "max_heap_table_size also caps user-created MEMORY tables"
	switch {
	case bc.blob > 0:
		f.Risk.Note += fmt.Sprintf("; %s of the %s disk temporary tables of the interval hold TEXT/BLOB columns (%s): the size does not help those", num(bc.blob), num(bc.blob+bc.other), strings.Join(bc.columns, ", "))
	case !bc.known && len(c.My.BlobColumns) > 0 && bc.forces:
		f.Risk.Note += "; this server has TEXT/BLOB columns, and a temporary table holding one goes to disk whatever the size: collect the queries with their plans (--queries with log_slow_verbosity=query_plan on MariaDB, or --queries pfs) to tell which tables these are"
	}
	return []Finding{f}
}

// blobCauses is what the digest of the interval says of the disk
// temporary tables: how many came from queries over tables with TEXT or
// BLOB columns (which a temporary table cannot hold in memory here) and
// how many did not.
type blobCauses struct {
	known, forces bool
	blob, other   float64
	columns       []string
	evidence      []Evidence
	why           string
}

// blobForcesDisk reports whether a TEXT/BLOB column sends an implicit
// temporary table to disk on this server: MariaDB (its MEMORY and Aria
// heap tables cannot hold one, 10.11 included) and MySQL unless 8.0.13+
// with the TempTable engine.
func (c *Context) blobForcesDisk() (bool, string) {
	if c.MariaDB() {
		return true, "MariaDB's in-memory temporary tables cannot hold TEXT or BLOB columns"
	}
	if e, _ := c.Var("internal_tmp_mem_storage_engine"); c.AtLeast(8, 0, 13) && strings.EqualFold(e, "TempTable") {
		return false, ""
	}
	return true, "MySQL's MEMORY engine (and MySQL before 8.0.13) cannot hold TEXT or BLOB columns in an in-memory temporary table"
}

func (c *Context) tmpDiskCauses() blobCauses {
	var bc blobCauses
	bc.forces, bc.why = c.blobForcesDisk()
	q := c.Queries
	if q == nil || !q.PlanKnown {
		return bc
	}
	bc.known = true
	tables := blobTables(c.My.BlobColumns)
	seen := map[string]bool{}
	for _, cl := range q.Classes {
		if cl.TmpDiskTables <= 0 {
			continue
		}
		var hit []string
		if bc.forces {
			for _, t := range fingerprintTables(cl.Fingerprint) {
				for _, b := range tables[t] {
					if selectsAll.MatchString(cl.Sample) || containsWord(strings.ToLower(cl.Sample), strings.ToLower(b.Column)) {
						hit = append(hit, b.Table+"."+b.Column+" ("+b.Type+")")
					}
				}
			}
		}
		if len(hit) == 0 {
			bc.other += float64(cl.TmpDiskTables)
			continue
		}
		bc.blob += float64(cl.TmpDiskTables)
		for _, h := range hit {
			if !seen[h] {
				seen[h] = true
				bc.columns = append(bc.columns, h)
			}
		}
		bc.evidence = append(bc.evidence, ev("disk temporary tables of "+cutEvidence(cl.Fingerprint), fmt.Sprintf("%d of %d calls", cl.TmpDiskTables, cl.Count), "",
			fmt.Sprintf("digest of the %s (%s); TEXT/BLOB: %s", q.Source, q.Window, strings.Join(hit, ", "))))
	}
	return bc
}

// selectsAll matches a query that selects every column (SELECT *, t.*),
// not COUNT(*).
var selectsAll = regexp.MustCompile("(?i)(\\bselect\\s+(distinct\\s+)?\\*|[\\w`]\\.\\*)")

// fingerprintTables lists the tables a fingerprint names after FROM,
// JOIN, INTO or UPDATE (lower case, with their schema when given).
func fingerprintTables(fp string) []string {
	f := strings.Fields(strings.NewReplacer(",", " , ", "(", " ( ", ")", " ) ").Replace(fp))
	var out []string
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "from", "join", "into", "update":
			t := strings.Trim(f[i+1], "`")
			if t != "" && t != "(" {
				out = append(out, t)
			}
		case ",":
			// "from a, b": the table after a comma in a FROM list.
			if i > 0 && len(out) > 0 {
				t := strings.Trim(f[i+1], "`")
				if t != "(" && isWordByte(t[0]) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// containsWord reports whether w appears in s as a whole word.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isWordByte(s[j-1])
		after := j+len(w) == len(s) || !isWordByte(s[j+len(w)])
		if before && after {
			return true
		}
		i = j + 1
	}
}
