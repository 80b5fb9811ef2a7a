package slowlog

import "time"

// Flag is a bit set of the Yes/No query-plan fields that Percona Server and
// MariaDB (log_slow_verbosity=query_plan) write.
type Flag uint8

// The query-plan flags.
const (
	FullScan Flag = 1 << iota
	FullJoin
	TmpTable
	TmpTableOnDisk
	Filesort
	FilesortOnDisk
	QCHit
)

// Event is one slow-log entry. Its byte-slice fields alias the parser's buffer:
// they are valid only during the callback that receives the event; copy what
// must outlive it.
type Event struct {
	// Time is when the server logged the event: from the `# Time:` header
	// (carried over from an earlier event when old servers omit it) or else
	// from `SET timestamp=N`. Zero when the log has neither.
	Time time.Time
	// User and Host come from the `# User@Host:` line; Host is the IP when
	// the host name is empty.
	User, Host []byte
	// DB is the `Schema:` field or the database of a leading `use db;`.
	DB []byte
	// Query is the statement text without a trailing `;`.
	Query []byte
	// Admin is true for `# administrator command: X` events.
	Admin bool

	QueryTime, LockTime                  float64
	RowsSent, RowsExamined, RowsAffected int64
	// TmpTables and TmpDiskTables are Percona's counts of implicit temporary
	// tables (Tmp_tables, Tmp_disk_tables).
	TmpTables, TmpDiskTables int64

	// Flags holds the Yes answers of the query-plan fields; Known says which
	// of them the log recorded at all.
	Flags, Known Flag
	// Has says which optional numeric fields were present.
	Has Field

	// Offset is the byte offset of the event's first line in its input.
	Offset int64
}

// Field is a bit set naming optional numeric fields of an Event.
type Field uint8

// Optional numeric fields.
const (
	HasRowsSent Field = 1 << iota
	HasRowsExamined
	HasRowsAffected
	HasTmpTables
	HasLockTime
)
