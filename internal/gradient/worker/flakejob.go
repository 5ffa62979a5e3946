package worker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// evalBatchSize is how many derivations one EvalResult carries (gradient-server §6.2 step
// 6).
const evalBatchSize = 50

// flake runs a flake job (gradient-server §6.2): fetch (clone, archive, upload the source
// and its inputs) and evaluate (expand the wildcards, walk the closure, upload the .drv
// files and sources batch by batch, each batch followed by its EvalResult).
func (r *run) flake(ctx context.Context, fj *wire.FlakeJob) error {
	steps := map[wire.FlakeStep]bool{}
	for _, st := range fj.Steps {
		steps[st] = true
	}
	var warnings []string
	ref, err := r.flakeSource(ctx, fj, steps[wire.FlakeStepFetchFlake], &warnings)
	if err != nil {
		return err
	}
	if !steps[wire.FlakeStepEvaluateFlake] && !steps[wire.FlakeStepEvaluateDerivations] {
		return nil
	}
	return r.evaluate(ctx, ref, fj.Wildcards, warnings)
}

// flakeSource makes the flake available locally and returns the reference to evaluate.
func (r *run) flakeSource(ctx context.Context, fj *wire.FlakeJob, fetch bool, warnings *[]string) (string, error) {
	if fetch {
		if err := r.update(&wire.JobUpdateFetching{}); err != nil {
			return "", err
		}
	}
	switch src := fj.Source.(type) {
	case *wire.FlakeSourceRepository:
		return r.fetchRepository(ctx, src, fj.InputOverrides, fetch, warnings)
	case *wire.FlakeSourceCached:
		if err := r.fetchClosure(ctx, []string{src.StorePath}); err != nil {
			return "", err
		}
		if fetch {
			if err := r.update(&wire.JobUpdateFetchResult{FlakeSource: wire.Some(src.StorePath)}); err != nil {
				return "", err
			}
		}
		ref, err := r.s.w.nix.StoreFlakeRef(ctx, src.StorePath)
		if err != nil {
			return "", failed(wire.BuildFailureKindTransient, err)
		}
		return ref, nil
	}
	return "", failed(wire.BuildFailureKindPermanent, fmt.Errorf("unknown flake source %T", fj.Source))
}

func (r *run) fetchRepository(ctx context.Context, src *wire.FlakeSourceRepository, overrides []wire.FlakeInputOverride, fetch bool, warnings *[]string) (string, error) {
	end := r.phase(wire.JobPhaseFetch)
	ref, err := r.clone(ctx, src)
	if err != nil {
		return "", err
	}
	for _, o := range overrides {
		r.warn(warnings, "fetch", "input override of "+o.InputName+" not applied: this worker does not support input overrides")
	}
	arch, err := r.s.w.nix.ArchiveFlake(ctx, ref)
	if err != nil {
		return "", failed(wire.BuildFailureKindTransient, err)
	}
	end(1+len(arch.Inputs), 0)
	for _, w := range arch.Warnings {
		r.warn(warnings, "fetch", w)
	}
	paths := append([]string{arch.Source}, arch.Inputs...)
	if err := r.hold(paths); err != nil {
		return "", err
	}
	if !fetch {
		return ref, nil
	}
	endPush := r.phase(wire.JobPhasePushInputs)
	n, sent, err := r.push(ctx, paths)
	endPush(n, sent)
	if err != nil {
		return "", err
	}
	if err := r.update(&wire.JobUpdateFetchResult{FlakeSource: wire.Some(arch.Source)}); err != nil {
		return "", err
	}
	return ref, nil
}

// clone checks the repository out with the job's credential, if the server sent one
// (gradient-server §13.4). A repository that refuses access fails the job for good, with
// what the operator should do: retrying cannot help.
func (r *run) clone(ctx context.Context, src *wire.FlakeSourceRepository) (string, error) {
	var cred repocred.Credential
	if len(r.credential) > 0 {
		var err error
		if cred, err = repocred.FromWire(src.URL, r.credential); err != nil {
			return "", failed(wire.BuildFailureKindPermanent, fmt.Errorf("fetch: the server's credential: %w", err))
		}
		defer cred.Wipe()
	}
	ref, err := r.s.w.nix.Clone(ctx, nixexec.CloneRequest{URL: src.URL, Commit: src.Commit,
		Dir: filepath.Join(r.dir, "checkout"), Credential: cred})
	var ce *nixexec.CommandError
	if errors.As(err, &ce) && repocred.Refused(ce.Stderr) {
		return "", failed(wire.BuildFailureKindPermanent,
			fmt.Errorf("fetch: access refused: %s: %w", repocred.Hint(src.URL, cred.Kind), err))
	}
	if err != nil {
		return "", failed(wire.BuildFailureKindTransient, err)
	}
	return ref, nil
}

// warn sends an EvalMessage warning and keeps it for the final EvalResult.
func (r *run) warn(warnings *[]string, source, msg string) {
	*warnings = append(*warnings, msg)
	_ = r.s.send(&wire.EvalMessage{JobID: r.j.id, Level: wire.EvalMessageLevelWarning, Source: source, Message: msg})
}

// evaluate is steps 4–7 of gradient-server §6.2.
func (r *run) evaluate(ctx context.Context, ref string, wildcards []string, warnings []string) error {
	if err := r.update(&wire.JobUpdateEvaluatingFlake{}); err != nil {
		return err
	}
	end := r.phase(wire.JobPhaseEvalFlake)
	ev, err := r.s.w.nix.EvaluateWildcards(ctx, ref, wildcards)
	end(len(ev.EntryPoints), 0)
	if errors.Is(err, nixexec.ErrBadWildcard) {
		ev.Errors = []nixexec.AttrError{{Attr: "wildcards", Message: err.Error()}}
	} else if err != nil {
		return failed(wire.BuildFailureKindTransient, fmt.Errorf("evaluating %s: %w", ref, err))
	}
	var errs []string
	for _, e := range ev.Errors {
		errs = append(errs, e.Message)
		_ = r.s.send(&wire.EvalMessage{JobID: r.j.id, Level: wire.EvalMessageLevelError, Source: "nix-eval:" + e.Attr, Message: e.Message})
	}
	if err := r.update(&wire.JobUpdateEvaluatingDerivations{}); err != nil {
		return err
	}
	end = r.phase(wire.JobPhaseEvalDerivations)
	var roots []string
	for _, e := range ev.EntryPoints {
		roots = append(roots, e.DrvPath)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	drvs, err := r.s.w.nix.ShowDerivations(ctx, roots, true)
	if err != nil {
		return failed(wire.BuildFailureKindTransient, fmt.Errorf("reading derivations: %w", err))
	}
	if err := r.hold(roots); err != nil {
		return err
	}
	found := discover(ev.EntryPoints, drvs, func(wave []string) map[string]bool { return r.knownDerivations(ctx, wave) })
	end(len(found), 0)
	return r.reportDerivations(ctx, found, warnings, errs)
}

// report uploads and reports the derivations in batches of 50, the last batch carrying the
// warnings and errors (an evaluation without derivations still sends one EvalResult).
func (r *run) reportDerivations(ctx context.Context, found []wire.DiscoveredDerivation, warnings, errs []string) error {
	uploaded := map[string]bool{}
	batches := slices.Collect(slices.Chunk(found, evalBatchSize))
	if len(batches) == 0 {
		batches = [][]wire.DiscoveredDerivation{nil}
	}
	for i, batch := range batches {
		if err := r.pushBatch(ctx, batch, uploaded); err != nil {
			return err
		}
		res := &wire.JobUpdateEvalResult{Derivations: batch}
		if i == len(batches)-1 {
			res.Warnings, res.Errors = warnings, errs
		}
		if err := r.update(res); err != nil {
			return err
		}
	}
	return nil
}

// pushBatch uploads a batch's input sources (with their closure) and .drv files, each path
// at most once per evaluation.
func (r *run) pushBatch(ctx context.Context, batch []wire.DiscoveredDerivation, uploaded map[string]bool) error {
	defer r.phase(wire.JobPhaseDrvClosurePush)(len(batch), 0)
	var srcs, paths []string
	for _, d := range batch {
		srcs = append(srcs, d.InputSources...)
	}
	slices.Sort(srcs)
	srcs, err := r.s.w.nix.Requisites(ctx, slices.Compact(srcs))
	if err != nil {
		return failed(wire.BuildFailureKindTransient, fmt.Errorf("input sources: %w", err))
	}
	for _, d := range batch {
		srcs = append(srcs, d.DrvPath)
	}
	for _, p := range srcs {
		if !uploaded[p] {
			uploaded[p] = true
			paths = append(paths, p)
		}
	}
	_, _, err = r.push(ctx, paths)
	return err
}
