package webui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/postgres"
	"github.com/buildfleet/buildfleet/internal/gradient/store/postgres/pgtest"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// benchBuilds is the evaluation size the page must serve in under 200 ms (gradient-server §17).
const benchBuilds = 10000

// BenchmarkEvaluationPage renders the first page and a filtered page of an evaluation of
// 10,000 builds, server-side (handler to bytes, no network), on SQLite and on PostgreSQL, and
// reports the p50 and p99 of a render.
func BenchmarkEvaluationPage(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.FileName))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchPage(b, st)
	})
	b.Run("postgres", func(b *testing.B) {
		url := pgSchema(b)
		st, err := postgres.Open(b.Context(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchPage(b, st)
	})
}

func benchPage(b *testing.B, st store.Store) {
	s := newSiteOn(b, st, false)
	ev := seedEvaluation(b, st, s.project.ID, "bench", benchBuilds)
	builds, _ := st.EvaluationBuilds(b.Context(), ev.ID)
	for _, bu := range builds {
		if bu.Pname == "bench-00000" { // failed: nine dependency-failed builds to filter
			runBuild(b, st, bu.ID, true, "error: boom\n")
		}
	}
	cookie := signInCookie(b, s)
	h := s.srv.Config.Handler
	paths := []string{"/evaluations/" + ev.ID, "/evaluations/" + ev.ID + "?state=dependency-failed", "/evaluations/" + ev.ID + "?page=50"}
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req := httptest.NewRequest(http.MethodGet, paths[i%len(paths)], nil)
		req.AddCookie(cookie)
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		took = append(took, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", req.URL, rec.Code)
		}
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[min(len(took)-1, len(took)*99/100)]
	b.ReportMetric(float64(p50)/1e6, "p50-ms")
	b.ReportMetric(float64(p99)/1e6, "p99-ms")
	if p99 > 200*time.Millisecond {
		b.Errorf("p99 %v over 200 ms for an evaluation of %d builds", p99, benchBuilds)
	}
}

func signInCookie(b *testing.B, s *site) *http.Cookie {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(s.srv.URL+"/signin", map[string][]string{"key": {s.admin}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "gradient_session" {
			return c
		}
	}
	b.Fatal("no session cookie")
	return nil
}

var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
	seq  int
}

// pgSchema is a fresh schema on a throwaway PostgreSQL started once for the package's
// benchmarks (stopped by TestMain).
func pgSchema(b *testing.B) string {
	pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg.srv, pg.err = pgtest.Start(ctx)
	})
	if pg.err != nil {
		b.Fatalf("the PostgreSQL benchmark needs PostgreSQL (scripts/deps.sh test): %v", pg.err)
	}
	pg.seq++
	url, drop, err := pgtest.NewSchema(b.Context(), pg.srv.URL(), pgtest.UniqueName("webui_bench", int64(pg.seq)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { drop() })
	return url
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		pg.srv.Stop()
	}
	os.Exit(code)
}
