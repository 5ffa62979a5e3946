package store

import (
	"container/list"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// digest names a key on disk: BLAKE3-256 of the key.
type digest [32]byte

func keyDigest(key []byte) digest { return digest(cachekey.Content(key)) }

// diskEntryOverhead estimates one disk index entry's resident cost (map slot, entry, list
// element); reported as the tier's index bytes.
const diskEntryOverhead = 120

// diskEntry is one committed blob. A commit always installs a new entry, so pointer identity
// tells "the blob I read" from "a newer blob of the same key".
type diskEntry struct {
	digest digest
	size   int64
	elem   *list.Element
}

// diskTier is the on-disk half of a Store.
type diskTier struct {
	fs     FS
	dir    string
	shards [256]string
	limit  int64
	sync   bool
	log    *slog.Logger

	// keyLocks order the metadata steps of one key (rename, unlink, memory fill). Striped by
	// shard; never held across data I/O.
	keyLocks [256]sync.Mutex

	mu       sync.Mutex
	space    *sync.Cond // broadcast when a reservation ends or the tier closes
	index    map[digest]*diskEntry
	order    *list.List // front = most recently used
	used     int64
	reserved int64
	waiting  int // writers blocked in reserve until a reservation ends
	closed   bool

	hits, misses, evictions, corrupt, writeFailures, readFailures, swept atomic.Uint64
}

func (d *diskTier) keyLock(dg digest) *sync.Mutex { return &d.keyLocks[dg[0]] }

func (d *diskTier) blobPath(dg digest) string {
	return d.shards[dg[0]] + "/" + hex.EncodeToString(dg[:])
}

// lookup finds the committed entry of dg and marks it most recently used.
func (d *diskTier) lookup(dg digest) *diskEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.index[dg]
	if e != nil {
		d.order.MoveToFront(e.elem)
	}
	return e
}

// touch refreshes dg's LRU position after a memory-tier hit, so values hot in memory do not
// age out of the disk tier.
func (d *diskTier) touch(dg digest) { d.lookup(dg) }

// isCurrent reports whether e is still the committed entry of dg.
func (d *diskTier) isCurrent(dg digest, e *diskEntry) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.index[dg] == e
}

// get reads and verifies the blob of key. Any failure is a miss wrapping ErrNotFound.
func (d *diskTier) get(dg digest, key []byte) ([]byte, *diskEntry, error) {
	e := d.lookup(dg)
	if e == nil {
		d.misses.Add(1)
		return nil, nil, ErrNotFound
	}
	value, err := d.readVerified(dg, key)
	switch {
	case err == nil:
		d.hits.Add(1)
		return value, e, nil
	case errors.Is(err, errCorrupt):
		d.corrupt.Add(1)
		d.log.Warn("removing corrupt blob", "path", d.blobPath(dg), "err", err)
		d.forget(dg, e, true)
	case errors.Is(err, fs.ErrNotExist):
		d.forget(dg, e, false) // removed behind the store's back
	default:
		d.readFailures.Add(1)
		d.log.Warn("blob read failed; answering a miss", "path", d.blobPath(dg), "err", err)
	}
	d.misses.Add(1)
	return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
}

// readVerified reads the whole blob into one exactly sized buffer and verifies it.
func (d *diskTier) readVerified(dg digest, key []byte) ([]byte, error) {
	buf, err := d.fs.ReadFile(d.blobPath(dg), d.limit)
	switch {
	case errors.Is(err, ErrFileTooLarge), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	case err != nil:
		return nil, err
	}
	return decodeBlob(buf, key)
}

// forget drops e from the index if it is still current, and removes its file when asked.
func (d *diskTier) forget(dg digest, e *diskEntry, removeFile bool) {
	lk := d.keyLock(dg)
	lk.Lock()
	defer lk.Unlock()
	d.mu.Lock()
	current := d.index[dg] == e
	if current {
		d.dropLocked(e)
	}
	d.mu.Unlock()
	if current && removeFile {
		d.removeFile(dg)
	}
}

// delete removes dg from the index and the disk. The caller holds dg's key lock.
func (d *diskTier) delete(dg digest) (bool, error) {
	d.mu.Lock()
	e := d.index[dg]
	if e != nil {
		d.dropLocked(e)
	}
	d.mu.Unlock()
	if e == nil {
		return false, nil
	}
	if err := d.fs.Remove(d.blobPath(dg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Errorf("remove %s: %w", d.blobPath(dg), err)
	}
	return true, nil
}

func (d *diskTier) dropLocked(e *diskEntry) {
	d.order.Remove(e.elem)
	delete(d.index, e.digest)
	d.used -= e.size
}

func (d *diskTier) removeFile(dg digest) {
	if err := d.fs.Remove(d.blobPath(dg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Warn("cannot remove blob", "path", d.blobPath(dg), "err", err)
	}
}

// shutdown refuses further reservations and wakes writers waiting for space.
func (d *diskTier) shutdown() {
	d.mu.Lock()
	d.closed = true
	d.space.Broadcast()
	d.mu.Unlock()
}

func (d *diskTier) stats() (TierStats, int64) {
	d.mu.Lock()
	items, used, reserved := int64(len(d.index)), d.used, d.reserved
	d.mu.Unlock()
	return TierStats{
		Enabled: true, Items: items, Bytes: used, Limit: d.limit, IndexBytes: items * diskEntryOverhead,
		Hits: d.hits.Load(), Misses: d.misses.Load(), Evictions: d.evictions.Load(),
	}, reserved
}
