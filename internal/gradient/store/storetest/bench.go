package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// BenchmarkClaim measures the job-assignment path (gradient-server §6.1) — RequestJob to
// AssignJob is Candidates then Claim — with queued builds waiting. Each iteration
// declines its claim (untimed) so the queue stays full. It reports p50 and p99 in
// milliseconds.
func BenchmarkClaim(b *testing.B, open Opener, queued int) {
	ctx := context.Background()
	s := open(b)
	projectID := seedQueue(b, s, queued)
	q := store.CandidateQuery{Kind: store.JobBuild, Projects: []string{projectID},
		Systems: []string{"x86_64-linux"}, Features: []string{"big-parallel"}, Limit: 3}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		a, err := claimNext(ctx, s, q)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := s.DeclineAssignment(ctx, a.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// claimNext is what the server does on RequestJob: the candidates, then claims in order,
// up to 3 lost races (gradient-server §6.1).
func claimNext(ctx context.Context, s store.Store, q store.CandidateQuery) (store.Assignment, error) {
	cs, err := s.Candidates(ctx, q)
	if err != nil {
		return store.Assignment{}, err
	}
	for _, c := range cs {
		a, err := s.Claim(ctx, c.Job, workerA)
		if err == nil {
			return a, nil
		}
	}
	return store.Assignment{}, fmt.Errorf("no job claimed among %d candidates", len(cs))
}

// seedQueue creates a project whose evaluation queued n independent builds.
func seedQueue(tb testing.TB, s store.Store, n int) string {
	ctx := context.Background()
	p, err := s.CreateProject(ctx, store.NewProject{Name: "bench", RepoURL: "https://example.org/bench.git"})
	if err != nil {
		tb.Fatal(err)
	}
	ev, err := s.CreateEvaluation(ctx, store.NewEvaluation{ProjectID: p.ID, Commit: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	job, err := s.Claim(ctx, store.EvalJob(ev.ID), workerB)
	if err != nil {
		tb.Fatal(err)
	}
	for start := 0; start < n; start += 50 {
		var ds []store.Derivation
		for i := start; i < min(n, start+50); i++ {
			ds = append(ds, drv(fmt.Sprintf("bench-%05d", i)))
		}
		if _, err := s.AddEvalResult(ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: ds}); err != nil {
			tb.Fatal(err)
		}
	}
	return p.ID
}
