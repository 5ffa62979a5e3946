package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/store/storetest"
)

func open(t testing.TB, opts ...store.Option) store.Store {
	t.Helper()
	s, err := sqlite.Open(sqlite.PathIn(t.TempDir()), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

func TestReopenKeepsStateAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gradient.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(t.Context(), store.NewProject{Name: "p", RepoURL: "u"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got, err := s.GetProject(t.Context(), p.ID); err != nil || got.Name != "p" {
		t.Errorf("after reopen: %+v, %v", got, err)
	}
}

// BenchmarkClaimWith1000Queued is the job-assignment latency on the embedded backend
// (goal: p99 < 50 ms).
func BenchmarkClaimWith1000Queued(b *testing.B) { storetest.BenchmarkClaim(b, open, 1000) }
