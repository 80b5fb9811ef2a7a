//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package loadgen

import (
	"math"
	"syscall"
)

// openFilesLimit returns the soft RLIMIT_NOFILE (which the Go runtime
// raises to the hard limit at start), or 0 when it cannot be read or is
// unlimited.
func openFilesLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || uint64(rl.Cur) >= math.MaxInt64 {
		return 0
	}
	return uint64(rl.Cur)
}
