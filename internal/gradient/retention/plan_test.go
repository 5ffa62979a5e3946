package retention

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func day(n int) time.Time { return t0.Add(time.Duration(n) * 24 * time.Hour) }

// h makes a 32-character store hash from a short name.
func h(name string) string { return name + strings.Repeat("0", 32-len(name)) }

func path(name string, stored time.Time, refs ...string) Path {
	p := Path{Hash: h(name), Size: int64(len(name)), Stored: stored}
	for _, r := range refs {
		p.Refs = append(p.Refs, h(r))
	}
	return p
}

func eval(id, project, branch string, created time.Time, settled bool, paths ...string) Evaluation {
	e := Evaluation{ID: id, Project: project, Branch: branch, Created: created, Settled: settled}
	for _, p := range paths {
		e.Paths = append(e.Paths, h(p))
	}
	return e
}

func deleted(p Plan) []string {
	var out []string
	for _, d := range p.Delete {
		out = append(out, strings.TrimRight(d.Hash, "0"))
	}
	return out
}

func TestPlan(t *testing.T) {
	now := day(30)
	old := day(1)
	lib := path("lib", old)
	app1 := path("appone", old, "lib")
	app2 := path("apptwo", old, "lib", "dep")
	dep := path("dep", old)
	stray := path("stray", old)
	tests := []struct {
		name   string
		pol    Policy
		evals  []Evaluation
		paths  []Path
		delete []string
	}{
		{"newest evaluation keeps its closure; the older one's own paths go",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "p", "main", day(1), true, "appone"), eval("e2", "p", "main", day(2), true, "apptwo")},
			[]Path{lib, app1, app2, dep, stray}, []string{"appone", "stray"}},
		{"two kept: both closures stay",
			Policy{KeepEvaluations: 2},
			[]Evaluation{eval("e1", "p", "main", day(1), true, "appone"), eval("e2", "p", "main", day(2), true, "apptwo")},
			[]Path{lib, app1, app2, dep, stray}, []string{"stray"}},
		{"branches count apart",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "p", "dev", day(1), true, "appone"), eval("e2", "p", "main", day(2), true, "apptwo")},
			[]Path{lib, app1, app2, dep}, nil},
		{"projects count apart",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "q", "main", day(1), true, "appone"), eval("e2", "p", "main", day(2), true, "apptwo")},
			[]Path{lib, app1, app2, dep}, nil},
		{"an unsettled older evaluation is kept",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "p", "main", day(1), false, "appone"), eval("e2", "p", "main", day(2), true, "apptwo")},
			[]Path{lib, app1, app2, dep}, nil},
		{"recently fetched paths are roots with their closure",
			Policy{KeepEvaluations: 1, KeepFetched: 7 * 24 * time.Hour},
			nil,
			[]Path{lib, {Hash: h("appone"), Refs: []string{h("lib")}, Stored: old, Fetched: day(25)}, stray}, []string{"stray"}},
		{"recently stored paths are roots",
			Policy{KeepEvaluations: 1, KeepFetched: 7 * 24 * time.Hour},
			nil,
			[]Path{path("fresh", day(29)), stray}, []string{"stray"}},
		{"a root path not cached and a dangling reference change nothing",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "p", "main", day(1), true, "missing", "appone")},
			[]Path{path("appone", old, "gone"), stray}, []string{"stray"}},
		{"cycles are walked once",
			Policy{KeepEvaluations: 1},
			[]Evaluation{eval("e1", "p", "main", day(1), true, "x")},
			[]Path{path("x", old, "y"), path("y", old, "x"), stray}, []string{"stray"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Make(now, tc.pol, tc.evals, tc.paths)
			if got := deleted(p); !slices.Equal(got, tc.delete) {
				t.Fatalf("deleted %v, want %v", got, tc.delete)
			}
			if p.KeptPaths+len(p.Delete) != len(tc.paths) {
				t.Fatalf("%d kept + %d deleted of %d paths", p.KeptPaths, len(p.Delete), len(tc.paths))
			}
		})
	}
}

func TestDeletionsSayWhyAndSince(t *testing.T) {
	pol := Policy{KeepEvaluations: 1, KeepFetched: 24 * time.Hour}
	evals := []Evaluation{
		eval("e1", "p", "main", day(1), true, "appone"),
		eval("e2", "p", "main", day(3), true, "apptwo"),
	}
	p := Make(day(10), pol, evals, []Path{path("appone", day(1)), path("apptwo", day(3)), path("stray", day(2))})
	if len(p.Delete) != 2 {
		t.Fatalf("plan %+v", p)
	}
	one, stray := p.Delete[0], p.Delete[1]
	if !strings.Contains(one.Reason, "evaluation e1 (project p, branch main)") || !one.Since.Equal(day(3)) {
		t.Errorf("appone: %+v; want evaluation e1 and since day 3 (when e2 superseded it)", one)
	}
	if !strings.Contains(stray.Reason, "in no evaluation") || !stray.Since.Equal(day(3)) {
		t.Errorf("stray: %+v; want no evaluation and since day 3 (stored day 2 + 1 day)", stray)
	}
	if p.DeleteBytes != one.Size+stray.Size || !slices.Equal(p.KeptEvaluations, []string{"e2"}) {
		t.Errorf("plan %+v", p)
	}
}

func TestKept(t *testing.T) {
	evals := []Evaluation{
		eval("e1", "p", "", day(1), true), eval("e2", "p", "", day(2), true), eval("e3", "p", "", day(3), true),
		eval("e0", "p", "", day(0), false), eval("f1", "q", "", day(1), true),
	}
	got := Kept(Policy{KeepEvaluations: 2}, evals)
	for id, want := range map[string]bool{"e3": true, "e2": true, "e1": false, "e0": true, "f1": true} {
		if got[id] != want {
			t.Errorf("kept[%s] = %v, want %v", id, got[id], want)
		}
	}
	if zero := Kept(Policy{}, evals); !zero["e3"] || zero["e2"] {
		t.Errorf("KeepEvaluations 0 keeps %v; want the newest only", zero)
	}
}
