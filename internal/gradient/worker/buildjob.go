package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// build runs a build job (gradient-server §6.3): Building, prefetch, build with the job's
// limits and the log streamed, BuildOutput, upload of the outputs and their closure.
func (r *run) build(ctx context.Context, bj *wire.BuildJob) error {
	if len(bj.Builds) != 1 {
		return failed(wire.BuildFailureKindPermanent, fmt.Errorf("a build job carries exactly one BuildSpec, got %d", len(bj.Builds)))
	}
	spec := bj.Builds[0]
	if ctx.Err() != nil { // an abort that came before the job started
		return context.Cause(ctx)
	}
	if err := r.update(&wire.JobUpdateBuilding{BuildID: spec.BuildID}); err != nil {
		return err
	}
	outputs, substituted, metrics, err := r.realise(ctx, spec)
	if err != nil {
		return err
	}
	infos, err := r.s.w.nix.PathInfo(ctx, outputs)
	if err != nil {
		return failed(wire.BuildFailureKindTransient, fmt.Errorf("reading the outputs: %w", err))
	}
	names := r.outputNames(ctx, spec)
	update := &wire.JobUpdateBuildOutput{BuildID: spec.BuildID, Metrics: metrics, Substituted: substituted}
	for _, in := range infos {
		update.Outputs = append(update.Outputs, buildOutput(names[in.Path], in))
	}
	if err := r.update(update); err != nil {
		return err
	}
	if err := r.update(&wire.JobUpdateStage{Stage: wire.BuildStageUpload}); err != nil {
		return err
	}
	return r.uploadOutputs(ctx, outputs)
}

// uploadOutputs uploads the outputs and whatever of their closure the cache lacks.
func (r *run) uploadOutputs(ctx context.Context, outputs []string) error {
	closure, err := r.s.w.nix.Requisites(ctx, outputs)
	if err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	end := r.phase(wire.JobPhaseNarPush)
	n, sent, err := r.push(ctx, closure)
	end(n, sent)
	return err
}

// realise makes the outputs valid: already valid (reported as substituted), or prefetched
// inputs and a build.
func (r *run) realise(ctx context.Context, spec wire.BuildSpec) (outputs []string, substituted bool, metrics wire.Option[wire.BuildMetrics], err error) {
	for _, o := range spec.Outputs {
		outputs = append(outputs, o.Path)
	}
	if len(outputs) > 0 {
		invalid, err := r.s.w.nix.Invalid(ctx, outputs)
		if err != nil {
			return nil, false, metrics, failed(wire.BuildFailureKindTransient, err)
		}
		if len(invalid) == 0 {
			return outputs, true, metrics, r.hold(outputs)
		}
		if done, err := r.trySubstitute(ctx, spec, outputs); done || err != nil {
			return outputs, done, metrics, err
		}
	}
	if err := r.update(&wire.JobUpdateStage{Stage: wire.BuildStagePrefetch}); err != nil {
		return nil, false, metrics, err
	}
	end := r.phase(wire.JobPhasePrefetch)
	err = r.prefetch(ctx, spec.DrvPath)
	end(0, 0)
	if err != nil {
		return nil, false, metrics, err
	}
	if err := r.update(&wire.JobUpdateStage{Stage: wire.BuildStageBuild}); err != nil {
		return nil, false, metrics, err
	}
	end = r.phase(wire.JobPhaseBuild)
	res, err := r.s.w.nix.Realise(ctx, spec.DrvPath, nixexec.BuildOptions{
		Timeout: seconds(spec.TimeoutSecs), MaxSilent: seconds(spec.MaxSilentSecs),
		Log: newLogForwarder(r.j.id, r.s.send)})
	end(len(res.Outputs), 0)
	metrics = wire.Some(wire.BuildMetrics{BuildTimeMs: wire.Some(uint64(res.Duration.Milliseconds()))})
	if err != nil {
		return nil, false, metrics, buildFailure(err, metrics)
	}
	return res.Outputs, false, metrics, r.hold(res.Outputs)
}

// trySubstitute substitutes the outputs when the cache or an upstream has them
// (gradient-server §14); done false with no error means build them. A Substitute spec
// that cannot be fails SubstituteUnavailable, so the server has it built.
func (r *run) trySubstitute(ctx context.Context, spec wire.BuildSpec, outputs []string) (done bool, err error) {
	allowed, err := r.substitutable(ctx, spec.DrvPath)
	if err != nil || !allowed {
		if err == nil && spec.Kind == wire.BuildSpecKindSubstitute {
			err = failed(wire.BuildFailureKindSubstituteUnavailable, errors.New("the derivation does not allow substitutes"))
		}
		return false, err
	}
	err = r.substitute(ctx, outputs)
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, context.Cause(ctx)
	case spec.Kind == wire.BuildSpecKindSubstitute:
		return false, failed(wire.BuildFailureKindSubstituteUnavailable, err)
	case !errors.Is(err, errNoSubstitute):
		r.s.log.Warn("worker: substituting failed; building instead", "job", r.j.id, "err", err)
	}
	return false, nil
}

// substitutable reads the derivation (pulling its .drv closure, as the build would) for its
// allowSubstitutes: false marks a derivation cheaper to build than to fetch, and Nix does
// not substitute it either.
func (r *run) substitutable(ctx context.Context, drv string) (bool, error) {
	if err := r.fetchClosure(ctx, []string{drv}); err != nil {
		return false, err
	}
	drvs, err := r.s.w.nix.ShowDerivations(ctx, []string{drv}, false)
	if err != nil {
		return false, failed(wire.BuildFailureKindTransient, err)
	}
	return drvs[drv].AllowSubstitutes, nil
}

// buildFailure maps a nixexec build error to the kind the worker reports
// (gradient-server §6.3).
func buildFailure(err error, metrics wire.Option[wire.BuildMetrics]) error {
	var be *nixexec.BuildError
	if !errors.As(err, &be) {
		return err
	}
	kind := map[nixexec.FailureKind]wire.BuildFailureKind{nixexec.Permanent: wire.BuildFailureKindPermanent,
		nixexec.Timeout: wire.BuildFailureKindTimeout, nixexec.Transient: wire.BuildFailureKindTransient}[be.Kind]
	return &jobError{kind: kind, err: be, metrics: metrics}
}

func seconds(o wire.Option[uint64]) time.Duration {
	if s, ok := o.Get(); ok && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// hold roots paths for the rest of the job.
func (r *run) hold(paths []string) error {
	if err := r.roots.Add(paths...); err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	return nil
}

// prefetch makes the derivation and its inputs valid (gradient-server §6.3 step 3): the .drv
// and its closure, then the outputs of its input derivations and its input sources with
// theirs, pulling from the cache whatever the store lacks.
func (r *run) prefetch(ctx context.Context, drv string) error {
	if err := r.fetchClosure(ctx, []string{drv}); err != nil {
		return err
	}
	self, err := r.s.w.nix.ShowDerivations(ctx, []string{drv}, false)
	if err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	d := self[drv]
	drvs, err := r.s.w.nix.ShowDerivations(ctx, d.Dependencies(), false)
	if err != nil {
		return failed(wire.BuildFailureKindTransient, err)
	}
	required := slices.Clone(d.InputSrcs)
	for dep, outs := range d.InputDrvs {
		for _, name := range outs {
			if p := drvs[dep].Outputs[name]; p != "" {
				required = append(required, p)
			}
		}
	}
	slices.Sort(required)
	return r.fetchClosure(ctx, required)
}

// fetchClosure makes paths and everything they reference valid: the invalid ones are looked
// up in the cache (Pull), their references followed until every path is known, then the NARs
// are pulled and imported in dependency order. A path the cache lacks fails the job as
// InputsUnavailable with the missing paths (gradient-server §6.3). Every path is held by a
// GC root.
func (r *run) fetchClosure(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := r.hold(paths); err != nil {
		return err
	}
	infos, missing, err := r.resolveClosure(ctx, paths)
	if err != nil {
		return err
	}
	if len(infos) == 0 && len(missing) == 0 {
		return nil
	}
	return r.pullAndImport(ctx, infos, missing)
}

// resolveClosure asks the cache (Pull) about the invalid ones among paths and, following the
// references it answers with, about every invalid path they need.
func (r *run) resolveClosure(ctx context.Context, paths []string) (map[string]wire.CachedPath, []string, error) {
	queue, err := r.s.w.nix.Invalid(ctx, paths)
	if err != nil {
		return nil, nil, failed(wire.BuildFailureKindTransient, err)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
	}
	infos := map[string]wire.CachedPath{}
	var missing []string
	for len(queue) > 0 {
		status, err := r.cacheQuery(ctx, queue, wire.QueryModePull, nil)
		if err != nil {
			return nil, nil, err
		}
		var next []string
		for _, p := range queue {
			c, ok := status[p]
			if !ok || !c.Cached {
				missing = append(missing, p)
				continue
			}
			infos[p] = c
			refs, _ := c.References.Get()
			for _, ref := range refs {
				if full := nixexec.FullStorePath(ref); !seen[full] {
					seen[full] = true
					next = append(next, full)
				}
			}
		}
		if queue, err = r.s.w.nix.Invalid(ctx, next); err != nil {
			return nil, nil, failed(wire.BuildFailureKindTransient, err)
		}
	}
	return infos, missing, nil
}

func (r *run) pullAndImport(ctx context.Context, infos map[string]wire.CachedPath, missing []string) error {
	if len(missing) == 0 {
		end := r.phase(wire.JobPhaseNarFetch)
		files, unavailable, err := r.pull(ctx, infos)
		pulled := pulledBytes(infos, files)
		end(len(files), pulled)
		if err != nil {
			return err
		}
		missing = unavailable
		if len(missing) == 0 {
			end := r.phase(wire.JobPhaseNarImport)
			err := r.importPulled(ctx, infos, files)
			end(len(files), 0)
			if err != nil {
				return err
			}
			r.s.log.Info("worker: inputs pulled from the cache and imported", "job", r.j.id, "paths", len(files), "bytes", pulled)
			return r.hold(slices.Collect(maps.Keys(files)))
		}
	}
	slices.Sort(missing)
	return &jobError{kind: wire.BuildFailureKindInputsUnavailable, missing: missing,
		err: fmt.Errorf("%d input paths are not in the cache", len(missing))}
}

// pulledBytes is the compressed size of the pulled files, as the cache listed them.
func pulledBytes(infos map[string]wire.CachedPath, files map[string]string) uint64 {
	var n uint64
	for p := range files {
		size, _ := infos[p].FileSize.Get()
		n += size
	}
	return n
}

// outputNames maps output paths to output names: the BuildSpec's list, else the .drv's.
func (r *run) outputNames(ctx context.Context, spec wire.BuildSpec) map[string]string {
	names := map[string]string{}
	for _, o := range spec.Outputs {
		names[o.Path] = o.Name
	}
	if len(names) > 0 {
		return names
	}
	if drvs, err := r.s.w.nix.ShowDerivations(ctx, []string{spec.DrvPath}, false); err == nil {
		for name, p := range drvs[spec.DrvPath].Outputs {
			names[p] = name
		}
	}
	return names
}

func buildOutput(name string, in nixexec.PathInfo) wire.BuildOutput {
	o := wire.BuildOutput{Name: name, StorePath: in.Path, Hash: storeHash(in.Path),
		NarSize: wire.Some(int64(in.NarSize)), NarHash: wire.Some(in.NarHash)}
	o.Products = readProducts(in.Path)
	return o
}

// storeHash is the hash part of a store path (its cache key).
func storeHash(p string) string {
	h, _, _ := strings.Cut(filepath.Base(p), "-")
	return h
}

// maxProductsFile bounds the nix-support/hydra-build-products read.
const maxProductsFile = 1 << 20

// readProducts parses <out>/nix-support/hydra-build-products: lines `type subtype path`.
func readProducts(out string) []wire.BuildProduct {
	f, err := os.Open(filepath.Join(out, "nix-support", "hydra-build-products"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var products []wire.BuildProduct
	sc := bufio.NewScanner(io.LimitReader(f, maxProductsFile))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		p := wire.BuildProduct{FileType: fields[0], Subtype: fields[1], Path: fields[2], Name: filepath.Base(fields[2])}
		if st, err := os.Stat(fields[2]); err == nil && st.Mode().IsRegular() {
			p.Size = wire.Some(uint64(st.Size()))
		}
		products = append(products, p)
	}
	return products
}
