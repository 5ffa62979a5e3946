package cc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// probed is what the key probe learned: the preprocessed text with line markers, and every
// file the translation unit read (the source first, system headers included).
type probed struct {
	text []byte
	deps []string
}

// probe runs the preprocessor once: the text goes to stdout, the dependencies to a scratch
// depfile (spec §3.5, with line markers kept).
func (r *run) probe(ctx context.Context) (probed, error) {
	dir, err := os.MkdirTemp("", "pace-cc-")
	if err != nil {
		return probed{}, fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(dir)
	depfile := filepath.Join(dir, "probe.d")
	text, _, err := r.runQuiet(ctx, r.comp.KeyProbeArgs(depfile))
	if err != nil {
		return probed{}, fmt.Errorf("preprocessing %s: %w", r.comp.Source, err)
	}
	dep, err := os.ReadFile(depfile)
	if err != nil {
		return probed{}, fmt.Errorf("probe depfile: %w", err)
	}
	return probed{text: text, deps: value.DepfileDependencies(dep)}, nil
}
