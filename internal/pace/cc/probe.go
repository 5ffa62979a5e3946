package cc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// probed is what the key probe learned: the preprocessed text with line markers, the files
// the translation unit read (the source first), and the depfile the compile itself would
// write (a dispatched compile's worker saw no headers, so this is the one the client writes).
type probed struct {
	text    []byte
	deps    []string
	depfile []byte
}

// probe runs the preprocessor once: the text goes to stdout, the dependencies to a scratch
// depfile written with the compile's own dependency options (spec §3.5, line markers kept).
func (r *run) probe(ctx context.Context) (probed, error) {
	dir, err := os.MkdirTemp("", "pace-cc-")
	if err != nil {
		return probed{}, fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(dir)
	depfile := filepath.Join(dir, "probe.d")
	text, _, err := r.runQuiet(ctx, r.comp.DepProbeArgs(depfile))
	if err != nil {
		return probed{}, fmt.Errorf("preprocessing %s: %w", r.comp.Source, err)
	}
	dep, err := os.ReadFile(depfile)
	if err != nil {
		return probed{}, fmt.Errorf("probe depfile: %w", err)
	}
	return probed{text: text, deps: value.DepfileDependencies(dep), depfile: dep}, nil
}
