package server

import (
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Limits are the build limits sent when a derivation names none (gradient-server §6.3):
// seconds, 0 = no limit (sent as None).
type Limits struct {
	DefaultTimeoutSecs   uint64
	DefaultMaxSilentSecs uint64
}

// DefaultLimits are build.defaultTimeoutSecs and build.defaultMaxSilentSecs.
var DefaultLimits = Limits{DefaultTimeoutSecs: 14400, DefaultMaxSilentSecs: 3600}

// assignJob is the AssignJob for a claimed assignment.
func assignJob(a store.Assignment, l Limits) *wire.AssignJob {
	m := &wire.AssignJob{JobID: a.Job.String(), AssignmentID: a.ID}
	switch {
	case a.Build != nil:
		m.Job = buildJob(a.Build, l)
	case a.Eval != nil:
		m.Job = flakeJob(a.Eval)
	}
	return m
}

func buildJob(b *store.BuildAssignment, l Limits) *wire.BuildJob {
	outputs := make([]wire.DerivationOutput, len(b.Outputs))
	for i, o := range b.Outputs {
		outputs[i] = wire.DerivationOutput{Name: o.Name, Path: o.Path}
	}
	spec := wire.BuildSpec{
		BuildID: b.BuildID, DrvPath: b.DrvPath, Kind: wire.BuildSpecKindBuild, IsFixedOutput: b.IsFixedOutput,
		Outputs:       outputs,
		TimeoutSecs:   limit(b.TimeoutSecs, l.DefaultTimeoutSecs),
		MaxSilentSecs: limit(b.MaxSilentSecs, l.DefaultMaxSilentSecs),
	}
	return &wire.BuildJob{Builds: []wire.BuildSpec{spec},
		Requirement: wire.BuildRequirement{Architecture: b.System, RequiredFeatures: b.RequiredFeatures}}
}

// limit is the derivation's own limit, else the server default; 0 disables (None on the wire).
func limit(own *uint64, fallback uint64) wire.Option[uint64] {
	v := fallback
	if own != nil {
		v = *own
	}
	if v == 0 {
		return wire.None[uint64]()
	}
	return wire.Some(v)
}

// flakeJob fetches and evaluates, or only evaluates a source fetched by an earlier attempt
// (gradient-server §6.2). Evaluations have no timeout.
func flakeJob(e *store.EvalAssignment) *wire.FlakeJob {
	j := &wire.FlakeJob{Wildcards: e.Wildcards, TimeoutSecs: wire.None[uint64]()}
	if e.FlakeSource != "" {
		j.Steps = []wire.FlakeStep{wire.FlakeStepEvaluateFlake, wire.FlakeStepEvaluateDerivations}
		j.Source = &wire.FlakeSourceCached{StorePath: e.FlakeSource}
		return j
	}
	j.Steps = []wire.FlakeStep{wire.FlakeStepFetchFlake, wire.FlakeStepEvaluateFlake, wire.FlakeStepEvaluateDerivations}
	j.Source = &wire.FlakeSourceRepository{URL: e.RepoURL, Commit: e.Commit}
	return j
}

// failureKinds maps the wire's failure kinds onto the store's (the enums share their order,
// but the mapping is spelled out so neither can drift silently).
var failureKinds = map[wire.BuildFailureKind]store.FailureKind{
	wire.BuildFailureKindTransient:             store.FailTransient,
	wire.BuildFailureKindPermanent:             store.FailPermanent,
	wire.BuildFailureKindTimeout:               store.FailTimeout,
	wire.BuildFailureKindSubstituteUnavailable: store.FailSubstituteUnavailable,
	wire.BuildFailureKindInputsUnavailable:     store.FailInputsUnavailable,
	wire.BuildFailureKindCorruptEvalCache:      store.FailCorruptEvalCache,
	wire.BuildFailureKindAborted:               store.FailAborted,
	wire.BuildFailureKindCanceled:              store.FailCanceled,
}

// failure is a JobFailed as the store applies it; an unknown kind is treated as transient.
func failure(m *wire.JobFailed) store.BuildFailure {
	kind, ok := failureKinds[m.Kind]
	if !ok {
		kind = store.FailTransient
	}
	return store.BuildFailure{Kind: kind, Reason: m.Error, MissingPaths: m.MissingPaths}
}

// evalBatch converts an EvalResult into the store's batch.
func evalBatch(assignmentID string, r *wire.JobUpdateEvalResult) store.EvalBatch {
	b := store.EvalBatch{AssignmentID: assignmentID, Warnings: r.Warnings, Errors: r.Errors,
		Derivations: make([]store.Derivation, len(r.Derivations))}
	for i, d := range r.Derivations {
		outs := make([]store.Output, len(d.Outputs))
		for j, o := range d.Outputs {
			outs[j] = store.Output{Name: o.Name, Path: o.Path}
		}
		b.Derivations[i] = store.Derivation{
			DrvPath: d.DrvPath, Attr: d.Attr, System: d.Architecture, RequiredFeatures: d.RequiredFeatures,
			Outputs: outs, Dependencies: d.Dependencies, TimeoutSecs: optPtr(d.TimeoutSecs),
			MaxSilentSecs: optPtr(d.MaxSilentSecs), IsFixedOutput: d.IsFixedOutput,
			PreferLocalBuild: d.PreferLocalBuild, AllowSubstitutes: d.AllowSubstitutes, Pname: d.Pname.Value,
		}
	}
	return b
}

func optPtr(o wire.Option[uint64]) *uint64 {
	if v, ok := o.Get(); ok {
		return &v
	}
	return nil
}
