//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package loadgen

// openFilesLimit is unknown here: only MaxConnections applies.
func openFilesLimit() uint64 { return 0 }
