//go:build unix

package worker

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}

// lockExclusive takes flock(LOCK_EX|LOCK_NB): an open file description is
// its own lock owner, so a second worker in this process is refused too.
func lockExclusive(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errRootHeld
	}
	return err
}
