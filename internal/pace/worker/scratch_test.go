package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestScratchRootsAreExclusive: a second claim, even in this process,
// gets another root; the lock is per open file (pace-node §5.1).
func TestScratchRootsAreExclusive(t *testing.T) {
	parent := t.TempDir()
	a, _, err := claimScratchRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, _, err := claimScratchRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if a.dir == b.dir {
		t.Fatalf("two claims share %s", a.dir)
	}
	if fi, err := os.Stat(a.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("root %s: %v %v", a.dir, fi.Mode(), err)
	}
}

// TestStaleScratchRootsAreReclaimed: roots whose lock nobody holds are
// emptied and counted, the one claimed and the others alike.
func TestStaleScratchRootsAreReclaimed(t *testing.T) {
	parent := t.TempDir()
	stale := func(n int) string {
		dir := filepath.Join(parent, fmt.Sprintf("pace-worker-%d.%d", os.Geteuid(), n))
		if err := os.MkdirAll(filepath.Join(dir, "job-left-behind"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o700)
		return dir
	}
	first, third := stale(0), stale(2)
	root, reclaimed, err := claimScratchRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer root.close()
	if root.dir != first || reclaimed != 2 {
		t.Fatalf("claimed %s, reclaimed %d; want %s and 2", root.dir, reclaimed, first)
	}
	for _, dir := range []string{first, third} {
		if _, err := os.Stat(filepath.Join(dir, "job-left-behind")); !os.IsNotExist(err) {
			t.Errorf("%s was not emptied: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, fmt.Sprintf("pace-worker-%d.1", os.Geteuid()))); !os.IsNotExist(err) {
		t.Error("reclaiming created a root nobody needed")
	}
}

// TestScratchRootsNotOursAreSkipped: the temp dir is shared; a planted
// directory, one owned by someone else, or a symlink is never used.
func TestScratchRootsNotOursAreSkipped(t *testing.T) {
	parent := t.TempDir()
	name := func(n int) string { return filepath.Join(parent, fmt.Sprintf("pace-worker-%d.%d", os.Geteuid(), n)) }
	if err := os.Mkdir(name(0), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(name(0), 0o777)
	if err := os.Symlink(t.TempDir(), name(1)); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		os.Mkdir(name(2), 0o700)
		if err := os.Chown(name(2), 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := claimScratchRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer root.close()
	want := name(2)
	if os.Geteuid() == 0 {
		want = name(3)
	}
	if root.dir != want {
		t.Fatalf("claimed %s, want %s", root.dir, want)
	}
}

// TestScratchRootsExhausted: with every root held the worker refuses to
// start by name.
func TestScratchRootsExhausted(t *testing.T) {
	parent := t.TempDir()
	for range MaxScratchRoots {
		r, _, err := claimScratchRoot(parent)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
	}
	if _, _, err := claimScratchRoot(parent); !errors.Is(err, ErrScratchRootsExhausted) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := claimScratchRoot(filepath.Join(parent, "missing", "deeper")); !errors.Is(err, ErrScratchUnavailable) {
		t.Fatalf("unmakeable parent: err = %v", err)
	}
}

// TestCloseRemovesTheRoot: a clean stop leaves nothing in the temp dir.
func TestCloseRemovesTheRoot(t *testing.T) {
	parent := t.TempDir()
	r, _, err := claimScratchRoot(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.newJobDir(); err != nil {
		t.Fatal(err)
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}
