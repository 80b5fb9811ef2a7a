package loadgen

import "fmt"

// MaxConnections is the largest Options.Connections Run accepts, whatever
// the open-files limit allows: past it a single client machine measures
// itself more than the server.
const MaxConnections = 10_000

// ReservedFiles is how many file descriptors the connection limit keeps
// for everything else (standard streams, event loops, the history
// database, resolver sockets).
const ReservedFiles = 100

// ConnectionsError refuses a number of connections: above MaxConnections,
// or above what the open-files limit (RLIMIT_NOFILE) leaves.
type ConnectionsError struct {
	// N is the number asked for, Max the most allowed.
	N, Max int
	// NoFile is the open-files limit when it is what allows only Max, 0
	// when MaxConnections does.
	NoFile uint64
}

func (e *ConnectionsError) Error() string {
	if e.NoFile == 0 {
		return fmt.Sprintf("%d connections: more than the cap of %d", e.N, e.Max)
	}
	return fmt.Sprintf("%d connections: the open-files limit (RLIMIT_NOFILE) is %d, which allows at most %d (one socket per connection, %d files kept for the rest); raise it (ulimit -n) or use fewer connections",
		e.N, e.NoFile, e.Max, ReservedFiles)
}

// CheckConnections returns a *ConnectionsError when n connections are more
// than MaxConnections or than the process's open-files limit allows (each
// connection holds one socket; ReservedFiles are kept for the rest). Run
// applies it; a command can call it before any other work.
func CheckConnections(n int) error {
	return checkConnections(n, openFilesLimit())
}

// checkConnections is CheckConnections under an open-files limit of
// nofile (0: unknown, only MaxConnections applies).
func checkConnections(n int, nofile uint64) error {
	if nofile > 0 {
		allowed := 0
		if nofile > ReservedFiles {
			allowed = int(min(nofile-ReservedFiles, uint64(MaxConnections)+1))
		}
		if allowed <= MaxConnections && n > allowed {
			return &ConnectionsError{N: n, Max: allowed, NoFile: nofile}
		}
	}
	if n > MaxConnections {
		return &ConnectionsError{N: n, Max: MaxConnections}
	}
	return nil
}
