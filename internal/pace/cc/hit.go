package cc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// errStale reports a cached result this machine cannot reproduce: a dependency it names is
// missing here (the replay guard of spec §3.7).
var errStale = errors.New("stale hit")

// tryHit serves key from the cache. done is false on a miss, a value that does not decode, a
// stale hit or an output that cannot be written: the caller compiles for real.
func (r *run) tryHit(ctx context.Context, key cachekey.Digest, via string) (done bool, status int) {
	b, hit := r.fetch(ctx, key)
	if !hit {
		return false, 0
	}
	v, err := value.Decode(b)
	if err != nil {
		r.verbosef("cached value for %s does not decode (%v): compiling", shortKey(key), err)
		return false, 0
	}
	v = value.Localize(v, value.Roots{SrcRoot: r.cfg.SourceDir, BuildTree: r.cfg.BinaryDir})
	if r.cfg.Verify > 0 && keyMod(key, r.cfg.Verify) {
		return true, r.verify(key, v)
	}
	if err := r.replay(v); err != nil {
		r.verbosef("%v for %s: compiling for real", err, shortKey(key))
		return false, 0
	}
	r.rec.Outcome, r.rec.Via = ccstats.Hit, via
	r.verbosef("HIT (%s) %s %s", via, shortKey(key), r.comp.Source)
	return true, 0
}

// replay reproduces a compile from its cached value: the object, the depfile (targets as
// stored, dependencies localized), and the captured streams. Every output is written before
// any stream is replayed, so a failure can still fall back to a real compile.
func (r *run) replay(v value.Value) error {
	if err := r.guard(v); err != nil {
		return err
	}
	if err := writeAtomic(r.abs(r.comp.Output), v.Object); err != nil {
		return fmt.Errorf("writing the object: %w", err)
	}
	if r.comp.Deps.Mode != ccargs.DepNone {
		if len(v.Regions) <= value.RegionDepfile {
			return fmt.Errorf("%w: the cached result has no depfile", errStale)
		}
		if err := writeAtomic(r.abs(r.comp.Deps.File), v.Regions[value.RegionDepfile].Text); err != nil {
			return fmt.Errorf("writing the depfile: %w", err)
		}
	}
	if len(v.Regions) > value.RegionStdout {
		r.stdout.Write(v.Regions[value.RegionStdout].Text)
	}
	if len(v.Regions) > value.RegionStderr {
		r.stderr.Write(v.Regions[value.RegionStderr].Text)
	}
	return nil
}

// guard checks that every dependency the cached depfile names, and that this machine answers
// for (relative, or under a root), exists here.
func (r *run) guard(v value.Value) error {
	if len(v.Regions) <= value.RegionDepfile {
		return nil
	}
	roots := r.roots()
	for _, d := range value.DepfileDependencies(v.Regions[value.RegionDepfile].Text) {
		if strings.HasPrefix(d, "/") && roots.Relativize(d) == d {
			continue // toolchain or system header: covered by the key
		}
		if _, err := os.Stat(r.abs(d)); err != nil {
			return fmt.Errorf("%w: %s is missing here", errStale, d)
		}
	}
	return nil
}

// writeAtomic writes data to path through a temporary file and a rename, with the mode a
// compiler's own output gets (0666 less the umask), so a crash never leaves half an object.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.pace-%d-%d", filepath.Base(path), os.Getpid(), time.Now().UnixNano()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}
