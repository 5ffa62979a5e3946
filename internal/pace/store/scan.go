package store

import (
	"cmp"
	"container/list"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	objectsDirName = "objects"
	formatFileName = "FORMAT"
	formatLine     = "pace-store 1\n"
)

// scanned is a blob found on disk at Open.
type scanned struct {
	digest digest
	size   int64
	mtime  time.Time
}

// openDisk prepares the directory (format marker, shard directories), sweeps temp files of
// interrupted writes, and rebuilds the index in approximate LRU order from mtimes.
func openDisk(opts Options) (*diskTier, error) {
	d := &diskTier{
		fs: opts.fs(), dir: opts.Dir, limit: opts.MaxDisk, sync: opts.Sync == SyncAlways, log: opts.logger(),
		index: make(map[digest]*diskEntry), order: list.New(),
	}
	d.space = sync.NewCond(&d.mu)
	d.sweepTemps(opts.Dir)
	if err := d.checkFormat(); err != nil {
		return nil, err
	}
	for i := range d.shards {
		d.shards[i] = filepath.Join(opts.Dir, objectsDirName, fmt.Sprintf("%02x", i))
		if err := d.fs.MkdirAll(d.shards[i], 0o755); err != nil {
			return nil, fmt.Errorf("create shard directory: %w", err)
		}
	}
	var found []scanned
	for i := range d.shards {
		blobs, err := d.scanShard(i)
		if err != nil {
			return nil, err
		}
		found = append(found, blobs...)
	}
	d.rebuild(found)
	return d, nil
}

// checkFormat refuses a directory of another layout and marks a new one as ours.
func (d *diskTier) checkFormat() error {
	path := filepath.Join(d.dir, formatFileName)
	got, err := d.fs.ReadFile(path, 256)
	if err == nil {
		if string(got) != formatLine {
			return fmt.Errorf("%s says %q, this build reads %q: %w", path, strings.TrimSpace(string(got)), strings.TrimSpace(formatLine), ErrLayout)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return d.writeFormat(path)
}

func (d *diskTier) writeFormat(path string) error {
	f, err := d.fs.CreateTemp(d.dir, tempPrefix+"format-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = io.WriteString(f, formatLine)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.fs.Rename(f.Name(), path)
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		_ = d.fs.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// sweepTemps removes leftover temp files directly in dir.
func (d *diskTier) sweepTemps(dir string) {
	entries, err := d.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), tempPrefix) {
			d.sweep(filepath.Join(dir, de.Name()))
		}
	}
}

func (d *diskTier) sweep(path string) {
	if err := d.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Warn("cannot remove leftover temp file", "path", path, "err", err)
		return
	}
	d.swept.Add(1)
}

// scanShard lists one shard: temp files are swept, blobs too short to be blobs are removed
// and counted corrupt, files that are not ours are left alone.
func (d *diskTier) scanShard(i int) ([]scanned, error) {
	entries, err := d.fs.ReadDir(d.shards[i])
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", d.shards[i], err)
	}
	var out []scanned
	for _, de := range entries {
		path := filepath.Join(d.shards[i], de.Name())
		if strings.HasPrefix(de.Name(), tempPrefix) {
			d.sweep(path)
			continue
		}
		dg, ok := parseBlobName(de.Name(), i)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // vanished meanwhile
		}
		if info.Size() < blobOverhead {
			d.corrupt.Add(1)
			d.log.Warn("removing truncated blob", "path", path, "size", info.Size())
			d.removeFile(dg)
			continue
		}
		out = append(out, scanned{digest: dg, size: info.Size(), mtime: info.ModTime()})
	}
	return out, nil
}

func parseBlobName(name string, shard int) (digest, bool) {
	var dg digest
	if len(name) != 2*len(dg) {
		return dg, false
	}
	if _, err := hex.Decode(dg[:], []byte(name)); err != nil || int(dg[0]) != shard {
		return dg, false
	}
	return dg, true
}

// rebuild indexes the scanned blobs, newest mtime most recently used, then evicts the oldest
// while the total exceeds the budget (which may have been lowered since the last run).
func (d *diskTier) rebuild(found []scanned) {
	slices.SortFunc(found, func(a, b scanned) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return cmp.Compare(string(a.digest[:]), string(b.digest[:]))
	})
	for _, s := range found {
		e := &diskEntry{digest: s.digest, size: s.size}
		e.elem = d.order.PushFront(e)
		d.index[s.digest] = e
		d.used += s.size
	}
	for d.limit > 0 && d.used > d.limit {
		victim := d.order.Back().Value.(*diskEntry)
		d.dropLocked(victim)
		d.evictions.Add(1)
		d.removeFile(victim.digest)
	}
}
