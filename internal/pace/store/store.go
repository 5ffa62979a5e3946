package store

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Store is a content-addressed object store: a memory tier, a disk tier, or memory in front of
// disk. It is safe for concurrent use; operations on different keys proceed in parallel.
type Store struct {
	mem  *memTier
	disk *diskTier
	lock *dirLock

	// life is held shared by every operation and exclusively by Close, so Close returns only
	// once no operation touches the directory any more.
	life      sync.RWMutex
	closed    bool
	closeOnce sync.Once
	closeErr  error

	hits, misses atomic.Uint64
}

// Open opens (creating if needed) the store that opts describe. With a directory it takes the
// directory's exclusive lock, sweeps temp files of interrupted writes and rebuilds the index.
func Open(opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{}
	if opts.MaxMemory > 0 {
		s.mem = newMemTier(opts.MaxMemory)
	}
	if opts.Dir == "" {
		return s, nil
	}
	if err := opts.fs().MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("open store: create %s: %w", opts.Dir, err)
	}
	lock, err := lockDir(opts.Dir, opts.logger())
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	disk, err := openDisk(opts)
	if err != nil {
		_ = lock.release()
		return nil, fmt.Errorf("open store %s: %w", opts.Dir, err)
	}
	s.lock, s.disk = lock, disk
	return s, nil
}

// CheckKey validates a client key: non-empty, at most MaxKeyLen bytes, and not starting with a
// byte reserved for internal records. Errors wrap ErrInvalidKey.
func CheckKey(key []byte) error {
	if err := checkKeyShape(key); err != nil {
		return err
	}
	if key[0] == ReservedPrefixCohort || key[0] == ReservedPrefixMember {
		return fmt.Errorf("key starts with byte 0x%02x, reserved for internal records: %w", key[0], ErrInvalidKey)
	}
	return nil
}

func checkKeyShape(key []byte) error {
	if len(key) == 0 {
		return fmt.Errorf("empty key: %w", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("key of %d bytes, at most %d: %w", len(key), MaxKeyLen, ErrInvalidKey)
	}
	return nil
}

func checkInternalKey(key []byte) error {
	if err := checkKeyShape(key); err != nil {
		return err
	}
	if key[0] != ReservedPrefixCohort && key[0] != ReservedPrefixMember {
		return fmt.Errorf("internal record key must start with 0x01 or 0x02: %w", ErrInvalidKey)
	}
	return nil
}

// Get returns the value of key. A memory hit returns the stored slice itself and a disk hit a
// freshly read one; either way the caller must not modify it. A miss is ErrNotFound; so is a
// corrupt blob (removed and counted) or a failed read (counted), which wrap ErrNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	return s.get(key)
}

// Put stores value under key in every tier, replacing any older value. With a disk tier it
// returns only once the value is durable (per Options.Sync). The store keeps value: the caller
// must not modify or reuse it afterwards. Errors: ErrInvalidKey, ErrTooLarge (the value cannot
// fit the whole budget), ErrWriteFailed (disk I/O; nothing stored, except when only the final
// directory sync failed: the value is then readable but not known to be durable), ErrClosed.
func (s *Store) Put(key, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return s.put(key, value)
}

// Delete removes key from every tier and reports whether any held it.
func (s *Store) Delete(key []byte) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	return s.delete(key)
}

// GetInternal, PutInternal and DeleteInternal serve the server's own records, whose keys must
// start with ReservedPrefixCohort or ReservedPrefixMember (pace-wire §2.5). They share the
// budget and the LRU with client values.
func (s *Store) GetInternal(key []byte) ([]byte, error) {
	if err := checkInternalKey(key); err != nil {
		return nil, err
	}
	return s.get(key)
}

// PutInternal stores an internal record; see GetInternal.
func (s *Store) PutInternal(key, value []byte) error {
	if err := checkInternalKey(key); err != nil {
		return err
	}
	return s.put(key, value)
}

// DeleteInternal removes an internal record; see GetInternal.
func (s *Store) DeleteInternal(key []byte) (bool, error) {
	if err := checkInternalKey(key); err != nil {
		return false, err
	}
	return s.delete(key)
}

func (s *Store) enter() bool {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return false
	}
	return true
}

func (s *Store) exit() { s.life.RUnlock() }

// Close waits for operations in flight, then releases the directory lock. Later calls return
// ErrClosed from every method.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.disk != nil {
			s.disk.shutdown() // wake writers waiting for budget so they can finish
		}
		s.life.Lock()
		s.closed = true
		s.life.Unlock()
		if err := s.lock.release(); err != nil {
			s.closeErr = fmt.Errorf("release store lock: %w", err)
		}
	})
	return s.closeErr
}

// Stats returns a snapshot of the store's gauges and counters.
func (s *Store) Stats() Stats {
	st := Stats{Hits: s.hits.Load(), Misses: s.misses.Load()}
	if s.mem != nil {
		st.Memory = s.mem.stats()
	}
	if d := s.disk; d != nil {
		st.Disk, st.Reserved = d.stats()
		st.CorruptRemoved = d.corrupt.Load()
		st.WriteFailures = d.writeFailures.Load()
		st.ReadFailures = d.readFailures.Load()
		st.TempFilesSwept = d.swept.Load()
	}
	return st
}
