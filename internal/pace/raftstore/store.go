package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// FileName is the store's file inside the state directory.
const FileName = "raft.db"

// FormatVersion is the layout version recorded in the file; a file of
// another version is refused rather than misread.
const FormatVersion = 1

// DefaultLockTimeout is how long Open waits for another holder of the file.
const DefaultLockTimeout = 2 * time.Second

// Errors callers branch on.
var (
	ErrLocked  = errors.New("raft store is held by another process")
	ErrCorrupt = errors.New("raft store is corrupt")
	ErrFormat  = errors.New("raft store has an unknown format")
)

var (
	bucketState    = []byte("raft-state")
	bucketLog      = []byte("raft-log")
	bucketSnapshot = []byte("raft-snapshot")
	keyFormat      = []byte("format")
	keyHardState   = []byte("hard-state")
	keyLogStart    = []byte("log-start")
	keySnapshot    = []byte("snapshot")
)

// Options tune Open. The zero value is ready to use.
type Options struct {
	// LockTimeout bounds the wait for the file lock (DefaultLockTimeout when 0).
	LockTimeout time.Duration
}

// Store is a raft.Storage persisted in one bbolt file. Its methods are safe
// for concurrent use; writers are serialized.
type Store struct {
	db   *bolt.DB
	path string

	mu   sync.RWMutex // held for reading across every read transaction, for writing across every write
	meta bounds

	fault func(op string) error // test hook: fails a write transaction just before it commits
}

// bounds is what the store keeps in memory: the last committed values.
type bounds struct {
	hard     *pb.HardState // nil until one is saved
	logStart entryID       // the entry just before the first one held (raft's "dummy")
	last     uint64        // index of the last entry held, logStart.index when none
	snap     *pb.Snapshot  // metadata only (Data nil); index 0 when none
}

// Open opens (creating if needed) the store at path, takes its exclusive
// lock, and checks the whole file: format, record checksums, a contiguous
// log and a commit index within it.
func Open(path string, opts Options) (*Store, error) {
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (its lock was not released within %v; is another pace-node running on this state directory?)", ErrLocked, path, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(created); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// init creates the buckets of a new file, makes its directory entry
// durable, and loads and verifies the bounds.
func (s *Store) init(created bool) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		st, err := tx.CreateBucketIfNotExists(bucketState)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bucketLog, bucketSnapshot} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		switch v := st.Get(keyFormat); {
		case v == nil:
			return st.Put(keyFormat, []byte{FormatVersion})
		case len(v) != 1 || v[0] != FormatVersion:
			return fmt.Errorf("%w: %s records format %v, this build reads %d", ErrFormat, s.path, v, FormatVersion)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("raftstore: %s: %w", s.path, err)
	}
	if created {
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			return fmt.Errorf("raftstore: %w", err)
		}
	}
	meta, err := s.load()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, s.path, err)
	}
	s.meta = meta
	return nil
}

// load reads the bounds and verifies every log record.
func (s *Store) load() (bounds, error) {
	var m bounds
	err := s.db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketState)
		var err error
		if rec := st.Get(keyHardState); rec != nil {
			if m.hard, err = decodeHardState(rec); err != nil {
				return err
			}
		}
		if rec := st.Get(keyLogStart); rec != nil {
			if m.logStart, err = decodeLogStart(rec); err != nil {
				return err
			}
		}
		m.snap = pb.EnsureSnapshot(nil)
		if rec := tx.Bucket(bucketSnapshot).Get(keySnapshot); rec != nil {
			if m.snap, err = decodeSnapshot(rec, false); err != nil {
				return err
			}
		}
		m.last, err = verifyLog(tx.Bucket(bucketLog), m.logStart)
		return err
	})
	if err != nil {
		return bounds{}, err
	}
	if c := m.hard.GetCommit(); c > m.last {
		return bounds{}, fmt.Errorf("hard state commits index %d beyond the last entry %d", c, m.last)
	}
	return m, nil
}

// verifyLog checks that the log holds exactly logStart+1 … last, every
// record intact, terms never decreasing; it returns last.
func verifyLog(log *bolt.Bucket, start entryID) (uint64, error) {
	want, term := start.index+1, start.term
	c := log.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || bigEndian(k) != want {
			return 0, fmt.Errorf("log key %x where entry %d belongs (a gap or a stray key)", k, want)
		}
		e, err := decodeEntry(want, v)
		if err != nil {
			return 0, err
		}
		if e.GetTerm() < term {
			return 0, fmt.Errorf("entry %d has term %d after term %d", want, e.GetTerm(), term)
		}
		want, term = want+1, e.GetTerm()
	}
	return want - 1, nil
}

// Path is the file the store holds.
func (s *Store) Path() string { return s.path }

// Close releases the file and its lock.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("raftstore: close %s: %w", s.path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

func bigEndian(k []byte) uint64 {
	var v uint64
	for _, b := range k {
		v = v<<8 | uint64(b)
	}
	return v
}

func cloneHardState(hs *pb.HardState) *pb.HardState {
	if hs == nil {
		return nil
	}
	return proto.Clone(hs).(*pb.HardState)
}
