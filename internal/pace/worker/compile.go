package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// compile is steps 11 and 12: scratch, spawn, progress, reply. The job's
// scratch directory is gone when it returns. b is the screened bundle, nil
// when the source is preprocessed text.
func (j *job) compile(p Progresser, req *verbs.CompileRequest, tc Toolchain, source []byte, b *tubundle.Bundle) ([]byte, error) {
	dir, run, err := j.prepareRun(req, tc, source, b)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res, err := j.runWithProgress(p, run)
	if err != nil {
		return nil, err
	}
	// The client cannot map the job directory; replaced, it marks diagnostics as not replayable.
	res.stderr = tubundle.Scrub(res.stderr, dir)
	if run.inexact != "" {
		res.stderr = tubundle.MarkInexact(res.stderr, run.inexact)
	}
	return j.reply(req, source, res, dir)
}

// prepareRun makes the job's scratch directory and the compile to run in it.
func (j *job) prepareRun(req *verbs.CompileRequest, tc Toolchain, source []byte, b *tubundle.Bundle) (string, compileRun, error) {
	if b != nil {
		return j.bundleRun(req, tc, b)
	}
	dir, src, err := j.prepareScratch(req.SourceName, source)
	if err != nil {
		return "", compileRun{}, err
	}
	// Preprocessed text's line markers may name any file of this machine, whose lines a caret
	// would print into the reply: no carets (they are no part of an object).
	args := append(append([]string(nil), req.Args...), noCaret(tc))
	return dir, compileRun{
		path:   tc.Path,
		args:   compilerArgs(args, prefixMaps(req, dir), src, filepath.Join(dir, objectName)),
		dir:    dir,
		env:    compilerEnv(dir, tubundle.LocaleC),
		outCap: j.w.cfg.OutputCap,
		now:    j.w.cfg.Now,
	}, nil
}

func noCaret(tc Toolchain) string {
	if tc.Flavor.IsClang() {
		return "-fno-caret-diagnostics"
	}
	return "-fno-diagnostics-show-caret"
}

// compilerEnv is the whole environment a compiler gets: nothing of the
// worker's own beyond PATH (the driver finds its assembler there), the
// message locale (C, or C.UTF-8 for a bundle whose client's diagnostics
// use it), and the job's scratch directory for its temporary files.
func compilerEnv(jobDir, locale string) []string {
	env := []string{"LC_ALL=" + locale, "TMPDIR=" + jobDir}
	if path := os.Getenv("PATH"); path != "" {
		env = append(env, "PATH="+path)
	}
	return env
}

// prepareScratch makes the job's directory and writes the translation
// unit under its sanitized name.
func (j *job) prepareScratch(sourceName string, source []byte) (dir, src string, err error) {
	dir, err = j.w.scratch.newJobDir()
	if err == nil {
		src = filepath.Join(dir, SanitizeSourceName(sourceName))
		if err = writeNew(src, source); err != nil {
			os.RemoveAll(dir)
		}
	}
	if err != nil {
		j.w.cfg.Logger.Warn("worker: scratch unavailable", "err", err)
		return "", "", refuse(&j.w.counters.RefusedScratchUnavailable, wire.CodeWorkerScratchUnavailable, "")
	}
	return dir, src, nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runWithProgress runs the compiler while Progress frames go out, and
// counts the job started and completed once its compiler exists.
func (j *job) runWithProgress(p Progresser, run compileRun) (runResult, error) {
	w := j.w
	ctx, cancel := context.WithTimeout(j.ctx, w.cfg.CompileTimeout)
	defer cancel()
	started := false
	run.started = func() {
		started = true
		w.counters.JobsStarted.Add(1)
	}
	stop := j.pulse(p)
	res, err := w.spawn(ctx, run)
	stop()
	if started {
		w.counters.JobsCompleted.Add(1)
		w.counters.CompileMilliseconds.Add(uint64(max(res.elapsed, 0).Milliseconds()))
	}
	return res, j.runError(err)
}

// runError turns how a run failed into the reply.
func (j *job) runError(err error) error {
	w := j.w
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errSpawn):
		w.cfg.Logger.Warn("worker: compiler could not be started", "err", err)
		return refuse(&w.counters.RefusedSpawnFailed, wire.CodeWorkerSpawnFailed, "")
	case j.abandoned.Load():
		return wire.Refuse(wire.CodeRequestDeadlineExceeded, "the worker stopped and abandoned this compile")
	case errors.Is(err, context.DeadlineExceeded):
		return refuse(&w.counters.RefusedDeadlineExceeded, wire.CodeRequestDeadlineExceeded,
			"the compile ran past this worker's limit of %s", w.cfg.CompileTimeout)
	case errors.Is(err, context.Canceled):
		j.markGone() // the connection ended under the compile
		return wire.Refuse(wire.CodeRequestDeadlineExceeded, "the client went away; the compile was abandoned")
	}
	w.cfg.Logger.Warn("worker: compiler run failed", "err", err)
	return refuse(&w.counters.RefusedSpawnFailed, wire.CodeWorkerSpawnFailed, "")
}

// markGone records that the client went away and kills the compile; the
// first call counts it.
func (j *job) markGone() {
	if j.gone.CompareAndSwap(false, true) {
		j.w.counters.JobsAbandonedClientGone.Add(1)
		j.cancel()
	}
}

// pulse writes a Progress frame every interval until stopped. A failed
// write means the client is gone: the compile is killed. stop returns
// only once no Progress frame can follow, so none trails the reply.
func (j *job) pulse(p Progresser) (stop func()) {
	if p == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(j.w.cfg.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-j.ctx.Done():
				return
			case <-tick.C:
				if err := p.Progress(); err != nil && !errors.Is(err, frameserver.ErrNoInterim) {
					j.markGone()
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// reply builds COMPILE's Ok body: the exit code, the object enveloped in
// the first codec of the client's list this build produces (empty when
// the compile failed), both streams, the correlation and the signature
// over (correlation, object field as sent).
func (j *job) reply(req *verbs.CompileRequest, source []byte, res runResult, dir string) ([]byte, error) {
	w := j.w
	var object []byte
	if res.exitCode == 0 {
		raw, err := readObject(filepath.Join(dir, objectName), w.ceiling)
		if err != nil {
			return nil, w.objectError(err)
		}
		if object, err = wire.Seal(nil, wire.ChooseCodec(req.Codecs, wire.SupportedCodecs), raw); err != nil {
			return nil, w.objectError(err)
		}
	}
	corr := req.Correlation(source)
	r := verbs.CompileReply{
		ExitCode: res.exitCode, Object: object, Stdout: res.stdout, Stderr: res.stderr,
		Correlation: corr, Signature: lease.SignReply(w.cfg.Signer, corr, object),
	}
	size := 6*wire.FieldPrefixLen + 4 + len(object) + len(res.stdout) + len(res.stderr) + len(corr) + len(r.Signature)
	return r.Append(make([]byte, 0, size)), nil
}

var errObjectTooLarge = errors.New("object larger than the reply ceiling")

// readObject reads the compiler's object, refusing one above limit before
// allocating for it.
func readObject(path string, limit uint64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if uint64(fi.Size()) > limit {
		return nil, fmt.Errorf("%w: %d bytes", errObjectTooLarge, fi.Size())
	}
	buf := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func (w *Worker) objectError(err error) error {
	w.cfg.Logger.Warn("worker: compiler exited 0 but its object cannot be returned", "err", err)
	if errors.Is(err, errObjectTooLarge) {
		return wire.Refuse(wire.CodePayloadTooLarge, "the object is larger than this worker's reply ceiling of %d bytes", w.ceiling)
	}
	return refuse(&w.counters.RefusedSpawnFailed, wire.CodeWorkerSpawnFailed, "the compiler exited 0 without an object")
}

// release runs once the reply is written: the charge, the slot and the
// job's place in the running set are given back.
func (j *job) release() {
	j.charge.release()
	if j.cancel != nil {
		j.cancel()
	}
	if j.slot {
		j.slot = false
		j.w.slots.release()
		j.w.leave(j)
	}
}
