package frameserver

import (
	"errors"
	"syscall"
)

// isRetriableAccept reports accept errors that say nothing about the
// listener itself: descriptor exhaustion and connections the peer aborted
// before we took them.
func isRetriableAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM)
}
