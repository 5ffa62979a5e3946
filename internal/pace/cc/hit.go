package cc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
// missing here (the replay guard of pace-wire §3.7).
var errStale = errors.New("stale hit")

// received is a cached result as it arrived: the object already in a temporary file beside
// the output, the text regions in memory and localized to this machine.
type received struct {
	objectTmp string
	regions   []value.Region
}

func (rc received) discard() {
	if rc.objectTmp != "" {
		os.Remove(rc.objectTmp)
	}
}

// tryHit serves key from the cache. done is false on a miss, a value that does not decode, a
// stale hit or an output that cannot be written: the caller compiles for real.
func (r *run) tryHit(ctx context.Context, key cachekey.Digest, via string) (done bool, status int) {
	rc, hit := r.fetchResult(ctx, key)
	if !hit {
		return false, 0
	}
	if r.cfg.Verify > 0 && keyMod(key, r.cfg.Verify) {
		defer rc.discard()
		return true, r.verify(key, rc)
	}
	if err := r.replay(rc); err != nil {
		rc.discard()
		r.verbosef("%v for %s: compiling for real", err, shortKey(key))
		return false, 0
	}
	r.rec.Outcome, r.rec.Via = ccstats.Hit, via
	r.verbosef("HIT (%s) %s %s", via, shortKey(key), r.comp.Source)
	return true, 0
}

// fetchResult fetches key, streaming the object straight into a temporary file so a large
// object never needs a buffer of its size (on this machine the page faults of such a buffer
// cost more than the transfer).
func (r *run) fetchResult(ctx context.Context, key cachekey.Digest) (received, bool) {
	if r.cacheDown {
		return received{}, false
	}
	defer r.lookupTime(time.Now())
	c, err := r.conn(ctx)
	if err != nil {
		r.cacheFailed(err)
		return received{}, false
	}
	var rc received
	var decodeErr error
	hit, err := c.FetchStream(ctx, key.Hex(), func(body io.Reader, n uint32) error {
		rc, decodeErr = r.receive(body, n)
		return nil
	})
	switch {
	case err != nil:
		rc.discard()
		r.cacheFailed(err)
		return received{}, false
	case decodeErr != nil:
		rc.discard()
		r.verbosef("cached value for %s not usable (%v): compiling", shortKey(key), decodeErr)
		return received{}, false
	}
	return rc, hit
}

// receive reads one value: its object into a temporary file next to the output (the rename
// that publishes it is then atomic), its regions into memory, localized to this machine.
func (r *run) receive(body io.Reader, n uint32) (received, error) {
	f, tmp, err := createBeside(r.abs(r.comp.Output))
	if err != nil {
		return received{}, err
	}
	regions, rerr := value.ReadStream(body, n, f, nil)
	if err := f.Close(); rerr == nil {
		rerr = err
	}
	rc := received{objectTmp: tmp}
	if rerr != nil {
		return rc, rerr
	}
	rc.regions = value.Localize(value.Value{Regions: regions}, value.Roots{SrcRoot: r.cfg.SourceDir, BuildTree: r.cfg.BinaryDir}).Regions
	return rc, nil
}

// replay reproduces a compile from its cached result: the object, the depfile (targets as
// stored, dependencies localized), and the captured streams. Every output is in place before
// any stream is replayed, so a failure can still fall back to a real compile.
func (r *run) replay(rc received) error {
	if err := r.guard(rc.regions); err != nil {
		return err
	}
	if r.comp.Deps.Mode != ccargs.DepNone {
		if len(rc.regions) <= value.RegionDepfile {
			return fmt.Errorf("%w: the cached result has no depfile", errStale)
		}
		if err := writeAtomic(r.abs(r.comp.Deps.File), rc.regions[value.RegionDepfile].Text); err != nil {
			return fmt.Errorf("writing the depfile: %w", err)
		}
	}
	if err := os.Rename(rc.objectTmp, r.abs(r.comp.Output)); err != nil {
		return fmt.Errorf("writing the object: %w", err)
	}
	if len(rc.regions) > value.RegionStdout {
		r.stdout.Write(rc.regions[value.RegionStdout].Text)
	}
	if len(rc.regions) > value.RegionStderr {
		r.stderr.Write(rc.regions[value.RegionStderr].Text)
	}
	return nil
}

// guard checks that every dependency the cached depfile names, and that this machine answers
// for (relative, or under a root), exists here.
func (r *run) guard(regions []value.Region) error {
	if len(regions) <= value.RegionDepfile {
		return nil
	}
	roots := r.roots()
	for _, d := range value.DepfileDependencies(regions[value.RegionDepfile].Text) {
		if strings.HasPrefix(d, "/") && roots.Relativize(d) == d {
			continue // toolchain or system header: covered by the key
		}
		if _, err := os.Stat(r.abs(d)); err != nil {
			return fmt.Errorf("%w: %s is missing here", errStale, d)
		}
	}
	return nil
}

// createBeside creates a fresh temporary file in path's directory with the mode a compiler's
// own output gets (0666 less the umask).
func createBeside(path string) (*os.File, string, error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.pace-%d-%d", filepath.Base(path), os.Getpid(), time.Now().UnixNano()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	return f, tmp, err
}

// writeAtomic writes data to path through a temporary file and a rename, so a crash never
// leaves half a file.
func writeAtomic(path string, data []byte) error {
	f, tmp, err := createBeside(path)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
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

// sameObject reports whether the file at path holds exactly the bytes of the file at tmp.
func sameObject(path, tmp string) bool {
	a, err1 := os.ReadFile(path)
	b, err2 := os.ReadFile(tmp)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
