//go:build unix

package identity

import (
	"os"
	"syscall"
)

// ownerOf is the uid that owns the file fi describes.
func ownerOf(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// openNoFollow opens path for reading without following a final symlink
// and without blocking on a FIFO swapped in after the Lstat.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// processEUID is the effective uid of this process.
func processEUID() int { return os.Geteuid() }

// lockDir holds an exclusive flock on the directory itself while the
// identity files are examined and minted, so that two starts at once (a
// service and --print-identity, say) never sweep each other's temp files
// or mint twice. flock locks are per open file, so goroutines exclude each
// other too.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}
