package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/server"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// The worker → server transfer benchmarks, with the worker's own code on
// both ends of a real /proto session: the real server (SQLite, NAR storage, loopback) and a
// real worker session (handshake, router, run) whose job goroutine calls push or pull.

const (
	benchNARSize  = 256 << 20
	benchWorkerID = "0193a5c8-7f00-7000-8000-0000000be001"
	benchToken    = "bench-token"
)

// benchServer is an in-process gradient server with one project, subscribed to one cache,
// that registered benchWorkerID.
type benchServer struct {
	url   string
	st    store.Store
	nars  *narstore.Store
	cache store.Cache
	peer  string // the project's ID
	close func()
}

func newBenchServer(tb testing.TB) *benchServer {
	tb.Helper()
	bctx := context.Background()
	dir, err := os.MkdirTemp("", "gradient-bench-server-")
	benchCheck(tb, err)
	st, err := sqlite.Open(sqlite.PathIn(dir))
	benchCheck(tb, err)
	nars, err := narstore.Open(dir)
	benchCheck(tb, err)
	srv := server.New(server.Config{Store: st, NARs: nars})
	_, err = srv.Recover(bctx)
	benchCheck(tb, err)
	hs := httptest.NewServer(srv.Handler())
	bs := &benchServer{url: "ws" + strings.TrimPrefix(hs.URL, "http") + "/proto", st: st, nars: nars,
		close: func() { srv.Shutdown(bctx); hs.Close(); st.Close(); os.RemoveAll(dir) }}
	p, err := st.CreateProject(bctx, store.NewProject{Name: "bench", RepoURL: "file:///nowhere", Branch: "main"})
	benchCheck(tb, err)
	bs.peer = p.ID
	bs.cache, err = st.CreateCache(bctx, store.NewCache{Name: "bench"})
	benchCheck(tb, err)
	benchCheck(tb, st.SubscribeCache(bctx, p.ID, bs.cache.ID))
	_, err = st.CreateRegistration(bctx, store.NewRegistration{PeerID: p.ID, WorkerID: benchWorkerID,
		TokenHash: peertoken.SHA256Hex(benchToken), EnableFetch: true, EnableEval: true, EnableBuild: true})
	benchCheck(tb, err)
	return bs
}

// benchWorker is a Worker whose GC roots live in a directory of their own.
func benchWorker(tb testing.TB) *Worker {
	tb.Helper()
	base := tb.TempDir()
	roots := filepath.Join("/nix/var/nix/gcroots", "gradient-wbench-"+filepath.Base(base))
	tb.Cleanup(func() { os.RemoveAll(roots) })
	w, err := New(Config{BaseDir: base, WorkerID: benchWorkerID,
		Nix: nixexec.New(nixexec.Options{GCRootDir: roots})})
	benchCheck(tb, err)
	return w
}

// benchRun connects w to the server as Serve would and returns a build job's run on that
// session, with a stop function. The session's inbound messages go through sess.receive,
// so replies reach the job through the worker's router.
func benchRun(tb testing.TB, w *Worker, bs *benchServer) (*run, func()) {
	tb.Helper()
	bctx := context.Background()
	conn, err := wsconn.DialServer(bctx, bs.url, wsconn.DialOptions{})
	benchCheck(tb, err)
	role, out := session.NewPeer(session.PeerConfig{WorkerID: benchWorkerID, Capabilities: w.cfg.Offer,
		Tokens: session.NewPeerTokens([]wire.PeerToken{{PeerID: bs.peer, Token: benchToken}})})
	role, res, err := handshake.Run(bctx, conn, role, out, nil)
	benchCheck(tb, err)
	s := w.newSession(conn, session.Erase(role), res)
	msgs := make(chan inbound)
	go s.readLoop(msgs)
	go func() {
		for {
			select {
			case in := <-msgs:
				if in.err != nil {
					return
				}
				s.receive(in.msg)
				in.release()
			case <-s.ctx.Done():
				return
			}
		}
	}()
	dir := filepath.Join(tb.TempDir(), "job")
	benchCheck(tb, os.MkdirAll(dir, 0o755))
	r := &run{s: s, j: &job{id: "build:bench", kind: wire.JobKindBuild}, started: time.Now(), dir: dir}
	return r, func() { s.cancel(); conn.Abort() }
}

// benchOutput is a 256 MiB regular file added to the Nix store: "text" compresses about
// 4:1 at level 6, "random" not at all.
func benchOutput(tb testing.TB, name string, w *Worker) string {
	tb.Helper()
	data := narstoretest.NAR(benchNARSize, 42) // NAR-framed text: build-output-like bytes
	if name == "random" {
		_, _ = rand.NewChaCha8([32]byte{7}).Read(data)
	}
	file := filepath.Join(tb.TempDir(), "gradient-bench-"+name)
	benchCheck(tb, os.WriteFile(file, data, 0o644))
	out, err := exec.Command("nix-store", "--add", file).Output()
	benchCheck(tb, err)
	path := strings.TrimSpace(string(out))
	roots, err := w.nix.NewRoots("bench-" + name)
	benchCheck(tb, err)
	benchCheck(tb, roots.Add(path))
	tb.Cleanup(func() {
		roots.Release()
		exec.Command("nix-store", "--delete", path).Run()
	})
	return path
}

// BenchmarkWorkerPush is the upload throughput with the worker's own upload code:
// push of one 256 MiB store path to a server whose cache lacks it — nix path-info,
// CacheQuery Push, UploadRequest/Grant, `nix-store --dump` through zstd level 6 with both
// hashes computed on the way, 512 KiB UploadChunks, UploadFinished, and the server's
// verification, fsync and row, until UploadCommitted. Compression included: this is what a
// build's output upload costs end to end. Each iteration gets a fresh server (untimed).
// MB/s counts NAR bytes.
func BenchmarkWorkerPush(b *testing.B) {
	w := benchWorker(b)
	for _, name := range []string{"text", "random"} {
		path := benchOutput(b, name, w)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchNARSize)
			var sent uint64
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				bs := newBenchServer(b)
				r, stop := benchRun(b, w, bs)
				b.StartTimer()
				start := benchCPUTime()
				n, bytes, err := r.push(context.Background(), []string{path})
				cpu += benchCPUTime() - start
				b.StopTimer()
				stop()
				bs.close()
				benchCheck(b, err)
				if n != 1 {
					b.Fatalf("pushed %d paths, want 1", n)
				}
				sent = bytes
				b.StartTimer()
			}
			b.ReportMetric(float64(sent)/benchNARSize, "ratio")
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkWorkerPull is the NAR pull throughput with the worker's own receiver: NarRequest for
// one 256 MiB output, NarStreamHeader and 512 KiB NarPush chunks from the server's NAR
// storage, each written to the job's file and hashed by the worker's narStream, the SHA-256
// of the compressed bytes checked against the CacheStatus Pull answer. The import into the
// Nix store (nix-store --import) is not timed. MB/s counts NAR bytes; wire-MB/s the
// compressed bytes that crossed the socket.
func BenchmarkWorkerPull(b *testing.B) {
	w := benchWorker(b)
	for _, name := range []string{"text", "random"} {
		nar := narstoretest.NAR(benchNARSize, 42)
		if name == "random" {
			nar = narstoretest.IncompressibleNAR(benchNARSize)
		}
		obj := narstoretest.Make(nar)
		b.Run(name, func(b *testing.B) {
			bs := newBenchServer(b)
			defer bs.close()
			path := "/nix/store/" + strings.Repeat("b", 32) + "-bench-" + name
			bs.storeObject(b, path, obj)
			r, stop := benchRun(b, w, bs)
			defer stop()
			infos, err := r.cacheQuery(context.Background(), []string{path}, wire.QueryModePull, nil)
			benchCheck(b, err)
			b.SetBytes(int64(len(obj.NAR)))
			cpu := benchCPUTime()
			b.ResetTimer()
			for b.Loop() {
				files, missing, err := r.pull(context.Background(), infos)
				benchCheck(b, err)
				if len(files) != 1 || len(missing) != 0 {
					b.Fatalf("pulled %v, missing %v", files, missing)
				}
			}
			b.ReportMetric(float64(len(obj.Compressed))*float64(b.N)/b.Elapsed().Seconds()/1e6, "wire-MB/s")
			b.ReportMetric(float64(len(obj.Compressed))/float64(len(obj.NAR)), "ratio")
			b.ReportMetric(float64(benchCPUTime()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// storeObject puts a committed object and its row in the server's cache, as a finished
// upload would have.
func (bs *benchServer) storeObject(tb testing.TB, path string, obj narstoretest.Object) {
	hash, err := store.StoreHash(path)
	benchCheck(tb, err)
	st, err := bs.nars.Stage("seed/" + hash)
	benchCheck(tb, err)
	benchCheck(tb, st.Write(0, obj.Compressed))
	benchCheck(tb, st.Commit(hash, obj.Expect))
	row := store.CachedPath{StorePath: path, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.Hex(), FileSize: obj.Expect.FileSize}
	benchCheck(tb, bs.st.PutCachedPath(context.Background(), row, []string{bs.cache.ID}))
}

// benchCPUTime is the CPU time (user + system) of this process and of its waited-for
// children (nix-store --dump, nix path-info): both ends of the session run in this process,
// so CPU per operation is the transfer's whole work, a figure other jobs on the machine do
// not distort the way they distort wall-clock throughput.
func benchCPUTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

func benchCheck(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tb.Fatalf("%v: %s", err, ee.Stderr)
		}
		tb.Fatal(err)
	}
}
