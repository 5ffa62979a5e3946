package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/postgres"
	"github.com/buildfleet/buildfleet/internal/gradient/store/postgres/pgtest"
	"github.com/buildfleet/buildfleet/internal/gradient/store/storetest"
)

// envURL names a PostgreSQL URL (a role that may create schemas) to test against instead of
// a throwaway server.
const envURL = "GRADIENT_TEST_POSTGRES_URL"

var (
	adminURL string
	seq      atomic.Int64
)

// TestMain starts a throwaway server unless envURL is set. It never skips: a machine
// without PostgreSQL fails the package with the reason.
func TestMain(m *testing.M) {
	adminURL = os.Getenv(envURL)
	var srv *pgtest.Server
	if adminURL == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var err error
		srv, err = pgtest.Start(ctx)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "postgres store tests need PostgreSQL: set %s or install Debian's postgresql package: %v\n", envURL, err)
			os.Exit(1)
		}
		adminURL = srv.URL()
	}
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop postgres: %v\n", err)
		}
	}
	os.Exit(code)
}

// newSchema creates an empty schema for one test and drops it when the test ends.
func newSchema(t testing.TB) string {
	t.Helper()
	url, drop, err := pgtest.NewSchema(context.Background(), adminURL, pgtest.UniqueName("gradient_test", seq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return url
}

func open(t testing.TB, opts ...store.Option) store.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), newSchema(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

// TestConcurrentOpenMigratesOnce: servers starting together on one database apply the
// schema once (the advisory lock), and all of them work.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := newSchema(t)
	type opened struct {
		s   store.Store
		err error
	}
	results := make(chan opened, 4)
	for range 4 {
		go func() {
			s, err := postgres.Open(t.Context(), url)
			results <- opened{s, err}
		}()
	}
	for range 4 {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		defer r.s.Close()
		if _, err := r.s.ListProjects(t.Context()); err != nil {
			t.Error(err)
		}
	}
}

func TestOpenRejectsBadURL(t *testing.T) {
	if _, err := postgres.Open(t.Context(), "postgres://%zz"); err == nil {
		t.Error("Open accepted an unparseable URL")
	}
}

// BenchmarkClaimWith1000Queued is the job-assignment latency on PostgreSQL.
func BenchmarkClaimWith1000Queued(b *testing.B) { storetest.BenchmarkClaim(b, open, 1000) }
