package worker

import (
	"slices"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
)

func drv(path string, deps ...string) nixexec.Derivation {
	d := nixexec.Derivation{DrvPath: path, Outputs: map[string]string{"out": path + "-out"}, InputDrvs: map[string][]string{}}
	for _, dep := range deps {
		d.InputDrvs[dep] = []string{"out"}
	}
	return d
}

func graph(ds ...nixexec.Derivation) map[string]nixexec.Derivation {
	m := map[string]nixexec.Derivation{}
	for _, d := range ds {
		m[d.DrvPath] = d
	}
	return m
}

// gradient-server §6.2 step 5 and 6: dependencies come before their dependents, and a
// known derivation's subtree is skipped, except that a known entry point is still
// reported.
func TestDiscoverOrdersDependenciesFirstAndPrunesKnownSubtrees(t *testing.T) {
	g := graph(drv("c", "a", "b"), drv("a", "x"), drv("b", "x"), drv("x"), drv("e", "k"), drv("k", "y"), drv("y"))
	entries := []nixexec.EntryPoint{{Attr: "packages.c", DrvPath: "c"}, {Attr: "checks.c", DrvPath: "c"}, {Attr: "packages.e", DrvPath: "e"}}
	var waves [][]string
	found := discover(entries, g, func(wave []string) map[string]bool {
		waves = append(waves, slices.Clone(wave))
		return map[string]bool{"k": true}
	})
	var order []string
	pos := map[string]int{}
	for i, d := range found {
		order = append(order, d.Attr+"="+d.DrvPath)
		if _, ok := pos[d.DrvPath]; !ok {
			pos[d.DrvPath] = i
		}
	}
	want := []string{"=x", "=a", "=b", "packages.c=c", "checks.c=c", "packages.e=e"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for _, d := range found {
		for _, dep := range d.Dependencies {
			if p, ok := pos[dep]; ok && p > pos[d.DrvPath] {
				t.Fatalf("%s reported before its dependency %s", d.DrvPath, dep)
			}
		}
	}
	if len(waves) == 0 || !slices.Equal(waves[0], []string{"c", "e"}) {
		t.Fatalf("first wave %v", waves)
	}
	for _, w := range waves {
		if slices.Contains(w, "y") {
			t.Fatalf("the known derivation k was descended into: waves %v", waves)
		}
	}
}

func TestDiscoverReportsAKnownEntryPoint(t *testing.T) {
	g := graph(drv("c", "a"), drv("a"))
	found := discover([]nixexec.EntryPoint{{Attr: "p.c", DrvPath: "c"}}, g, func([]string) map[string]bool { return map[string]bool{"c": true} })
	if len(found) != 1 || found[0].DrvPath != "c" || found[0].Attr != "p.c" {
		t.Fatalf("found %+v", found)
	}
}
