package nixexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Roots are GC roots held for one job: symlinks to store paths in a directory under the
// store's gcroots, so that a garbage collection running meanwhile keeps the job's inputs and
// outputs. Release removes them.
type Roots struct {
	dir string
	mu  sync.Mutex
	n   int
}

// NewRoots creates the job's root directory <GCRootDir>/<name>.
func (n *Nix) NewRoots(name string) (*Roots, error) {
	dir := filepath.Join(n.opts.GCRootDir, sanitizeName(name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("nixexec: gc roots: %w", err)
	}
	return &Roots{dir: dir}, nil
}

// Add roots each path.
func (r *Roots) Add(paths ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		r.n++
		link := filepath.Join(r.dir, strconv.Itoa(r.n)+"-"+filepath.Base(p))
		if err := os.Symlink(p, link); err != nil {
			return fmt.Errorf("nixexec: gc root for %s: %w", p, err)
		}
	}
	return nil
}

// Release drops every root of the job.
func (r *Roots) Release() error {
	if err := os.RemoveAll(r.dir); err != nil {
		return fmt.Errorf("nixexec: release gc roots: %w", err)
	}
	return nil
}

// ReleaseStaleRoots removes the root directories gradient-<pid> that a worker process which
// is no longer running left behind in the gcroots directory that holds GCRootDir.
func (n *Nix) ReleaseStaleRoots() error {
	if _, err := os.Stat("/proc/self"); err != nil {
		return nil // no way to tell live workers from dead ones: keep everything
	}
	parent := filepath.Dir(n.opts.GCRootDir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("nixexec: stale roots: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.Name(), "gradient-")
		p, err := strconv.Atoi(pid)
		if !ok || err != nil || processAlive(p) {
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(parent, e.Name())))
	}
	return errors.Join(errs...)
}

func processAlive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// sanitizeName keeps a job ID usable as one path element.
func sanitizeName(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			out[i] = '_'
		}
	}
	if len(out) == 0 || string(out) == "." || string(out) == ".." {
		return "_"
	}
	return string(out)
}
