package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
)

// ErrNoToolchains: the survey left nothing to serve. At the first survey
// the node refuses to start with it; the message lists where it looked.
var ErrNoToolchains = errors.New("no usable compiler toolchain")

// Prober identifies and fingerprints a compiler. The default runs it
// through package toolchain, the same computation pace-cc makes.
type Prober interface {
	Identify(ctx context.Context, compiler string) (toolchain.Identity, error)
	Fingerprint(ctx context.Context, id toolchain.Identity) (string, error)
}

// ToolchainProber is the Prober over package toolchain, caching results in
// CacheDir (empty: no cache).
type ToolchainProber struct{ CacheDir string }

// Identify implements Prober.
func (p ToolchainProber) Identify(ctx context.Context, compiler string) (toolchain.Identity, error) {
	return toolchain.Identify(ctx, compiler, p.CacheDir)
}

// Fingerprint implements Prober.
func (p ToolchainProber) Fingerprint(ctx context.Context, id toolchain.Identity) (string, error) {
	return toolchain.Fingerprint(ctx, id, p.CacheDir)
}

// SurveyConfig says which compilers to serve (pace-node §5.6, pace-node §3.1).
type SurveyConfig struct {
	// Pins are the --toolchain entries; naming any serves exactly that
	// set, never merged with a survey of the machine.
	Pins []Pin
	// NoDiscovery is --no-toolchain-discovery: without pins, nothing.
	NoDiscovery bool
	// SearchDirs are where to look; nil means PATH, then the platform's
	// usual compiler directories. Relative entries are never searched.
	SearchDirs []string
	Prober     Prober
}

// Dropped is a compiler the survey found and does not serve, and why.
type Dropped struct {
	Compiler string
	Reason   string
}

// SurveyResult is what a survey found.
type SurveyResult struct {
	Served  []Toolchain // deduplicated by fingerprint, first found wins
	Dropped []Dropped
	// Searched is where the survey looked: directories, or the pins.
	Searched []string
}

// platformDirs are searched after PATH (pace-node §5.6 platform layouts).
var platformDirs = []string{"/usr/local/bin", "/usr/bin", "/opt/homebrew/bin", "/opt/local/bin"}

// probeParallelism bounds concurrent probes: a cold fingerprint hashes tens
// of megabytes.
const probeParallelism = 4

// Survey finds the toolchains to serve. It fails with ErrNoToolchains
// when nothing is left, naming where it looked.
func Survey(ctx context.Context, cfg SurveyConfig) (SurveyResult, error) {
	if cfg.Prober == nil {
		cfg.Prober = ToolchainProber{}
	}
	var res SurveyResult
	switch {
	case len(cfg.Pins) > 0:
		res = surveyPins(ctx, cfg.Pins, cfg.Prober)
	case cfg.NoDiscovery:
		return res, fmt.Errorf("%w: --no-toolchain-discovery is set and no --toolchain is named", ErrNoToolchains)
	default:
		res = surveyDirs(ctx, searchDirs(cfg.SearchDirs), cfg.Prober)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("toolchain survey: %w", err)
	}
	if len(res.Served) == 0 {
		return res, fmt.Errorf("%w: looked in %s%s", ErrNoToolchains, strings.Join(res.Searched, ", "), droppedSuffix(res.Dropped))
	}
	return res, nil
}

func droppedSuffix(dropped []Dropped) string {
	if len(dropped) == 0 {
		return "; found no gcc, g++, clang or clang++"
	}
	parts := make([]string, len(dropped))
	for i, d := range dropped {
		parts[i] = d.Compiler + " (" + d.Reason + ")"
	}
	return "; dropped " + strings.Join(parts, ", ")
}

// searchDirs is PATH then the platform directories, absolute and unique.
func searchDirs(configured []string) []string {
	dirs := configured
	if dirs == nil {
		dirs = append(filepath.SplitList(os.Getenv("PATH")), platformDirs...)
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = filepath.Clean(d)
		if filepath.IsAbs(d) && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// candidate is a compiler found by name, before probing.
type candidate struct {
	name     string // as found (label and flavor come from it)
	resolved string // symlinks resolved: what runs, and the dedup key
}

// surveyDirs scans dirs for driver names and probes each distinct binary.
func surveyDirs(ctx context.Context, dirs []string, p Prober) SurveyResult {
	res := SurveyResult{Searched: dirs}
	var cands []candidate
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a PATH entry that does not exist is ordinary
		}
		for _, e := range entries {
			d, ok := ccargs.ClassifyDriver(e.Name())
			if !ok || !surveyedCores[d.Core] {
				continue
			}
			path := filepath.Join(dir, e.Name())
			resolved, err := executableFile(path)
			if err != nil {
				res.Dropped = append(res.Dropped, Dropped{path, err.Error()})
				continue
			}
			if !seen[resolved] {
				seen[resolved] = true
				cands = append(cands, candidate{name: path, resolved: resolved})
			}
		}
	}
	probed, dropped := probeAll(ctx, cands, p)
	res.Served, res.Dropped = dedupByFingerprint(probed), append(res.Dropped, dropped...)
	return res
}

// executableFile resolves path and checks it is a regular file someone
// may execute.
func executableFile(path string) (string, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("cannot be resolved: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("cannot be read: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", errors.New("not an executable file")
	}
	return resolved, nil
}

// probeAll identifies and fingerprints each candidate, a few at a time,
// keeping the candidates' order.
func probeAll(ctx context.Context, cands []candidate, p Prober) ([]Toolchain, []Dropped) {
	out := make([]Toolchain, len(cands))
	errs := make([]error, len(cands))
	sem := make(chan struct{}, probeParallelism)
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = probe(ctx, c, p)
		}()
	}
	wg.Wait()
	var served []Toolchain
	var dropped []Dropped
	for i := range cands {
		if errs[i] != nil {
			dropped = append(dropped, Dropped{cands[i].name, errs[i].Error()})
			continue
		}
		served = append(served, out[i])
	}
	return served, dropped
}

func probe(ctx context.Context, c candidate, p Prober) (Toolchain, error) {
	id, err := p.Identify(ctx, c.resolved)
	if err != nil {
		return Toolchain{}, fmt.Errorf("cannot be identified: %w", err)
	}
	fp, err := p.Fingerprint(ctx, id)
	if err != nil {
		return Toolchain{}, fmt.Errorf("cannot be fingerprinted: %w", err)
	}
	if !isFingerprint(fp) {
		return Toolchain{}, fmt.Errorf("fingerprint %q is not 64 hex digits", fp)
	}
	path := id.Compiler
	if path == "" {
		path = c.resolved
	}
	return Toolchain{Fingerprint: fp, Path: path, Label: labelOf(c.name, id.Banner), Flavor: flavorOf(c.name, &id)}, nil
}

// dedupByFingerprint keeps the first toolchain of each fingerprint.
func dedupByFingerprint(list []Toolchain) []Toolchain {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, tc := range list {
		if !seen[tc.Fingerprint] {
			seen[tc.Fingerprint] = true
			out = append(out, tc)
		}
	}
	return out
}

// surveyPins serves exactly the pinned compilers. A pinned fingerprint is
// never probed: the compiler only has to exist and be executable.
func surveyPins(ctx context.Context, pins []Pin, p Prober) SurveyResult {
	var res SurveyResult
	var probed []Toolchain
	for _, pin := range pins {
		res.Searched = append(res.Searched, "--toolchain "+pin.Compiler)
		resolved, err := lookCompiler(pin.Compiler)
		if err != nil {
			res.Dropped = append(res.Dropped, Dropped{pin.Compiler, err.Error()})
			continue
		}
		if pin.Fingerprint != "" {
			probed = append(probed, Toolchain{Fingerprint: pin.Fingerprint, Path: resolved,
				Label: labelOf(pin.Compiler, ""), Flavor: flavorOf(pin.Compiler, nil), Pinned: true})
			continue
		}
		tc, err := probe(ctx, candidate{name: pin.Compiler, resolved: resolved}, p)
		if err != nil {
			res.Dropped = append(res.Dropped, Dropped{pin.Compiler, err.Error()})
			continue
		}
		tc.Pinned = true
		probed = append(probed, tc)
	}
	res.Served = dedupByFingerprint(probed)
	return res
}

// lookCompiler finds a pinned compiler: a bare name on PATH, else a path.
func lookCompiler(name string) (string, error) {
	path := name
	if !strings.ContainsAny(name, `/\`) {
		found, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("not found on PATH: %w", err)
		}
		path = found
	}
	return executableFile(path)
}
