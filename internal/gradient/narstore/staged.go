package narstore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Staged is one upload being written under nar-partial/. Its methods are safe for
// concurrent use (a lease expiry may abort it while the read loop writes).
type Staged struct {
	s    *Store
	name string // file name in the partial directory
	path string

	mu      sync.Mutex
	f       *os.File // nil once finished
	size    int64
	sum     hash.Hash // SHA-256 of the staged bytes, kept current so Commit need not re-read
	flushed int64     // writeback was started up to here
}

// writebackStep is how many staged bytes accumulate before their writeback is started.
const writebackStep = 8 << 20

// Stage opens the partial upload for key, creating it or resuming an existing one: its
// Offset is how many bytes are already staged. ErrBusy when a live Staged holds the key.
func (s *Store) Stage(key string) (*Staged, error) {
	name := partialName(key)
	if !s.hold(name) {
		return nil, fmt.Errorf("%q: %w", key, ErrBusy)
	}
	st, err := s.openStaged(name)
	if err != nil {
		s.release(name)
		return nil, err
	}
	return st, nil
}

func (s *Store) openStaged(name string) (*Staged, error) {
	path := filepath.Join(s.partials, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, fmt.Errorf("narstore: stage: %w", err)
	}
	// Hash what an earlier session staged, so the resumed stream hashes as one.
	sum := sha256.New()
	size, err := io.Copy(sum, f)
	if err == nil {
		now := s.opts.Now()
		err = os.Chtimes(path, now, now) // resuming is progress: keep the sweep away
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("narstore: stage: %w", err)
	}
	return &Staged{s: s, name: name, path: path, f: f, size: size, sum: sum, flushed: size}, nil
}

// Offset is the number of bytes staged so far: where the next Write must start.
func (st *Staged) Offset() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.size
}

// Write appends p, which must start at offset == Offset() (else an *OffsetError). p is not
// retained. Bytes reach the page cache, not the disk: Commit fsyncs, and a partial torn by a
// crash fails verification and is staged again.
func (st *Staged) Write(offset int64, p []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.f == nil {
		return ErrFinished
	}
	if offset != st.size {
		return &OffsetError{Got: offset, Want: st.size}
	}
	n, err := st.f.Write(p)
	st.sum.Write(p[:n])
	st.size += int64(n)
	if err != nil {
		return fmt.Errorf("narstore: write: %w", err)
	}
	if st.size-st.flushed >= writebackStep {
		startWriteback(st.f, st.flushed, st.size-st.flushed)
		st.flushed = st.size
	}
	return nil
}

// Close releases the Staged and keeps its partial for a later resume.
func (st *Staged) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.finish(false)
}

// Abort releases the Staged and deletes its partial.
func (st *Staged) Abort() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.finish(true)
}

// finish closes the file (deleting it when asked) and gives the key back; st.mu is held.
func (st *Staged) finish(remove bool) error {
	if st.f == nil {
		return nil
	}
	err := st.f.Close()
	st.f = nil
	if remove {
		if rerr := os.Remove(st.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	st.s.release(st.name)
	if err != nil {
		return fmt.Errorf("narstore: %w", err)
	}
	return nil
}

// SweepPartials deletes partials not written for olderThan (the upload lease, 300 s) that
// no live Staged holds, and returns how many it deleted.
func (s *Store) SweepPartials(olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(s.partials)
	if err != nil {
		return 0, fmt.Errorf("narstore: sweep: %w", err)
	}
	cutoff := s.opts.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for _, e := range entries {
		ok, err := s.sweepOne(e, cutoff)
		if ok {
			removed++
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("narstore: sweep: %w", errors.Join(errs...))
	}
	return removed, nil
}

func (s *Store) sweepOne(e fs.DirEntry, cutoff time.Time) (bool, error) {
	if !e.Type().IsRegular() || !s.hold(e.Name()) { // held: in use, not stale
		return false, nil
	}
	defer s.release(e.Name())
	info, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || !info.ModTime().Before(cutoff) {
		return false, err
	}
	if err := os.Remove(filepath.Join(s.partials, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}
