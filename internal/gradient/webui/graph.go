package webui

import (
	"cmp"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// maxGraphBuilds bounds the dependency graph drawn on an evaluation's page: past it the
// drawing says nothing a reader can follow, and the paged table and filters serve instead.
const maxGraphBuilds = 300

// Graph geometry, in SVG user units.
const (
	nodeW, nodeH = 150, 22
	colGap       = 50
	rowGap       = 6
	margin       = 8
	labelMax     = 22
)

type graphNode struct {
	ID, Name, Label, Status, State string
	X, Y, W, H, TX, TY             int
}

type graphEdge struct{ X1, Y1, X2, Y2 int }

type graphView struct {
	Width, Height int
	Nodes         []graphNode
	Edges         []graphEdge
}

// layoutGraph places builds in columns by dependency depth (a build needing nothing in the
// first column, every build right of all it needs), each column by name, and draws an edge
// from each build to each build it needs. A pure function of its input.
func layoutGraph(builds []store.BuildInfo, edges []store.BuildEdge) graphView {
	depthOf := depths(edges)
	sorted := slices.Clone(builds)
	slices.SortFunc(sorted, func(a, b store.BuildInfo) int { return cmp.Compare(name(a), name(b)) })
	var g graphView
	rows := map[int]int{}
	at := map[string]graphNode{}
	for _, b := range sorted {
		d := depthOf(b.ID)
		n := graphNode{ID: b.ID, Name: name(b), Label: clip(name(b), labelMax), Status: b.Status.String(), State: stateOf(b.Status),
			X: margin + d*(nodeW+colGap), Y: margin + rows[d]*(nodeH+rowGap), W: nodeW, H: nodeH}
		n.TX, n.TY = n.X+6, n.Y+15
		rows[d]++
		at[b.ID] = n
		g.Nodes = append(g.Nodes, n)
		g.Width = max(g.Width, n.X+nodeW+margin)
		g.Height = max(g.Height, n.Y+nodeH+margin)
	}
	for _, e := range edges {
		from, ok1 := at[e.Build]
		to, ok2 := at[e.DependsOn]
		if ok1 && ok2 {
			g.Edges = append(g.Edges, graphEdge{X1: from.X, Y1: from.Y + nodeH/2, X2: to.X + nodeW, Y2: to.Y + nodeH/2})
		}
	}
	return g
}

// depths answers each build's dependency depth: 0 needing nothing, else one more than the
// deepest build it needs.
func depths(edges []store.BuildEdge) func(id string) int {
	deps := map[string][]string{}
	for _, e := range edges {
		deps[e.Build] = append(deps[e.Build], e.DependsOn)
	}
	depth := map[string]int{}
	var depthOf func(id string, seen map[string]bool) int
	depthOf = func(id string, seen map[string]bool) int {
		if d, ok := depth[id]; ok {
			return d
		}
		if seen[id] { // a cycle cannot happen among derivations; guard anyway
			return 0
		}
		seen[id] = true
		d := 0
		for _, dep := range deps[id] {
			d = max(d, depthOf(dep, seen)+1)
		}
		depth[id] = d
		return d
	}
	return func(id string) int { return depthOf(id, map[string]bool{}) }
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
