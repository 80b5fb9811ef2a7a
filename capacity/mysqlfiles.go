package capacity

import "fmt"

// The files mysqld needs: one descriptor per connection, two per table
// in its table cache (a MyISAM table opens a data and an index file;
// MySQL's own formula counts two), and its logs. Both `stacktune plan`
// (open-files-limit) and the audit's mysql-open-files-limit derive
// open_files_limit with these two functions, so they cannot disagree.
const (
	// mysqlFileFloor is the open_files_limit MySQL asks for at least
	// (5000 since 5.6), at its default mysqlDefaultConnections: the
	// TIME_WAIT write-up's "5000 - 151 = 4849" files for tables and logs.
	mysqlFileFloor          = 5000
	mysqlDefaultConnections = 151
	// mysqlLogFiles is the 10 of mysqld's own formula (10 +
	// max_connections + 2 × table_open_cache): its logs and the like.
	mysqlLogFiles = 10
)

// MySQLOtherFiles is what mysqld keeps open besides its connections: two
// descriptors per table of table_open_cache and 10 for its logs, and at
// least MySQL's floor of 5000 files less its 151 default connections
// (the TIME_WAIT write-up's 4849). tableOpenCache 0 means unknown: the floor.
func MySQLOtherFiles(tableOpenCache int64) (n int64, formula string) {
	floor := int64(mysqlFileFloor - mysqlDefaultConnections)
	if tableOpenCache <= 0 {
		return floor, fmt.Sprintf("%d - %d = %d (MySQL's floor less its default connections, the PHP + MySQL TIME_WAIT write-up)", mysqlFileFloor, mysqlDefaultConnections, floor)
	}
	tables := mysqlLogFiles + 2*tableOpenCache
	return max(floor, tables), fmt.Sprintf("max(%d - %d, %d + 2 × table_open_cache %d) = %d", mysqlFileFloor, mysqlDefaultConnections, mysqlLogFiles, tableOpenCache, max(floor, tables))
}

// MySQLOpenFiles is the open_files_limit that serves maxConnections: the
// files besides connections (MySQLOtherFiles) plus one per connection.
// The PHP + MySQL TIME_WAIT write-up: 4849 + 25500 = 30349. mysqld itself asks the kernel for up
// to 5 × max_connections as well, but that is a request, not a need: it
// takes less when its process limit (LimitNOFILE) is lower, without
// shrinking anything, as long as this much is there.
func MySQLOpenFiles(tableOpenCache, maxConnections int64) (n int64, formula string) {
	other, of := MySQLOtherFiles(tableOpenCache)
	n = other + maxConnections
	return n, fmt.Sprintf("files besides connections %s; + max_connections %d = %d", of, maxConnections, n)
}

// Result returns the result with the id, nil when the plan has none.
func (r *Report) Result(id string) *Result {
	for i := range r.Results {
		if r.Results[i].ID == id {
			return &r.Results[i]
		}
	}
	return nil
}
