package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// MaxScratchRoots is how many scratch roots one user's workers may hold at
// once on a machine (one per running node process).
const MaxScratchRoots = 16

const scratchLockName = ".lock"

// Startup refusals of the scratch root (pace-node §5.1).
var (
	// ErrScratchRootsExhausted: every candidate root is held by a live
	// process.
	ErrScratchRootsExhausted = errors.New("scratch-roots-exhausted")
	// ErrScratchUnavailable: no root could be made or locked.
	ErrScratchUnavailable = errors.New("scratch-unavailable")
)

// errRootHeld: another live process holds the root's lock.
var errRootHeld = errors.New("held by another process")

// scratchRoot is this process's directory for job scratch dirs, claimed
// with an exclusive lock held for the process lifetime.
type scratchRoot struct {
	dir        string
	lock       *os.File
	unmappable bool // cannot be expressed in a prefix map (pace-node §5.1)
}

// claimScratchRoot claims the first free root among
// <parent>/pace-worker-<uid>.<n>. Every root whose lock is free is stale
// (its process is gone): it is emptied and counted in reclaimed, the one
// claimed and any other existing one alike.
func claimScratchRoot(parent string) (root *scratchRoot, reclaimed int, err error) {
	var lastErr error
	held := 0
	for n := range MaxScratchRoots {
		dir := filepath.Join(parent, fmt.Sprintf("pace-worker-%d.%d", os.Geteuid(), n))
		if root != nil {
			if _, err := os.Lstat(dir); err != nil {
				continue // only existing roots need reclaiming once one is claimed
			}
		}
		lock, err := lockRoot(dir)
		switch {
		case errors.Is(err, errRootHeld):
			held++
			continue
		case err != nil:
			lastErr = err
			continue
		}
		if emptied, _ := emptyRoot(dir); emptied {
			reclaimed++
		}
		if root == nil {
			root = &scratchRoot{dir: dir, lock: lock, unmappable: unmappable(dir)}
			continue
		}
		lock.Close()
	}
	switch {
	case root != nil:
		return root, reclaimed, nil
	case held == MaxScratchRoots:
		return nil, 0, fmt.Errorf("%w: all %d scratch roots under %s are held by running processes", ErrScratchRootsExhausted, MaxScratchRoots, parent)
	}
	return nil, 0, fmt.Errorf("%w: no scratch root under %s could be claimed: %w", ErrScratchUnavailable, parent, lastErr)
}

// lockRoot makes dir if needed, checks it is this user's private directory
// (the temp dir is shared, so a directory planted by someone else, or a
// symlink, is never used), and takes its lock without waiting.
func lockRoot(dir string) (*os.File, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", dir, err)
	}
	if !fi.IsDir() || !ownedByMe(fi) || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is not a private directory of this user; not used", dir)
	}
	path := filepath.Join(dir, scratchLockName)
	f, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := lockExclusive(f); err != nil {
		f.Close()
		return nil, err
	}
	// A holder that removed the root between our open and our lock leaves
	// us locking an unlinked file; only the file at the path counts.
	if now, err := os.Lstat(path); err != nil || !sameFile(f, now) {
		f.Close()
		return nil, errRootHeld
	}
	return f, nil
}

func sameFile(f *os.File, fi os.FileInfo) bool {
	mine, err := f.Stat()
	return err == nil && os.SameFile(mine, fi)
}

// emptyRoot removes everything in dir but its lock file, reporting whether
// anything was there.
func emptyRoot(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	emptied := false
	for _, e := range entries {
		if e.Name() == scratchLockName {
			continue
		}
		emptied = true
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return emptied, err
		}
	}
	return emptied, nil
}

// newJobDir makes a directory no other job shares.
func (r *scratchRoot) newJobDir() (string, error) {
	dir, err := os.MkdirTemp(r.dir, "job-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrScratchUnavailable, err)
	}
	return dir, nil
}

// close removes the root and releases its lock, lock file last.
func (r *scratchRoot) close() error {
	if r == nil || r.lock == nil {
		return nil
	}
	_, err := emptyRoot(r.dir)
	os.Remove(filepath.Join(r.dir, scratchLockName))
	os.Remove(r.dir)
	if cerr := r.lock.Close(); err == nil {
		err = cerr
	}
	r.lock = nil
	return err
}
