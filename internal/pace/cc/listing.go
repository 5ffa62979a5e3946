package cc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// Dependency listings (pace-wire §3.6.2): `gcc -MM *.c > Makefile.dep` preprocesses every
// source to print make rules, and a makefile that includes the result runs it before anything
// else can start. It is cached like a direct-mode hit: the key covers the compiler, the
// working directory, the arguments and the sources' contents; the value holds the rules and a
// manifest of every file the preprocessor read, which a hit checks before it prints.

// viaListing is the statistics' via of a dependency listing.
const viaListing = "listing"

// listing serves a dependency listing from the cache, or runs it traced and stores it.
func (r *run) listing(ctx context.Context, l *ccargs.Listing) int {
	r.rec.Via, r.rec.Source = viaListing, l.Sources[0]
	switch {
	case r.cfg.Addr == "":
		return r.uncached(ccstats.Uncacheable, "PACE_ADDR is set empty")
	case r.cfg.NoDirect:
		return r.uncached(ccstats.Uncacheable, "PACE_NO_DIRECT: a listing is keyed by its manifest")
	case r.cfg.SideOutputEnv != "":
		return r.uncached(ccstats.Uncacheable, r.cfg.SideOutputEnv+" makes gcc write a second file")
	}
	var err error
	if r.id, err = toolchain.Identify(ctx, r.compiler, r.stateDir("compilers")); err != nil {
		return r.uncached(ccstats.Fallback, "compiler identity: "+err.Error())
	}
	key, err := r.listingKey(l)
	if err != nil {
		return r.uncached(ccstats.Fallback, "source unreadable")
	}
	if b, hit := r.fetch(ctx, key); hit {
		if rules, ok := r.validListing(b); ok {
			return r.serveListing(l, rules)
		}
	}
	if r.cacheDown {
		return r.uncached(ccstats.Unavailable, "cache not reached")
	}
	return r.listingMiss(ctx, l, key)
}

// listingKey covers the compiler, the working directory (the rules spell paths as the command
// does, and relative includes resolve from it), every argument verbatim, the keyed
// environment, and each source's path and content.
func (r *run) listingKey(l *ccargs.Listing) (cachekey.Digest, error) {
	b := cachekey.New(cachekey.TagListing).FieldString(r.id.String()).FieldString(r.cwd)
	for _, a := range l.Args {
		b.Item(a)
	}
	b.FieldString("env")
	for _, e := range r.cfg.KeyEnv {
		b.Item(e)
	}
	b.FieldString("sources")
	for _, s := range l.Sources {
		sum, err := r.fileHashes().Hash(r.abs(s))
		if err != nil {
			return cachekey.Digest{}, err
		}
		b.Path(s).Field(sum.Digest[:])
	}
	return b.Sum(), nil
}

// validListing decodes a stored listing and returns its rules when its manifest still holds.
// The manifest's object key is the digest of the rules, so a value that does not carry the
// rules it was stored with is a miss.
func (r *run) validListing(b []byte) ([]byte, bool) {
	v, err := value.Decode(b)
	if err != nil || len(v.Regions) != 1 {
		return nil, false
	}
	m, err := value.DecodeManifest(v.Object)
	if err != nil || string(m.ToolchainStamp) != r.id.String() {
		return nil, false
	}
	v = value.Localize(v, value.Roots{SrcRoot: r.cfg.SourceDir, BuildTree: r.cfg.BinaryDir})
	rules := v.Regions[0].Text
	if sum := listingDigest(rules); !bytes.Equal(m.ObjectKey, sum[:]) {
		return nil, false
	}
	for _, e := range m.Entries {
		if !r.entryHolds(e) {
			r.verbosef("listing: %s changed", e.Path)
			return nil, false
		}
	}
	return rules, true
}

// serveListing puts the rules where the compiler would have: on standard output, whose failure
// fails the command as it would fail the compiler's, or into the named file, whose failure
// leaves the compiler to run and say why.
func (r *run) serveListing(l *ccargs.Listing, rules []byte) int {
	r.rec.Outcome = ccstats.Hit
	if l.Dest == "" {
		if _, err := r.stdout.Write(rules); err != nil {
			fmt.Fprintf(r.stderr, "pace-cc: writing the rules: %v\n", err)
			r.rec.Outcome = ccstats.Failed
			return 1
		}
		return 0
	}
	if err := writeAtomic(r.abs(l.Dest), rules); err != nil {
		r.verbosef("listing: %v", err)
		return r.uncached(ccstats.Fallback, "writing the rules: "+err.Error())
	}
	return 0
}

func listingDigest(rules []byte) cachekey.Digest {
	return cachekey.New(cachekey.TagListingRules).Field(rules).Sum()
}

// listingMiss runs the listing with -H: standard output passes through as it comes, standard
// error passes through without the trace, and what the trace named becomes the manifest. Only
// a clean run (status 0, nothing else on standard error) is stored.
func (r *run) listingMiss(ctx context.Context, l *ccargs.Listing, key cachekey.Digest) int {
	r.rec.Outcome = ccstats.Miss
	r.verbosef("MISS (listing) %d sources", len(l.Sources))
	var out bytes.Buffer
	trace := newTraceFilter(r.stderr)
	cmd := exec.Command(r.compiler, l.TraceArgs()...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Dir = os.Stdin, io.MultiWriter(r.stdout, &out), trace, r.cwd
	floor := fileClock()
	t0 := time.Now()
	status := exitCode(cmd.Run())
	trace.Close()
	r.rec.CppMS += ms(time.Since(t0))
	switch {
	case status != 0:
		r.rec.Outcome = ccstats.Failed
		return status
	case trace.pch || trace.passed != 0:
		r.verbosef("not stored: the listing printed more than its trace, or read a precompiled header")
		return 0
	}
	rules := out.Bytes()
	if l.Dest != "" {
		var err error
		if rules, err = os.ReadFile(r.abs(l.Dest)); err != nil {
			r.verbosef("not stored: %v", err)
			return 0
		}
	}
	m, nk := r.listingManifest(l, trace.files, rules, floor)
	if nk != nil {
		r.rec.Outcome, r.rec.Reason = nk.outcome, nk.reason
		r.verbosef("not stored: %s (%s)", nk.reason, nk.path)
		return 0
	}
	r.storeListing(ctx, key, m, rules)
	return 0
}

// listingManifest records every source, traced file and file the rules name by absolute path
// with its content hash, each checked unchanged since the run started.
func (r *run) listingManifest(l *ccargs.Listing, traced []string, rules []byte, floor time.Time) (value.Manifest, *notKeyed) {
	digest := listingDigest(rules)
	m := value.Manifest{ToolchainStamp: []byte(r.id.String()), ObjectKey: digest[:]}
	seen := make(map[string]bool, len(l.Sources)+len(traced))
	// The rules name what the trace leaves out: gcc's implicit stdc-predef.h under -M.
	read := append(append(append([]string(nil), l.Sources...), traced...), value.RulesDependencies(rules)...)
	for _, p := range read {
		abs := r.abs(p)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		sum, err := r.fileHashes().Hash(abs)
		if err != nil {
			return m, &notKeyed{ccstats.Miss, "dependency unreadable", abs}
		}
		if nk := unchangedSince(abs, floor); nk != nil {
			return m, nk
		}
		m.Entries = append(m.Entries, value.ManifestEntry{Path: abs, ContentHash: append([]byte(nil), sum.Digest[:]...)})
	}
	return m, nil
}

func (r *run) storeListing(ctx context.Context, key cachekey.Digest, m value.Manifest, rules []byte) {
	enc, err := value.EncodeManifest(m)
	if err != nil {
		r.verbosef("not stored: %v", err)
		return
	}
	v, err := value.Encode(value.Value{Object: enc, Regions: []value.Region{{Grammar: value.GccDepfile, Text: rules}}})
	if err != nil {
		r.verbosef("not stored: %v", err)
		return
	}
	r.store(ctx, key, v)
}
