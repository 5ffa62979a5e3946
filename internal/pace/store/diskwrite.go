package store

import (
	"errors"
	"fmt"
	"io/fs"
)

// tempPrefix names files of writes in progress; Open sweeps them.
const tempPrefix = "tmp-"

// staged is a blob written and synced under a temp name, holding a reservation.
type staged struct {
	digest digest
	size   int64
	tmp    string
}

// stage reserves room for the blob, evicting to make it, and writes it to a temp file.
func (d *diskTier) stage(dg digest, key, value []byte) (staged, error) {
	size := blobSize(len(key), len(value))
	victims, err := d.reserve(size)
	d.removeEvicted(victims)
	if err != nil {
		return staged{}, err
	}
	tmp, err := d.writeTemp(dg, key, value)
	if err != nil {
		d.release(size)
		d.writeFailures.Add(1)
		return staged{}, fmt.Errorf("%w: %w", ErrWriteFailed, err)
	}
	return staged{digest: dg, size: size, tmp: tmp}, nil
}

// reserve claims size bytes of the budget: committed blobs are evicted from the LRU tail until
// used+reserved+size fits; when only reservations of writes in flight are left, it waits for
// one to end. Evicted entries are returned for the caller to unlink outside the lock.
func (d *diskTier) reserve(size int64) ([]*diskEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.limit > 0 && size > d.limit {
		return nil, fmt.Errorf("blob of %d bytes, disk budget %d: %w", size, d.limit, ErrTooLarge)
	}
	var victims []*diskEntry
	for d.limit > 0 && d.used+d.reserved+size > d.limit {
		if d.closed {
			return victims, ErrClosed
		}
		back := d.order.Back()
		if back == nil {
			d.waiting++
			d.space.Wait()
			d.waiting--
			continue
		}
		victim := back.Value.(*diskEntry)
		d.dropLocked(victim)
		d.evictions.Add(1)
		victims = append(victims, victim)
	}
	d.reserved += size
	return victims, nil
}

func (d *diskTier) release(size int64) {
	d.mu.Lock()
	d.reserved -= size
	d.space.Broadcast()
	d.mu.Unlock()
}

// removeEvicted unlinks evicted blobs, unless a newer blob of the same key was committed since:
// the key lock orders the unlink against that commit's rename.
func (d *diskTier) removeEvicted(victims []*diskEntry) {
	for _, v := range victims {
		lk := d.keyLock(v.digest)
		lk.Lock()
		d.mu.Lock()
		_, recommitted := d.index[v.digest]
		d.mu.Unlock()
		if !recommitted {
			d.removeFile(v.digest)
		}
		lk.Unlock()
	}
}

// writeTemp writes the framed blob to a new temp file in its shard and syncs it.
func (d *diskTier) writeTemp(dg digest, key, value []byte) (string, error) {
	dir := d.shards[dg[0]]
	f, err := d.fs.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	name := f.Name()
	err = writeBlob(f, key, value)
	if err == nil && d.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if rerr := d.fs.Remove(name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			d.log.Warn("cannot remove failed temp file; Open will sweep it", "path", name, "err", rerr)
		}
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}

// commit renames the staged blob into place and indexes it, replacing any older blob of the
// key. The caller holds the key lock of st.digest.
func (d *diskTier) commit(st staged) error {
	path := d.blobPath(st.digest)
	if err := d.fs.Rename(st.tmp, path); err != nil {
		_ = d.fs.Remove(st.tmp)
		d.release(st.size)
		d.writeFailures.Add(1)
		return fmt.Errorf("%w: rename into %s: %w", ErrWriteFailed, path, err)
	}
	d.mu.Lock()
	if old := d.index[st.digest]; old != nil {
		d.dropLocked(old)
	}
	e := &diskEntry{digest: st.digest, size: st.size}
	e.elem = d.order.PushFront(e)
	d.index[st.digest] = e
	d.used += st.size
	d.reserved -= st.size
	d.space.Broadcast()
	d.mu.Unlock()
	return nil
}

// syncShard makes the rename durable before the Put is acknowledged.
func (d *diskTier) syncShard(dg digest) error {
	if !d.sync {
		return nil
	}
	if err := d.fs.SyncDir(d.shards[dg[0]]); err != nil {
		d.writeFailures.Add(1)
		return fmt.Errorf("%w: sync directory %s: %w", ErrWriteFailed, d.shards[dg[0]], err)
	}
	return nil
}
