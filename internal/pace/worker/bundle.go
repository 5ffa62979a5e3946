package worker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// bundle is step 10b (pace-node §5.3): a source that is a directives-only bundle
// (pace-wire §3.9.1) is decoded and screened before anything is written; nil for
// preprocessed text.
// Only gcc compiles bundles: the text is gcc's directives-only output.
func (w *Worker) bundle(tc Toolchain, source []byte) (*tubundle.Bundle, error) {
	if !tubundle.IsBundle(source) {
		return nil, nil
	}
	c := &w.counters.RefusedRejectedSource
	if tc.Flavor.IsClang() {
		return nil, refuse(c, wire.CodeWorkerRejectedArgument, "toolchain %s compiles no directives-only bundle; only gcc does", tc.Label)
	}
	b, err := tubundle.Decode(source)
	if err != nil {
		return nil, refuse(c, wire.CodeMalformedFrame, "%v", err)
	}
	if err := tubundle.Screen(b); err != nil {
		return nil, refuse(c, wire.CodeWorkerRejectedArgument, "%v", err)
	}
	return b, nil
}

// bundleRun lays a screened bundle out in a new job directory and returns the directory and
// the compile: the source language instead of the preprocessed one, the bundle's options,
// the prefix maps, its main region as input, under the client's message locale.
func (j *job) bundleRun(req *verbs.CompileRequest, tc Toolchain, b *tubundle.Bundle) (string, compileRun, error) {
	dir, err := j.w.scratch.newJobDir()
	if err == nil {
		err = writeLayout(dir, b)
	}
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		j.w.cfg.Logger.Warn("worker: scratch unavailable", "err", err)
		return "", compileRun{}, refuse(&j.w.counters.RefusedScratchUnavailable, wire.CodeWorkerScratchUnavailable, "")
	}
	args, _ := tubundle.SourceLanguage(req.Args)
	_, _, extra, input := tubundle.Layout(b)
	locale, inexact := b.Locale, ""
	if locale == tubundle.LocaleCUTF8 && !j.w.printsUTF8(j.ctx, tc) {
		locale, inexact = tubundle.LocaleC, "this worker has no C.UTF-8 locale"
	}
	run := compileRun{
		path:    tc.Path,
		args:    compilerArgs(append(args, extra...), prefixMaps(req, dir), input, filepath.Join(dir, objectName)),
		dir:     dir,
		env:     append(compilerEnv(dir, locale), "PWD="+dir),
		outCap:  j.w.cfg.OutputCap,
		now:     j.w.cfg.Now,
		inexact: inexact,
	}
	return dir, run, nil
}

// printsUTF8 reports whether the compiler quotes with U+2018 under LC_ALL=C.UTF-8, tried once
// per compiler: a machine without the locale prints C's quotes, which the client would take
// for its own.
func (w *Worker) printsUTF8(ctx context.Context, tc Toolchain) bool {
	if v, ok := w.utf8.Load(tc.Path); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.Path, "-fsyntax-only", "-x", "c", "-")
	cmd.Stdin = strings.NewReader("int f(void) { return undeclared_name; }\n")
	cmd.Env = []string{"LC_ALL=" + tubundle.LocaleCUTF8, "PATH=" + os.Getenv("PATH")}
	out, _ := cmd.CombinedOutput()
	ok := bytes.Contains(out, []byte("\u2018undeclared_name\u2019"))
	if ctx.Err() == nil {
		w.utf8.Store(tc.Path, ok)
	}
	return ok
}

// writeLayout makes the bundle's directories and writes its files, none of which may exist.
func writeLayout(dir string, b *tubundle.Bundle) error {
	dirs, writes, _, _ := tubundle.Layout(b)
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	for _, f := range writes {
		if err := writeNew(filepath.Join(dir, f.Path), f.Data); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}
