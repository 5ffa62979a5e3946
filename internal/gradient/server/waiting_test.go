package server

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/health"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestWaitReason(t *testing.T) {
	all := wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}
	evalOnly := wire.GradientCapabilities{Fetch: true, Eval: true}
	builder := func(id string, systems ...string) sessionView {
		return sessionView{id: id, projects: []string{"p"}, negotiated: all, systems: systems}
	}
	noBuild := sessionView{id: "broken", projects: []string{"p"}, negotiated: evalOnly,
		unavailable: health.Unavailable{health.Build: "nix cannot build: no build users"}}
	for _, tc := range []struct {
		name     string
		sessions []sessionView
		kind     store.JobKind
		system   string
		want     string
	}{
		{"nobody", nil, store.JobEval, "", "no worker is connected"},
		{"another project's worker", []sessionView{{id: "w", projects: []string{"q"}, negotiated: all}}, store.JobEval, "",
			"no connected worker is registered for this project"},
		{"no eval offered", []sessionView{{id: "w", projects: []string{"p"}, negotiated: wire.GradientCapabilities{Build: true}}},
			store.JobEval, "", "no connected worker offers eval"},
		{"fetch without eval is not enough", []sessionView{{id: "w", projects: []string{"p"}, negotiated: wire.GradientCapabilities{Fetch: true}}},
			store.JobEval, "", "no connected worker offers eval"},
		{"wrong system", []sessionView{builder("w", "aarch64-linux")}, store.JobBuild, "x86_64-linux",
			"no connected worker offers build for x86_64-linux"},
		{"no capabilities sent yet", []sessionView{builder("w")}, store.JobBuild, "x86_64-linux",
			"no connected worker offers build for x86_64-linux"},
		{"the only builder withholds build", []sessionView{noBuild}, store.JobBuild, "x86_64-linux",
			"no connected worker offers build for x86_64-linux (broken is quarantined: nix cannot build: no build users)"},
		{"withholding build does not block eval", []sessionView{noBuild}, store.JobEval, "",
			"a free slot on 1 worker(s) that offer eval"},
		{"quarantined by the server", []sessionView{func() sessionView {
			s := builder("q", "x86_64-linux")
			s.quarantined = "worker set-up: disk full"
			return s
		}()},
			store.JobBuild, "x86_64-linux", "the workers that offer build for x86_64-linux are draining or quarantined (q is quarantined: worker set-up: disk full)"},
		{"draining", []sessionView{func() sessionView { s := builder("d", "x86_64-linux"); s.draining = true; return s }()},
			store.JobBuild, "x86_64-linux", "the workers that offer build for x86_64-linux are draining or quarantined"},
		{"busy", []sessionView{builder("a", "x86_64-linux"), builder("b", "x86_64-linux"), noBuild}, store.JobBuild, "x86_64-linux",
			"a free slot on 2 worker(s) that offer build for x86_64-linux"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitReason(tc.sessions, "p", tc.kind, tc.system); got != tc.want {
				t.Errorf("waitReason = %q\n                want %q", got, tc.want)
			}
		})
	}
}

func TestWaitReasonNamesAtMostThreeQuarantined(t *testing.T) {
	var ss []sessionView
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ss = append(ss, sessionView{id: id, projects: []string{"p"}, unavailable: health.Unavailable{health.Build: "r"}})
	}
	got := waitReason(ss, "p", store.JobBuild, "x86_64-linux")
	if n := strings.Count(got, "is quarantined"); n != maxQuarantinedNamed {
		t.Errorf("%q names %d workers, want %d", got, n, maxQuarantinedNamed)
	}
}
