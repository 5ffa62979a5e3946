package worker

import (
	"maps"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// knownWave is how many derivations one QueryKnownDerivations wave covers
// (gradient-server §6.2 step 5).
const knownWave = 256

// discover walks the derivation closure of the entry points breadth-first in waves of up to
// 256, asking known about each wave first: a derivation the server already holds with its
// complete closure is skipped with its subtree (an entry point is still reported, for its
// attribute, but not descended into). It returns the derivations to report with every
// dependency before its dependents, so a batch never names a derivation the server has not
// seen yet; a derivation selected by several attributes is reported once per attribute.
func discover(entries []nixexec.EntryPoint, drvs map[string]nixexec.Derivation, known func(wave []string) map[string]bool) []wire.DiscoveredDerivation {
	attrs := map[string][]string{}
	var queue []string
	for _, e := range entries {
		if len(attrs[e.DrvPath]) == 0 {
			queue = append(queue, e.DrvPath)
		}
		attrs[e.DrvPath] = append(attrs[e.DrvPath], e.Attr)
	}
	included := walkWaves(queue, attrs, drvs, known)
	var out []wire.DiscoveredDerivation
	for _, d := range dependenciesFirst(included, drvs) {
		names := attrs[d]
		if len(names) == 0 {
			names = []string{""}
		}
		for _, a := range names {
			out = append(out, discovered(a, drvs[d]))
		}
	}
	return out
}

// walkWaves is the breadth-first walk of discover, from the entry derivations in queue.
func walkWaves(queue []string, attrs map[string][]string, drvs map[string]nixexec.Derivation, known func([]string) map[string]bool) map[string]bool {
	seen := map[string]bool{}
	for _, d := range queue {
		seen[d] = true
	}
	included := map[string]bool{}
	for len(queue) > 0 {
		wave := queue[:min(knownWave, len(queue))]
		queue = queue[len(wave):]
		k := known(wave)
		for _, d := range wave {
			drv, ok := drvs[d]
			if !ok || (k[d] && len(attrs[d]) == 0) {
				continue
			}
			included[d] = true
			if k[d] {
				continue
			}
			for _, dep := range drv.Dependencies() {
				if !seen[dep] {
					seen[dep] = true
					queue = append(queue, dep)
				}
			}
		}
	}
	return included
}

// dependenciesFirst orders the included derivations so that each follows its included
// dependencies; ties in path order, for a stable result.
func dependenciesFirst(included map[string]bool, drvs map[string]nixexec.Derivation) []string {
	keys := slices.Sorted(maps.Keys(included))
	done := map[string]bool{}
	var out []string
	var visit func(string)
	visit = func(d string) {
		if done[d] {
			return
		}
		done[d] = true // a .drv closure is acyclic; marking first also guards bad input
		for _, dep := range drvs[d].Dependencies() {
			if included[dep] {
				visit(dep)
			}
		}
		out = append(out, d)
	}
	for _, d := range keys {
		visit(d)
	}
	return out
}

func discovered(attr string, d nixexec.Derivation) wire.DiscoveredDerivation {
	dd := wire.DiscoveredDerivation{
		Attr: attr, DrvPath: d.DrvPath, Dependencies: d.Dependencies(), InputSources: d.InputSrcs,
		Architecture: d.System, RequiredFeatures: d.RequiredFeatures,
		PreferLocalBuild: d.PreferLocalBuild, IsFixedOutput: d.IsFixedOutput, AllowSubstitutes: d.AllowSubstitutes,
	}
	for _, name := range d.OutputNames() {
		dd.Outputs = append(dd.Outputs, wire.DerivationOutput{Name: name, Path: d.Outputs[name]})
	}
	if d.TimeoutSecs > 0 {
		dd.TimeoutSecs = wire.Some(d.TimeoutSecs)
	}
	if d.MaxSilentSecs > 0 {
		dd.MaxSilentSecs = wire.Some(d.MaxSilentSecs)
	}
	if d.Pname != "" {
		dd.Pname = wire.Some(d.Pname)
	}
	return dd
}
