package ccfront

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The front's file I/O uses plain system calls: os.File registers every descriptor with the
// runtime's poller first (four fcntl calls and an epoll_ctl for a regular file), and a hit
// opens a handful of files in about a millisecond.

// readFile reads a whole file.
func readFile(path string) ([]byte, error) {
	fd, err := open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	buf := make([]byte, st.Size+1) // one byte spare: reading 0 at it confirms the end
	n := 0
	for {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return buf[:n], nil
		}
		if n += m; n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...) // the file grew while read
		}
	}
}

func open(path string, mode int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, mode|syscall.O_CLOEXEC, perm)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// fdWriter writes to a descriptor.
type fdWriter int

func (w fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Write(int(w), p[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// createBeside creates a fresh temporary file in path's directory with the mode a compiler's
// own output gets (0666 less the umask), as pace-cc-full does.
func createBeside(path string, now time.Time) (int, string, error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.pace-%d-%d", filepath.Base(path), os.Getpid(), now.UnixNano()))
	fd, err := open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, 0o666)
	return fd, tmp, err
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte, now time.Time) error {
	fd, tmp, err := createBeside(path, now)
	if err != nil {
		return err
	}
	_, werr := fdWriter(fd).Write(data)
	if cerr := syscall.Close(fd); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = syscall.Rename(tmp, path)
	}
	if werr != nil {
		syscall.Unlink(tmp)
	}
	return werr
}

// appendLine appends one line to path with a single O_APPEND write.
func appendLine(path string, line []byte) error {
	fd, err := open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT, 0o644)
	if errors.Is(err, syscall.ENOENT) {
		// A passthrough can be the first command pace-cc sees: no state directory yet.
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			fd, err = open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT, 0o644)
		}
	}
	if err != nil {
		return err
	}
	_, werr := fdWriter(fd).Write(line)
	if cerr := syscall.Close(fd); werr == nil {
		werr = cerr
	}
	return werr
}
