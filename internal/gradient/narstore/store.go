package narstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

const (
	objectDir  = "nar"
	partialDir = "nar-partial"
	objectExt  = ".nar.zst"
	partialExt = ".part"

	// DefaultMaxWindow caps the zstd window a stored NAR may use: the decoder allocates
	// about this much per commit. The worker's encoder (klauspost level 6) uses 8 MiB;
	// 64 MiB also admits `zstd --long=26` streams.
	DefaultMaxWindow = 64 << 20

	storeHashLen = 32
	dirPerm      = 0o750
	filePerm     = 0o640
)

// Options configure a Store. The zero value is the production configuration.
type Options struct {
	// Now is the clock SweepPartials measures staleness against. Nil means time.Now.
	Now func() time.Time
	// MaxWindow caps the decoder window (and so its memory) in Commit. Zero means
	// DefaultMaxWindow.
	MaxWindow uint64
}

// Store is the NAR object storage of one data directory. It is safe for concurrent use.
type Store struct {
	objects, partials string
	opts              Options

	mu     sync.Mutex
	staged map[string]bool // partial file names held by a live Staged
}

// Open opens (creating when missing) the NAR storage under dir.
func Open(dir string, opts ...Options) (*Store, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxWindow == 0 {
		o.MaxWindow = DefaultMaxWindow
	}
	s := &Store{objects: filepath.Join(dir, objectDir), partials: filepath.Join(dir, partialDir),
		opts: o, staged: make(map[string]bool)}
	for _, d := range []string{s.objects, s.partials} {
		if err := os.MkdirAll(d, dirPerm); err != nil {
			return nil, fmt.Errorf("narstore: %w", err)
		}
	}
	return s, nil
}

// Open opens the stored object of a store hash for reading, with its compressed size.
// ErrNotFound when there is none.
func (s *Store) Open(storeHash string) (io.ReadSeekCloser, int64, error) {
	p, err := s.objectPath(storeHash)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %w", storeHash, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("narstore: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("narstore: %w", err)
	}
	return f, st.Size(), nil
}

// Has reports whether an object is stored under the hash, and its compressed size.
func (s *Store) Has(storeHash string) (bool, int64, error) {
	p, err := s.objectPath(storeHash)
	if err != nil {
		return false, 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("narstore: %w", err)
	}
	return true, st.Size(), nil
}

// Remove deletes the object of a store hash; removing a missing object is not an error.
// Readers that opened it before keep reading the old bytes.
func (s *Store) Remove(storeHash string) error {
	p, err := s.objectPath(storeHash)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("narstore: %w", err)
	}
	return nil
}

func (s *Store) objectPath(storeHash string) (string, error) {
	if len(storeHash) != storeHashLen || !nixhash.IsBase32(storeHash) {
		return "", fmt.Errorf("%.64q: %w", storeHash, ErrBadHash)
	}
	return filepath.Join(s.objects, storeHash+objectExt), nil
}

// hold marks a partial as owned by a live Staged; release gives it back.
func (s *Store) hold(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.staged[name] {
		return false
	}
	s.staged[name] = true
	return true
}

func (s *Store) release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.staged, name)
}

// syncDir makes a rename or create in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
