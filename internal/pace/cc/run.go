package cc

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/filehash"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
)

// run is one pace-cc invocation of a compiler.
type run struct {
	cfg       Config
	compiler  string // resolved path of the real compiler
	args      []string
	cwd       string
	stdout    io.Writer
	stderr    io.Writer
	start     time.Time
	rec       ccstats.Record
	comp      *ccargs.Compile
	id        toolchain.Identity
	cacheDown bool // an exchange with the cache failed: no more for this invocation
	hashes    *filehash.Cache
	cache     *kvclient.Conn // nil until the first exchange
}

// fileHashes opens the file-hash memory on first use (a passthrough never pays for it).
// Without direct mode only the source is ever asked about, so the log is neither read nor
// written.
func (r *run) fileHashes() *filehash.Cache {
	if r.hashes == nil {
		dir := r.cfg.StatsDir
		if r.cfg.NoDirect {
			dir = ""
		}
		r.hashes = filehash.Open(dir, time.Now)
	}
	return r.hashes
}

func (r *run) roots() ccargs.Roots {
	return ccargs.Roots{Source: r.cfg.SourceDir, Build: r.cfg.BinaryDir}
}

// abs resolves p against the compile's working directory.
func (r *run) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.cwd, p)
}

func (r *run) verbosef(format string, args ...any) {
	if r.cfg.Verbose {
		fmt.Fprintf(r.stderr, "pace-cc: "+format+"\n", args...)
	}
}

// uncached runs the compile without the cache and records why.
func (r *run) uncached(outcome ccstats.Outcome, reason string) int {
	r.rec.Outcome, r.rec.Reason = outcome, reason
	r.verbosef("%s (%s): running %s uncached", outcome, reason, filepath.Base(r.compiler))
	status := r.runPassthrough()
	if status != 0 && outcome != ccstats.Passthrough {
		r.rec.Outcome = ccstats.Failed
	}
	return status
}

// compile is the whole cacheable path: classify, look up, and on a miss compile and store.
func (r *run) compile(ctx context.Context) int {
	inv := ccargs.Invocation{Compiler: r.compiler, Args: r.args, Cwd: r.cwd, Roots: r.roots(), ImplicitOutput: true}
	comp, err := ccargs.Classify(inv)
	if err != nil {
		if ccargs.ReasonOf(err) == ccargs.ReasonPreprocessOnly {
			if l, lerr := ccargs.ClassifyListing(inv); lerr == nil {
				return r.listing(ctx, l)
			}
		}
		return r.uncached(ccstats.Passthrough, string(ccargs.ReasonOf(err)))
	}
	r.comp = comp
	r.rec.Source = comp.Source
	if r.cfg.Addr == "" {
		return r.uncached(ccstats.Uncacheable, "PACE_ADDR is set empty")
	}
	if r.cfg.SideOutputEnv != "" {
		return r.uncached(ccstats.Uncacheable, r.cfg.SideOutputEnv+" makes gcc write a second file")
	}
	// The file-hash memory answers for an unchanged source from its stat alone, and direct
	// mode asks it about the source again.
	src, err := r.fileHashes().Hash(r.abs(comp.Source))
	if err != nil {
		return r.uncached(ccstats.Fallback, "source unreadable")
	}
	if src.Temporal {
		return r.uncached(ccstats.Uncacheable, "__TIME__, __DATE__ or __TIMESTAMP__ in the source")
	}
	if r.id, err = toolchain.Identify(ctx, r.compiler, r.stateDir("compilers")); err != nil {
		return r.uncached(ccstats.Fallback, "compiler identity: "+err.Error())
	}
	if !r.cfg.NoDirect {
		if done, status := r.tryDirect(ctx); done {
			return status
		}
	}
	if r.dependMode() {
		return r.dependMiss(ctx)
	}
	return r.preprocessed(ctx)
}

// preprocessed runs the key probe and serves or fills the object key.
func (r *run) preprocessed(ctx context.Context) int {
	t0 := time.Now()
	pp, err := r.probe(ctx)
	r.rec.CppMS += ms(time.Since(t0))
	if err != nil {
		// The real compile prints the diagnostics the preprocessor found.
		return r.uncached(ccstats.Fallback, "preprocessor failed")
	}
	key := r.objectKey(pp)
	if done, status := r.tryHit(ctx, key, "preprocessed"); done {
		r.recordManifest(ctx, key, pp.deps)
		return status
	}
	return r.miss(ctx, key, pp)
}

func (r *run) stateDir(sub string) string {
	if r.cfg.StatsDir == "" {
		return ""
	}
	return filepath.Join(r.cfg.StatsDir, sub)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// shortKey is a key's prefix for messages.
func shortKey(d cachekey.Digest) string { return d.Hex()[:16] }
