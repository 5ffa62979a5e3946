package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const lockFileName = "LOCK"

// dirLock is the exclusive claim on a store directory for the life of a Store.
type dirLock struct {
	file *os.File
}

// lockDir claims dir with flock(LOCK_EX|LOCK_NB) on dir/LOCK. An open file description is its
// own lock owner, so a second Open in the same process is refused exactly like another process.
// A filesystem that cannot lock at all is warned about and used unlocked.
func lockDir(dir string, log *slog.Logger) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		holder := readHolder(f)
		_ = f.Close()
		return nil, fmt.Errorf("the store directory %s is already in use: its lock file %s is held%s: %w", dir, path, holder, ErrLocked)
	case errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		log.Warn("store directory cannot be locked; a second process could use it at the same time", "dir", dir, "err", err)
	case err != nil:
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is advice for the next refusal message, not part of the lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{file: f}, nil
}

func readHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(pid); err != nil || pid == "" {
		return ""
	}
	return " by pid " + pid
}

// release drops the claim. Closing the descriptor releases the flock.
func (l *dirLock) release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}
