package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// The job-loop and cache benchmarks run against the real server: a SQLite store, NAR storage
// on disk, a loopback listener, and workers that dial /proto and pass the real handshake.
// They keep their own rig (testing.TB) rather than the tests' newRig (*testing.T).

// benchQueued is the queue depth the job-assignment goal is stated for.
const benchQueued = 1000

// benchRig is one in-process server with one project subscribed to one cache.
type benchRig struct {
	tb      testing.TB
	srv     *Server
	st      store.Store
	nars    *narstore.Store
	url     string
	project store.Project
	cache   store.Cache
}

func newBenchRig(tb testing.TB) *benchRig {
	tb.Helper()
	bctx := context.Background()
	dir := tb.TempDir()
	st, err := sqlite.Open(sqlite.PathIn(dir))
	benchCheck(tb, err)
	nars, err := narstore.Open(dir)
	benchCheck(tb, err)
	r := &benchRig{tb: tb, st: st, nars: nars, srv: New(Config{Store: st, NARs: nars})}
	_, err = r.srv.Recover(bctx)
	benchCheck(tb, err)
	runCtx, stop := context.WithCancel(bctx)
	go r.srv.Run(runCtx)
	hs := httptest.NewServer(r.srv.Handler())
	tb.Cleanup(func() { stop(); r.srv.Shutdown(bctx); hs.Close(); st.Close() })
	r.url = "ws" + strings.TrimPrefix(hs.URL, "http") + "/proto"
	r.project, err = st.CreateProject(bctx, store.NewProject{Name: "bench", RepoURL: "file:///nowhere", Branch: "main", Wildcards: []string{"packages"}})
	benchCheck(tb, err)
	r.cache, err = st.CreateCache(bctx, store.NewCache{Name: "bench"})
	benchCheck(tb, err)
	benchCheck(tb, st.SubscribeCache(bctx, r.project.ID, r.cache.ID))
	return r
}

// dial registers workerID for the project and runs the worker side of the handshake.
func (r *benchRig) dial(workerID string) *wsconn.WorkerConn {
	r.tb.Helper()
	bctx := context.Background()
	token := "token-of-" + workerID
	_, err := r.st.CreateRegistration(bctx, store.NewRegistration{PeerID: r.project.ID, WorkerID: workerID,
		TokenHash: peertoken.SHA256Hex(token), EnableFetch: true, EnableEval: true, EnableBuild: true})
	benchCheck(r.tb, err)
	c, err := wsconn.DialServer(bctx, r.url, wsconn.DialOptions{})
	benchCheck(r.tb, err)
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID,
		Tokens:       session.NewPeerTokens([]wire.PeerToken{{PeerID: r.project.ID, Token: token}}),
		Capabilities: wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}})
	_, _, err = handshake.Run(bctx, c, role, out, nil)
	benchCheck(r.tb, err)
	r.tb.Cleanup(func() { c.Abort() })
	return c
}

// dialBuilder dials a worker and waits until the server holds its WorkerCapabilities (an
// x86_64-linux builder with one slot), so its RequestJobs can match builds.
func (r *benchRig) dialBuilder(workerID string) *wsconn.WorkerConn {
	c := r.dial(workerID)
	benchCheck(r.tb, c.Send(context.Background(), &wire.WorkerCapabilities{
		Architectures: []string{"x86_64-linux"}, MaxConcurrentBuilds: 1, CPUCount: 2, RAMTotalMB: 1024}))
	deadline := time.Now().Add(10 * time.Second)
	for !r.hasCapabilities(workerID) {
		if time.Now().After(deadline) {
			r.tb.Fatal("the server never applied the WorkerCapabilities")
		}
		time.Sleep(time.Millisecond)
	}
	return c
}

func (r *benchRig) hasCapabilities(workerID string) bool {
	w := r.srv.sessions.get(workerID)
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.caps != nil
}

// queueBuilds queues n independent x86_64-linux builds, as an evaluation's EvalResult
// batches do.
func (r *benchRig) queueBuilds(n int) {
	r.tb.Helper()
	bctx := context.Background()
	ev, err := r.st.CreateEvaluation(bctx, store.NewEvaluation{ProjectID: r.project.ID, Commit: strings.Repeat("ab", 20)})
	benchCheck(r.tb, err)
	evalJob, err := r.st.Claim(bctx, store.EvalJob(ev.ID), benchWorkerID(999))
	benchCheck(r.tb, err)
	for start := 0; start < n; start += 50 {
		var ds []store.Derivation
		for i := start; i < min(n, start+50); i++ {
			name := fmt.Sprintf("bench-%05d", i)
			ds = append(ds, store.Derivation{DrvPath: benchStorePath(name + ".drv"), System: "x86_64-linux", Pname: name,
				Outputs: []store.Output{{Name: "out", Path: benchStorePath(name)}}})
		}
		_, err := r.st.AddEvalResult(bctx, store.EvalBatch{AssignmentID: evalJob.ID, Derivations: ds})
		benchCheck(r.tb, err)
	}
}

// BenchmarkJobAssignment is the job-assignment latency: RequestJob sent → AssignJob
// read, on real sessions, with at least 1,000 builds queued throughout (goal: p99 < 50 ms).
// Each worker accepts its job and reports Building (a store write) before asking again, so
// with 8 workers the claims compete with each other and with those writes for SQLite's
// single writer.
func BenchmarkJobAssignment(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchAssignment(b, workers) })
	}
}

func benchAssignment(b *testing.B, workers int) {
	r := newBenchRig(b)
	r.queueBuilds(benchQueued + b.N) // every assignment takes one; 1,000 stay queued
	conns := make([]*wsconn.WorkerConn, workers)
	for i := range conns {
		conns[i] = r.dialBuilder(benchWorkerID(i))
	}
	lat := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, c := range conns {
		n := b.N / workers
		if i < b.N%workers {
			n++
		}
		wg.Go(func() { lat[i], errs[i] = takeBuilds(c, n) })
	}
	wg.Wait()
	b.StopTimer()
	benchCheck(b, errors.Join(errs...))
	all := slices.Concat(lat...)
	reportLatency(b, all)
	// A RequestJob whose every candidate went to another worker waits for the next kick or
	// the 5 s pool pass: these two say how often that happened.
	b.ReportMetric(float64(r.srv.counters.ClaimsLost.Load())/float64(b.N), "lost-claims/op")
	b.ReportMetric(float64(countOver(all, time.Second)), "over-1s")
}

func countOver(lat []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range lat {
		if d > limit {
			n++
		}
	}
	return n
}

// takeBuilds asks for n builds one after another as a worker with one slot does, and
// returns each RequestJob → AssignJob latency.
func takeBuilds(c *wsconn.WorkerConn, n int) ([]time.Duration, error) {
	bctx := context.Background()
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := c.Send(bctx, &wire.RequestJob{Kind: wire.JobKindBuild}); err != nil {
			return lat, err
		}
		a, err := benchNext[*wire.AssignJob](c)
		if err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(start))
		job, ok := a.Job.(*wire.BuildJob)
		if !ok || len(job.Builds) != 1 {
			return lat, fmt.Errorf("assigned %T %+v, want one build", a.Job, a.Job)
		}
		building := &wire.JobUpdateBuilding{BuildID: job.Builds[0].BuildID}
		for _, m := range []wire.ClientMessage{&wire.AssignJobResponse{JobID: a.JobID, Accepted: true},
			&wire.JobUpdate{JobID: a.JobID, AssignmentID: a.AssignmentID, Update: building}} {
			if err := c.Send(bctx, m); err != nil {
				return lat, err
			}
		}
	}
	return lat, nil
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// benchNext reads the next server message, which must be a T.
func benchNext[T wire.ServerMessage](c *wsconn.WorkerConn) (T, error) {
	var zero T
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, release, err := c.Read(rctx)
	if err != nil {
		return zero, err
	}
	defer release()
	v, ok := m.(T)
	if !ok {
		return zero, fmt.Errorf("read %T %+v, want %T", m, m, zero)
	}
	return v, nil
}

func benchWorkerID(i int) string { return fmt.Sprintf("0193a5c8-7f00-7000-8000-%012x", 0xbe000+i) }

// benchStorePath is a valid store path for name: a nix32 hash part derived from it.
func benchStorePath(name string) string {
	const alphabet = "0123456789abcdfghijklmnpqrsvwxyz"
	sum := sha256.Sum256([]byte(name))
	hash := make([]byte, 32)
	for i := range hash {
		hash[i] = alphabet[sum[i]%32]
	}
	return "/nix/store/" + string(hash) + "-" + name
}

func benchCheck(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
