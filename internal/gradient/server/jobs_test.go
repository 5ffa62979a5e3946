package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func u64(v uint64) *uint64 { return &v }

func TestBuildSpecLimits(t *testing.T) {
	defaults := Limits{DefaultTimeoutSecs: 14400, DefaultMaxSilentSecs: 3600}
	cases := []struct {
		name             string
		own, ownSilent   *uint64
		limits           Limits
		timeout, silence wire.Option[uint64]
	}{
		{"server defaults", nil, nil, defaults, wire.Some[uint64](14400), wire.Some[uint64](3600)},
		{"the derivation's own", u64(2), u64(5), defaults, wire.Some[uint64](2), wire.Some[uint64](5)},
		{"own 0 disables", u64(0), u64(0), defaults, wire.None[uint64](), wire.None[uint64]()},
		{"configured 0 disables", nil, nil, Limits{}, wire.None[uint64](), wire.None[uint64]()},
		{"own wins over a disabled default", u64(7), nil, Limits{}, wire.Some[uint64](7), wire.None[uint64]()},
	}
	for _, c := range cases {
		a := store.Assignment{ID: "as-1", Job: store.BuildJob("b-1"), Build: &store.BuildAssignment{
			BuildID: "b-1", DrvPath: "/nix/store/x-a.drv", System: "x86_64-linux", RequiredFeatures: []string{"kvm"},
			Outputs: []store.Output{{Name: "out", Path: "/nix/store/y-a"}}, TimeoutSecs: c.own, MaxSilentSecs: c.ownSilent}}
		m := assignJob(a, c.limits)
		job, ok := m.Job.(*wire.BuildJob)
		if !ok || m.JobID != "build:b-1" || m.AssignmentID != "as-1" || len(job.Builds) != 1 {
			t.Fatalf("%s: %+v", c.name, m)
		}
		spec := job.Builds[0]
		if spec.TimeoutSecs != c.timeout || spec.MaxSilentSecs != c.silence {
			t.Errorf("%s: timeout %v silence %v", c.name, spec.TimeoutSecs, spec.MaxSilentSecs)
		}
		want := wire.BuildRequirement{Architecture: "x86_64-linux", RequiredFeatures: []string{"kvm"}}
		if !cmp.Equal(job.Requirement, want) || spec.Outputs[0].Path != "/nix/store/y-a" || spec.Kind != wire.BuildSpecKindBuild {
			t.Errorf("%s: %+v", c.name, job)
		}
	}
}

func TestFlakeJobFetchesUnlessAnEarlierAttemptDid(t *testing.T) {
	e := &store.EvalAssignment{EvaluationID: "e", RepoURL: "file:///r", Commit: "abc", Wildcards: []string{"packages.*"}}
	j := assignJob(store.Assignment{ID: "a", Job: store.EvalJob("e"), Eval: e}, DefaultLimits).Job.(*wire.FlakeJob)
	if len(j.Steps) != 3 || j.Steps[0] != wire.FlakeStepFetchFlake || j.TimeoutSecs.Valid {
		t.Fatalf("fresh evaluation: %+v", j)
	}
	if src, ok := j.Source.(*wire.FlakeSourceRepository); !ok || src.URL != "file:///r" || src.Commit != "abc" {
		t.Fatalf("source %+v", j.Source)
	}
	e.FlakeSource = "/nix/store/s-source"
	j = assignJob(store.Assignment{ID: "a", Job: store.EvalJob("e"), Eval: e}, DefaultLimits).Job.(*wire.FlakeJob)
	if len(j.Steps) != 2 || j.Steps[0] != wire.FlakeStepEvaluateFlake {
		t.Fatalf("fetched evaluation: %+v", j.Steps)
	}
	if src, ok := j.Source.(*wire.FlakeSourceCached); !ok || src.StorePath != "/nix/store/s-source" {
		t.Fatalf("source %+v", j.Source)
	}
}

// TestEveryWireFailureKindMapsToItsStoreKind guards the two enums against drifting apart.
func TestEveryWireFailureKindMapsToItsStoreKind(t *testing.T) {
	names := map[wire.BuildFailureKind]string{}
	for k := wire.BuildFailureKind(0); k <= wire.BuildFailureKindCanceled; k++ {
		names[k] = k.String()
	}
	for k, name := range names {
		got := failure(&wire.JobFailed{Kind: k, Error: "e", MissingPaths: []string{"/p"}})
		if got.Kind.String() != name || got.Reason != "e" || len(got.MissingPaths) != 1 {
			t.Errorf("%s -> %s", name, got.Kind)
		}
	}
}

func TestEvalBatchCarriesEveryField(t *testing.T) {
	r := &wire.JobUpdateEvalResult{Warnings: []string{"w"}, Errors: []string{"e"}, Derivations: []wire.DiscoveredDerivation{{
		Attr: "packages.x.a", DrvPath: "/nix/store/d-a.drv", Outputs: []wire.DerivationOutput{{Name: "out", Path: "/nix/store/o-a"}},
		Dependencies: []string{"/nix/store/d-b.drv"}, Architecture: "x86_64-linux", RequiredFeatures: []string{"big"},
		TimeoutSecs: wire.Some[uint64](2), PreferLocalBuild: true, IsFixedOutput: true, AllowSubstitutes: true,
		Pname: wire.Some("a")}}}
	b := evalBatch("as", r)
	want := store.EvalBatch{AssignmentID: "as", Warnings: []string{"w"}, Errors: []string{"e"}, Derivations: []store.Derivation{{
		DrvPath: "/nix/store/d-a.drv", Attr: "packages.x.a", System: "x86_64-linux", RequiredFeatures: []string{"big"},
		Outputs: []store.Output{{Name: "out", Path: "/nix/store/o-a"}}, Dependencies: []string{"/nix/store/d-b.drv"},
		TimeoutSecs: u64(2), IsFixedOutput: true, PreferLocalBuild: true, AllowSubstitutes: true, Pname: "a"}}}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Fatal(diff)
	}
}
