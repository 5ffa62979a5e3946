package cc

import (
	"context"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// miss compiles for real, passing the output through live, and stores the result when the
// compile succeeded. A failed compile is never stored.
func (r *run) miss(ctx context.Context, key cachekey.Digest, pp probed) int {
	r.rec.Outcome = ccstats.Miss
	if r.cacheDown {
		r.rec.Outcome = ccstats.Unavailable
	}
	r.verbosef("MISS %s %s", shortKey(key), r.comp.Source)
	c, remote := captured{}, false
	if r.cfg.Scheduler != "" {
		c, remote = r.dispatch(ctx, key, pp)
	} else {
		r.rec.Dispatch = ccstats.CauseNoScheduler
	}
	if !remote {
		c = r.runCaptured(r.args)
	}
	if c.status != 0 {
		r.rec.Outcome = ccstats.Failed
		return c.status
	}
	v, err := r.result(c)
	if err != nil {
		r.verbosef("not stored: %v", err)
		return 0
	}
	r.store(ctx, key, v)
	r.recordManifest(ctx, key, pp.deps)
	return 0
}

// result encodes what the compile produced as a compile-value: the object, then the captured
// stdout and stderr and, when one was written, the depfile (pace-wire §2.2 positions).
func (r *run) result(c captured) ([]byte, error) {
	obj, err := os.ReadFile(r.abs(r.comp.Output))
	if err != nil {
		return nil, err
	}
	v := value.Value{Object: obj, Regions: []value.Region{
		{Grammar: value.ShowIncludes, Text: c.stdout.Bytes()},
		{Grammar: value.GnuDiagnostics, Text: c.stderr.Bytes()},
	}}
	if r.comp.Deps.Mode != ccargs.DepNone {
		dep, err := os.ReadFile(r.abs(r.comp.Deps.File))
		if err != nil {
			return nil, err
		}
		v.Regions = append(v.Regions, value.Region{Grammar: value.GccDepfile, Text: dep})
	}
	return value.Encode(v)
}

// verify recompiles a hit for real and compares the objects (PACE_VERIFY). The fresh result
// always wins; a mismatch is reported with its key whatever the verbosity.
func (r *run) verify(key cachekey.Digest, cached received) int {
	r.verbosef("VERIFY %s %s", shortKey(key), r.comp.Source)
	t0 := time.Now()
	c := r.runCaptured(r.args)
	r.rec.Outcome, r.rec.Reason, r.rec.TotalMS = ccstats.Hit, "verified", ms(time.Since(t0))
	if c.status != 0 {
		r.rec.Outcome = ccstats.Failed
		return c.status
	}
	if !sameObject(r.abs(r.comp.Output), cached.objectTmp) {
		r.rec.Reason = "verify mismatch"
		r.stderr.Write([]byte("pace-cc: VERIFY MISMATCH: the cached object for key " + key.Hex() +
			" differs from a fresh compile of " + r.comp.Source + "; the fresh object was kept\n"))
	}
	return 0
}
