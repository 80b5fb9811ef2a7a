package scenario

import (
	"errors"
	"syscall"
)

// isReset reports a connection reset or closed under a request.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}
