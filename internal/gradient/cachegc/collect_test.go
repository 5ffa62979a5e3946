package cachegc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/retention"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

var now = time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)

// graphStore is a store.Retention over a fixed graph that records what it was asked to do.
type graphStore struct {
	g                 store.RetentionGraph
	deleted           []string
	pruneBefore       time.Time
	pruneKeep         []string
	prunedEvaluations bool
}

func (s *graphStore) RetentionGraph(context.Context) (store.RetentionGraph, error) { return s.g, nil }

func (s *graphStore) DeleteCachedPaths(_ context.Context, hashes []string) ([]string, error) {
	var gone []string
	s.g.Paths = slices.DeleteFunc(s.g.Paths, func(p store.CachedPath) bool {
		if slices.Contains(hashes, p.StoreHash) {
			gone = append(gone, p.StoreHash)
			return true
		}
		return false
	})
	s.deleted = append(s.deleted, gone...)
	return gone, nil
}

func (s *graphStore) PruneEvaluations(_ context.Context, before time.Time, keep []string) (int, error) {
	s.prunedEvaluations = true
	return 0, nil
}

func (s *graphStore) PruneBuildLogs(_ context.Context, before time.Time, keep []string) (int, error) {
	s.pruneBefore, s.pruneKeep = before, keep
	return 2, nil
}

// sp makes a store path whose 32-character hash starts with the name.
func sp(name string) string {
	return "/nix/store/" + name + strings.Repeat("0", 32-len(name)) + "-" + name
}

func hashOf(name string) string { h, _ := store.StoreHash(sp(name)); return h }

// fixture stores an object for every name and a graph: evaluation old (app1) and new
// (app2) of one project and branch, both needing lib; spill belongs to no evaluation.
func fixture(t *testing.T) (*graphStore, *narstore.Store) {
	nars, err := narstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := &graphStore{}
	refs := map[string][]string{"app1": {"lib"}, "app2": {"lib"}}
	for i, name := range []string{"app1", "app2", "lib", "spill"} {
		obj := narstoretest.Make(narstoretest.NAR(2000, uint64(i)))
		st, err := nars.Stage(name)
		if err == nil {
			err = st.Write(0, obj.Compressed)
		}
		if err == nil {
			err = st.Commit(hashOf(name), obj.Expect)
		}
		if err != nil {
			t.Fatal(err)
		}
		p := store.CachedPath{StorePath: sp(name), StoreHash: hashOf(name), FileSize: int64(len(obj.Compressed)),
			FileHash: nixhash.Sum(obj.Compressed).String(), CreatedAt: now.Add(-72 * time.Hour)}
		for _, r := range refs[name] {
			p.References = append(p.References, strings.TrimPrefix(sp(r), "/nix/store/"))
		}
		g.g.Paths = append(g.g.Paths, p)
	}
	g.g.Evaluations = []store.RetainedEvaluation{
		{ID: "old", ProjectID: "p", Branch: "main", Status: store.EvalCompleted, CreatedAt: now.Add(-48 * time.Hour), StorePaths: []string{sp("app1")}},
		{ID: "new", ProjectID: "p", Branch: "main", Status: store.EvalCompleted, CreatedAt: now.Add(-24 * time.Hour), StorePaths: []string{sp("app2")}},
	}
	return g, nars
}

func collector(g *graphStore, nars *narstore.Store, cfg Config) *Collector {
	cfg.Store, cfg.NARs, cfg.Now = g, nars, func() time.Time { return now }
	if cfg.Policy.KeepEvaluations == 0 {
		cfg.Policy = retention.Policy{KeepEvaluations: 1, KeepFetched: time.Hour}
	}
	return New(cfg)
}

func stored(t *testing.T, nars *narstore.Store, name string) bool {
	ok, _, err := nars.Has(hashOf(name))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestADryRunListsAndRemovesNothing(t *testing.T) {
	g, nars := fixture(t)
	r, err := collector(g, nars, Config{}).Run(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, d := range r.Deleted {
		listed = append(listed, d.StorePath)
		if d.Size <= 0 || d.Reason == "" || d.Since.IsZero() {
			t.Errorf("deletion without size, reason or since: %+v", d)
		}
	}
	if want := []string{sp("app1"), sp("spill")}; !slices.Equal(listed, want) || !r.DryRun {
		t.Fatalf("dry run listed %v, want %v", listed, want)
	}
	for _, name := range []string{"app1", "app2", "lib", "spill"} {
		if !stored(t, nars, name) {
			t.Errorf("the dry run removed %s", name)
		}
	}
	if len(g.deleted) != 0 || g.prunedEvaluations {
		t.Errorf("the dry run deleted rows %v (pruned %v)", g.deleted, g.prunedEvaluations)
	}
}

func TestARunRemovesRowsAndObjectsOfTheUnreachable(t *testing.T) {
	g, nars := fixture(t)
	r, err := collector(g, nars, Config{KeepLogs: 24 * time.Hour}).Run(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{hashOf("app1"), hashOf("spill")}; !slices.Equal(g.deleted, want) || len(r.Deleted) != 2 {
		t.Fatalf("deleted rows %v (report %+v), want %v", g.deleted, r.Deleted, want)
	}
	for name, want := range map[string]bool{"app1": false, "spill": false, "app2": true, "lib": true} {
		if stored(t, nars, name) != want {
			t.Errorf("object %s stored = %v, want %v", name, !want, want)
		}
	}
	if r.KeptPaths != 2 || r.KeptEvaluations != 1 {
		t.Errorf("report %+v", r)
	}
	if !g.pruneBefore.Equal(now.Add(-24*time.Hour)) || !slices.Equal(g.pruneKeep, []string{"new"}) || !g.prunedEvaluations || r.LogsPruned != 2 {
		t.Errorf("pruned before %v keeping %v (evaluations %v, logs %d)", g.pruneBefore, g.pruneKeep, g.prunedEvaluations, r.LogsPruned)
	}
}

func TestAPathBeingUploadedIsLeftAlone(t *testing.T) {
	g, nars := fixture(t)
	var released []string
	hold := func(h string) (func(), bool) {
		if h == hashOf("spill") {
			return nil, false
		}
		return func() { released = append(released, h) }, true
	}
	r, err := collector(g, nars, Config{Hold: hold}).Run(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Busy != 1 || !stored(t, nars, "spill") || stored(t, nars, "app1") {
		t.Fatalf("report %+v; spill stored %v, app1 stored %v", r, stored(t, nars, "spill"), stored(t, nars, "app1"))
	}
	if !slices.Equal(released, []string{hashOf("app1")}) {
		t.Errorf("released %v, want app1's hold back", released)
	}
}
