package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrFileTooLarge is what FS.ReadFile returns for a file above its limit.
var ErrFileTooLarge = errors.New("file larger than the read limit")

// FS is the part of a filesystem the disk tier uses. It exists so tests can inject faults and
// crash points (pebble's vfs idea, reduced to what this store calls).
type FS interface {
	MkdirAll(path string, perm fs.FileMode) error
	// CreateTemp creates a new file in dir, as os.CreateTemp does.
	CreateTemp(dir, pattern string) (File, error)
	// ReadFile reads a whole file into one buffer of exactly its size. A file larger than
	// limit (when limit > 0) fails with ErrFileTooLarge before anything is allocated; a file
	// that shrinks while read fails with io.ErrUnexpectedEOF.
	ReadFile(name string, limit int64) ([]byte, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes the directory's entries (renames, creations) durable.
	SyncDir(name string) error
}

// File is a file being written through an FS.
type File interface {
	io.Writer
	io.Closer
	Name() string
	Sync() error
}

// OSFS is the operating system's filesystem.
type OSFS struct{}

func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

func (OSFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return f, nil
}

// ReadFile uses plain system calls (open, fstat, read, close): an *os.File would add a second
// fstat, a finalizer and poller bookkeeping to every disk hit.
func (OSFS) ReadFile(name string, limit int64) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if limit > 0 && st.Size > limit {
		return nil, fmt.Errorf("%s has %d bytes, limit %d: %w", name, st.Size, limit, ErrFileTooLarge)
	}
	buf := make([]byte, st.Size)
	for off := 0; off < len(buf); {
		n, err := unix.Read(fd, buf[off:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		case n == 0:
			return nil, fmt.Errorf("%s shrank while read: %w", name, io.ErrUnexpectedEOF)
		}
		off += n
	}
	return buf, nil
}

func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func (OSFS) Remove(name string) error { return os.Remove(name) }

func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

func (OSFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
