package cc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// Depend mode (pace-wire §3.6.1): a miss compiled here runs the compiler once, with a depfile,
// and keys its result by the manifest that depfile yields (the source and every header it
// lists, hashed), instead of running the preprocessor first to make the key.

// viaDepend is the statistics' via of a miss keyed from its depfile.
const viaDepend = "depend"

// dependMode reports whether this miss is compiled here in depend mode, and says in the
// verbose note why not when it is not.
func (r *run) dependMode() bool {
	why := r.dependRefusal()
	if why != "" {
		r.verbosef("depend mode off (%s): keying by the preprocessor", why)
	}
	return why == ""
}

// dependRefusal is why this miss is keyed by the preprocessor instead, or "". A miss a fleet
// can take goes there: a worker compiles preprocessed text, so the preprocessor runs anyway
// and the preprocessed key costs one run more, not two.
func (r *run) dependRefusal() string {
	switch {
	case r.cfg.NoDirect:
		return "PACE_NO_DIRECT: only direct mode reads the manifest depend mode keys by"
	case r.cfg.NoDepend:
		return "PACE_NO_DEPEND"
	case r.cfg.Scheduler != "" && r.remoteArgsErr() == nil:
		return "the miss is offered to the fleet, which compiles preprocessed text"
	}
	return r.comp.DependRefusal()
}

// remoteArgsErr is the part of the dispatch preconditions (pace-wire §3.9.1) that the
// arguments alone decide.
func (r *run) remoteArgsErr() error {
	_, err := r.comp.RemoteCompileArgs(r.id.Target)
	return err
}

// dependMiss compiles here once, with a depfile, and stores the result under the key its
// manifest gives. The user's own outputs are exactly the compiler's: the command runs as
// given, or with a private -MD -MF that changes neither the object nor the diagnostics.
func (r *run) dependMiss(ctx context.Context) int {
	r.rec.Outcome, r.rec.Via, r.rec.Dispatch = ccstats.Miss, viaDepend, ccstats.CauseNoScheduler
	if r.cfg.Scheduler != "" {
		r.noDispatch(ccstats.CauseArguments, "%v", r.remoteArgsErr())
	}
	if r.cacheDown { // nothing will be stored: compile exactly as asked
		r.rec.Outcome = ccstats.Unavailable
		return r.finishDepend(r.runCaptured(r.args))
	}
	private, cleanup, err := r.privateDepfile()
	if err != nil {
		r.verbosef("depend mode off (%v): keying by the preprocessor", err)
		r.rec.Via, r.rec.Dispatch = "", ""
		return r.preprocessed(ctx)
	}
	defer cleanup()
	r.verbosef("MISS (depend) %s", r.comp.Source)
	floor := fileClock()
	c := r.runCaptured(r.comp.DependArgs(private))
	if status := r.finishDepend(c); status != 0 || r.cacheDown {
		return status
	}
	m, key, nk := r.dependKey(r.comp.DependFile(private), floor)
	if nk != nil {
		r.rec.Outcome, r.rec.Reason = nk.outcome, nk.reason
		r.verbosef("not stored: %s (%s)", nk.reason, nk.path)
		return 0
	}
	v, err := r.result(c)
	if err != nil {
		r.verbosef("not stored: %v", err)
		return 0
	}
	r.store(ctx, key, v)
	r.storeManifest(ctx, m)
	return 0
}

// finishDepend records a failed compile; a failed compile is never stored.
func (r *run) finishDepend(c captured) int {
	if c.status != 0 {
		r.rec.Outcome = ccstats.Failed
	}
	return c.status
}

// privateDepfile names a depfile in a fresh private directory when the command writes none of
// its own: a predictable name in a shared temporary directory could be a planted link.
func (r *run) privateDepfile() (string, func(), error) {
	if !r.comp.PrivateDepfile() {
		return "", func() {}, nil
	}
	dir, err := os.MkdirTemp("", "pace-cc-")
	if err != nil {
		return "", nil, fmt.Errorf("scratch directory: %w", err)
	}
	return filepath.Join(dir, "dep.d"), func() { os.RemoveAll(dir) }, nil
}

// notKeyed is why a depend-mode result cannot be keyed soundly, and so is not stored.
type notKeyed struct {
	outcome ccstats.Outcome
	reason  string // stable: the statistics count it
	path    string // the file that decided it, for the verbose note
}

// dependEntry is one file of the manifest: its path as the manifest records it, as the key
// covers it, and its content hash.
type dependEntry struct {
	manifestPath, keyPath string
	sum                   cachekey.Digest
}

// dependKey builds the manifest from the depfile the compile wrote and derives the object key
// from it: the manifest key (compiler, source path, working directory, arguments and
// environment) and every listed file with its content hash. floor is the file clock read just
// before the compile started.
func (r *run) dependKey(depfile string, floor time.Time) (value.Manifest, cachekey.Digest, *notKeyed) {
	var m value.Manifest
	var key cachekey.Digest
	text, err := os.ReadFile(r.abs(depfile))
	if err != nil {
		return m, key, &notKeyed{ccstats.Miss, "no depfile written", depfile}
	}
	deps := value.DepfileDependencies(text)
	if len(deps) == 0 || r.abs(deps[0]) != r.abs(r.comp.Source) {
		// gcc and clang list the source first; anything else is a depfile misread.
		return m, key, &notKeyed{ccstats.Miss, "depfile does not start with the source", depfile}
	}
	entries, nk := r.dependEntries(deps, floor)
	if nk != nil {
		return m, key, nk
	}
	mkey := r.manifestKey()
	b := cachekey.New(cachekey.TagDependObject).FieldString(r.id.String()).Field(mkey[:])
	m.ToolchainStamp = []byte(r.id.String())
	for _, e := range entries {
		b.Path(e.keyPath).Field(e.sum[:])
		m.Entries = append(m.Entries, value.ManifestEntry{Path: e.manifestPath, ContentHash: append([]byte(nil), e.sum[:]...)})
	}
	key = b.Sum()
	m.ObjectKey = key[:]
	return m, key, nil
}

// dependEntries hashes every dependency, once per file, sorted by the path the key covers.
// Where the object records locations, the key covers absolute paths: the manifest's rooted
// ones would let two checkouts share an object whose debug information names one of them.
func (r *run) dependEntries(deps []string, floor time.Time) ([]dependEntry, *notKeyed) {
	sensitive, roots := r.locationSensitive(), r.roots()
	seen := make(map[string]bool, len(deps))
	out := make([]dependEntry, 0, len(deps))
	for _, d := range deps {
		abs := r.abs(d)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		sum, nk := r.dependHash(abs, floor)
		if nk != nil {
			return nil, nk
		}
		e := dependEntry{manifestPath: roots.Relativize(abs), keyPath: abs, sum: sum}
		if !strings.HasPrefix(e.manifestPath, "<") && !strings.HasPrefix(e.manifestPath, "/") {
			return nil, &notKeyed{ccstats.Miss, "dependency cannot be anchored", d}
		}
		if !sensitive {
			e.keyPath = e.manifestPath
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].keyPath < out[j].keyPath })
	return out, nil
}

// dependHash hashes one dependency and checks that what it hashed is what the compiler read
// (unchangedSince); a dependency naming a temporal macro is refused.
func (r *run) dependHash(abs string, floor time.Time) (cachekey.Digest, *notKeyed) {
	sum, err := r.fileHashes().Hash(abs)
	switch {
	case err != nil:
		return sum.Digest, &notKeyed{ccstats.Miss, "dependency unreadable", abs}
	case sum.Temporal:
		// The object depends on when it was compiled: no key can stand for it.
		return sum.Digest, &notKeyed{ccstats.Uncacheable, "__TIME__, __DATE__ or __TIMESTAMP__ in a header", abs}
	}
	return sum.Digest, unchangedSince(abs, floor)
}

// unchangedSince refuses a file stamped at or after floor, the moment the compiler started: it
// may have changed while the compiler ran. Called after hashing, so a change between the hash
// and this stat is seen too.
func unchangedSince(abs string, floor time.Time) *notKeyed {
	var st syscall.Stat_t
	if err := syscall.Stat(abs, &st); err != nil || stampedSince(st, floor) {
		return &notKeyed{ccstats.Miss, "dependency changed during the compile", abs}
	}
	return nil
}

// stampedSince reports whether a file's modification or change time is at or after floor.
func stampedSince(st syscall.Stat_t, floor time.Time) bool {
	f := floor.UnixNano()
	return st.Mtim.Nano() >= f || st.Ctim.Nano() >= f
}

// clockRealtimeCoarse is CLOCK_REALTIME_COARSE, the clock Linux stamps file times from. It
// lags the precise clock by up to a tick (4.6 ms measured here), so a floor read from the
// precise clock could stand after the stamp of a write that came later.
const clockRealtimeCoarse = 5

// fileClock reads the clock file times are stamped from. Should the call fail, the precise
// clock less a generous tick stands in: an earlier floor only leaves more results unstored.
func fileClock() time.Time {
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockRealtimeCoarse, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return time.Now().Add(-20 * time.Millisecond)
	}
	return time.Unix(ts.Unix())
}

// storeManifest offers the manifest under the manifest key and keeps the local copy, once
// the object it points at has been offered.
func (r *run) storeManifest(ctx context.Context, m value.Manifest) {
	enc, err := value.EncodeManifest(m)
	if err != nil || r.cacheDown {
		return
	}
	v, err := value.Encode(value.Value{Object: enc})
	if err != nil {
		return
	}
	mkey := r.manifestKey()
	r.store(ctx, mkey, v)
	r.keepLocalManifest(mkey, enc)
}
