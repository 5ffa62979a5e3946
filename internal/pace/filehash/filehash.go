// Package filehash hashes the files a translation unit reads, for pace-cc's direct mode, and
// remembers each hash under the file's stat signature (device, inode, size, modification and
// change times) so an unchanged header is not read again by the next compile.
//
// A remembered hash is trusted only when every part of the signature still matches and the
// file had already been unchanged for a while when the hash was taken: a file written within
// the same timestamp tick as its hashing could change again without its times moving (the
// "racy" case git's index guards against). Such a file is hashed every time. When in doubt,
// hash.
//
// The memory is an append-only log in pace-cc's state directory: hundreds of pace-cc processes
// run at once under make -j, each appends what it learned in one write, and the last record for
// a path wins. The log is rewritten when it grows too long. A damaged log costs only re-reads.
package filehash

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// racyWindow is how long a file must have been unchanged, when hashed, for its remembered hash
// to be trusted later. Filesystem timestamps are taken from a coarse clock; two seconds is far
// beyond any tick.
const racyWindow = 2 * time.Second

// LogName is the file name of the log in the state directory.
const LogName = "filehash.log"

// temporalMacros make a file's effect depend on when it is compiled.
var temporalMacros = [][]byte{[]byte("__TIME__"), []byte("__DATE__"), []byte("__TIMESTAMP__")}

// Sum is what is known about one file's content.
type Sum struct {
	Digest   cachekey.Digest
	Temporal bool // the file names __TIME__, __DATE__ or __TIMESTAMP__
}

// signature is a file's stat identity.
type signature struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

func signatureOf(st *syscall.Stat_t) signature {
	return signature{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

type entry struct {
	sig      signature
	recorded int64 // when the hash was taken, nanoseconds
	sum      Sum
}

// trusted reports whether e still describes a file whose stat is now sig.
func (e entry) trusted(sig signature) bool {
	return e.sig == sig && e.recorded-sig.mtime >= int64(racyWindow) && e.recorded-sig.ctime >= int64(racyWindow)
}

// Cache is one process's view of the log. It is not safe for concurrent use.
type Cache struct {
	dir     string
	now     func() time.Time
	entries map[string]entry
	pending bytes.Buffer // records to append at Flush
	logSize int64
}

// Open reads the log in dir ("" keeps nothing between processes).
func Open(dir string, now func() time.Time) *Cache {
	c := &Cache{dir: dir, now: now, entries: map[string]entry{}}
	if dir != "" {
		c.load()
	}
	return c
}

// Hash returns the content hash of path (an absolute path), from memory when the file is
// unchanged, else by reading it.
func (c *Cache) Hash(path string) (Sum, error) {
	var st syscall.Stat_t
	if e, ok := c.entries[path]; ok {
		if err := syscall.Stat(path, &st); err == nil && e.trusted(signatureOf(&st)) {
			return e.sum, nil
		}
	}
	data, sig, err := readFile(path)
	if err != nil {
		return Sum{}, err
	}
	sum := Sum{Digest: cachekey.Content(data), Temporal: hasTemporalMacro(data)}
	now := c.now().UnixNano()
	e := entry{sig: sig, recorded: now, sum: sum}
	c.entries[path] = e
	if e.trusted(sig) { // only what a later process may trust is worth remembering
		appendRecord(&c.pending, path, e)
	}
	return sum, nil
}

func hasTemporalMacro(b []byte) bool {
	for _, m := range temporalMacros {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// readFile reads a whole file with plain system calls (no poller registration) and returns the
// signature of exactly the file it read.
func readFile(path string) ([]byte, signature, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, signature{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, signature{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	buf := make([]byte, st.Size+1) // one byte spare: reading 0 at it confirms the end
	n := 0
	for {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, signature{}, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return buf[:n], signatureOf(&st), nil
		}
		if n += m; n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...) // the file grew while read
		}
	}
}

// Flush appends what this process learned to the log in one write, and rewrites the log when it
// has grown past maxLog. Failures only cost a later re-read.
func (c *Cache) Flush() error {
	if c.dir == "" || c.pending.Len() == 0 {
		return nil
	}
	if c.logSize+int64(c.pending.Len()) > maxLog {
		return c.rewrite()
	}
	f, err := os.OpenFile(filepath.Join(c.dir, LogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if os.IsNotExist(err) {
		if err = os.MkdirAll(c.dir, 0o755); err == nil {
			f, err = os.OpenFile(filepath.Join(c.dir, LogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("filehash: %w", err)
	}
	_, werr := f.Write(c.pending.Bytes())
	cerr := f.Close()
	c.pending.Reset()
	if werr != nil {
		return fmt.Errorf("filehash: %w", werr)
	}
	return cerr
}
