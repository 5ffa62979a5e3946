package cc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// probed is what the key probe learned: the preprocessed text with line markers, the files
// the translation unit read (the source first), and the depfile the compile itself would
// write (a dispatched compile's worker saw no headers, so this is the one the client writes).
type probed struct {
	text    []byte
	deps    []string
	depfile []byte
	// directivesOnly: text is gcc's directives-only output, which a gcc worker compiles
	// (pace-wire §3.9.1); stderr is what the probe printed (#warning and the like).
	directivesOnly bool
	stderr         []byte
}

// probe runs the preprocessor once: the text goes to a scratch file, the dependencies to a
// scratch depfile written with the compile's own dependency options (pace-wire §3.5, line
// markers kept). With gcc the key text is directives-only: includes and conditionals
// resolved, line markers kept, macros left unexpanded, which is as much a function of every
// input as the expanded text and about a quarter cheaper to produce (measured on LevelDB's
// db_impl.cc).
func (r *run) probe(ctx context.Context) (probed, error) {
	dir, err := os.MkdirTemp("", "pace-cc-")
	if err != nil {
		return probed{}, fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(dir)
	depfile, out := filepath.Join(dir, "probe.d"), filepath.Join(dir, "probe.i")
	args := r.comp.DepProbeArgs(depfile)
	if !r.comp.Driver.Flavor.IsClang() {
		args = append(args, "-fdirectives-only")
	}
	_, stderr, err := r.runQuiet(ctx, append(args, "-o", out))
	if err != nil {
		return probed{}, fmt.Errorf("preprocessing %s: %w", r.comp.Source, err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		return probed{}, fmt.Errorf("probe output: %w", err)
	}
	dep, err := os.ReadFile(depfile)
	if err != nil {
		return probed{}, fmt.Errorf("probe depfile: %w", err)
	}
	return probed{text: text, deps: value.DepfileDependencies(dep), depfile: dep,
		directivesOnly: !r.comp.Driver.Flavor.IsClang(), stderr: stderr}, nil
}

// preprocessForDispatch is the text a clang worker compiles: fully preprocessed, line markers
// kept (pace-wire §3.9.1). A gcc worker is sent the probe's directives-only text, bundled.
func (r *run) preprocessForDispatch(ctx context.Context) ([]byte, error) {
	t0 := time.Now()
	text, _, err := r.runQuiet(ctx, r.comp.DispatchPreprocessArgs())
	r.rec.CppMS += ms(time.Since(t0))
	if err != nil {
		return nil, fmt.Errorf("preprocessing %s for dispatch: %w", r.comp.Source, err)
	}
	return text, nil
}
