package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// benchNARSize is the output size the transfer goals are stated for.
const benchNARSize = 256 << 20

// benchNARs are the two 256 MiB outputs the transfer benchmarks move: "text" compresses
// about 4:1 at level 6 (build output), "random" does not compress (the transport's worst
// case, where every NAR byte crosses the socket).
var benchNARs = []struct {
	name string
	nar  func() []byte
}{
	{"text", func() []byte { return narstoretest.NAR(benchNARSize, 42) }},
	{"random", func() []byte { return narstoretest.IncompressibleNAR(benchNARSize) }},
}

// BenchmarkSessionUpload uploads a 256 MiB output worker → server on a real /proto session:
// UploadRequest, UploadGrant, 512 KiB UploadChunks, UploadFinished, then the server's
// verification (length and SHA-256 of the compressed bytes, streaming decompression and the
// NAR hash), fsync, rename and the SQLite row, until UploadCommitted. The bytes are
// compressed once before the timer: this is transfer + verify only, not the worker's zstd
// (see BenchmarkWorkerPush in internal/gradient/worker for the figure with it). MB/s counts
// NAR bytes; wire-MB/s the compressed bytes that crossed the socket.
func BenchmarkSessionUpload(b *testing.B) {
	for _, c := range benchNARs {
		b.Run(c.name, func(b *testing.B) {
			obj := narstoretest.Make(c.nar())
			r := newBenchRig(b)
			conn := r.dial(benchWorkerID(0))
			b.SetBytes(int64(len(obj.NAR)))
			var sending, committing time.Duration
			cpu := benchCPUTime()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				sent, err := benchUpload(conn, uint64(i+1), benchStorePath(fmt.Sprintf("upload-%d", i)), obj)
				benchCheck(b, err)
				sending, committing = sending+sent.Sub(start), committing+time.Since(sent)
			}
			reportWire(b, len(obj.Compressed), len(obj.NAR))
			reportCPU(b, cpu)
			// Until the last frame was queued, and from then until UploadCommitted (the
			// server's verification and fsync after the last chunk).
			b.ReportMetric(sending.Seconds()*1000/float64(b.N), "send-ms/op")
			b.ReportMetric(committing.Seconds()*1000/float64(b.N), "commit-ms/op")
		})
	}
}

// benchUpload is the worker's side of one upload with precompressed bytes; it returns when
// UploadFinished was queued.
func benchUpload(c *wsconn.WorkerConn, id uint64, path string, obj narstoretest.Object) (sent time.Time, err error) {
	bctx := context.Background()
	err = c.Send(bctx, &wire.UploadRequest{JobID: "build:bench", RequestID: id,
		Object: &wire.UploadObjectNar{StorePath: path}, Size: uint64(len(obj.NAR))})
	if err != nil {
		return sent, err
	}
	grant, err := benchNext[*wire.UploadGrant](c)
	if err != nil {
		return sent, err
	}
	if _, ok := grant.Target.(*wire.GrantTargetPassthrough); !ok {
		return sent, fmt.Errorf("grant %T, want Passthrough", grant.Target)
	}
	for off := 0; off < len(obj.Compressed); off += cacheserve.ChunkSize {
		end := min(off+cacheserve.ChunkSize, len(obj.Compressed))
		if err := c.Send(bctx, &wire.UploadChunk{RequestID: id, Data: obj.Compressed[off:end], Offset: uint64(off),
			IsFinal: end == len(obj.Compressed)}); err != nil {
			return sent, err
		}
	}
	e := obj.Expect
	if err := c.Send(bctx, &wire.UploadFinished{RequestID: id, Metadata: &wire.NarUploadMetadata{
		FileHash: e.FileHash.String(), FileSize: uint64(e.FileSize), NarSize: uint64(e.NarSize), NarHash: e.NarHash.SRI()}}); err != nil {
		return sent, err
	}
	sent = time.Now()
	done, err := benchNext[*wire.UploadCommitted](c)
	if err != nil {
		return sent, err
	}
	if _, ok := done.Outcome.(*wire.UploadOutcomeOk); !ok {
		return sent, fmt.Errorf("upload outcome %#v", done.Outcome)
	}
	return sent, nil
}

// BenchmarkSessionPull pulls a 256 MiB output worker ← server on a real /proto session:
// NarRequest, NarStreamHeader, 512 KiB NarPush chunks read from the server's NAR storage.
// The client checks offsets and the SHA-256 of the compressed stream against the cache's
// record (what the worker verifies) but keeps nothing; BenchmarkWorkerPull in
// internal/gradient/worker runs the worker's own receiver, which also writes the file.
func BenchmarkSessionPull(b *testing.B) {
	for _, c := range benchNARs {
		b.Run(c.name, func(b *testing.B) {
			obj := narstoretest.Make(c.nar())
			r := newBenchRig(b)
			path := benchStorePath("pull")
			r.storeObject(path, obj)
			conn := r.dial(benchWorkerID(0))
			h := sha256.New()
			b.SetBytes(int64(len(obj.NAR)))
			cpu := benchCPUTime()
			b.ResetTimer()
			for b.Loop() {
				benchCheck(b, benchPull(conn, path, obj, h))
			}
			reportWire(b, len(obj.Compressed), len(obj.NAR))
			reportCPU(b, cpu)
		})
	}
}

func benchPull(c *wsconn.WorkerConn, path string, obj narstoretest.Object, h hash.Hash) error {
	if err := c.Send(context.Background(), &wire.NarRequest{JobID: "build:bench", Paths: []string{path}}); err != nil {
		return err
	}
	hdr, err := benchNext[*wire.NarStreamHeader](c)
	if err != nil {
		return err
	}
	if hdr.TotalBytes != uint64(len(obj.Compressed)) {
		return fmt.Errorf("stream of %d bytes, want %d", hdr.TotalBytes, len(obj.Compressed))
	}
	h.Reset()
	for received := uint64(0); ; {
		push, err := benchNext[*wire.NarPush](c)
		if err != nil {
			return err
		}
		if push.Offset != received {
			return fmt.Errorf("chunk at %d after %d bytes", push.Offset, received)
		}
		h.Write(push.Data)
		received += uint64(len(push.Data))
		if push.IsFinal {
			break
		}
	}
	if got := h.Sum(nil); string(got) != string(obj.Expect.FileHash[:]) {
		return fmt.Errorf("pulled stream hash differs")
	}
	return nil
}

// storeObject puts a committed object and its row in the rig's cache, as a finished upload
// would have.
func (r *benchRig) storeObject(path string, obj narstoretest.Object) {
	hash, err := store.StoreHash(path)
	benchCheck(r.tb, err)
	st, err := r.nars.Stage("seed/" + hash)
	benchCheck(r.tb, err)
	benchCheck(r.tb, st.Write(0, obj.Compressed))
	benchCheck(r.tb, st.Commit(hash, obj.Expect))
	row := store.CachedPath{StorePath: path, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.Hex(), FileSize: obj.Expect.FileSize,
		References: benchReferences(path), Deriver: benchStorePath("deriver.drv")}
	benchCheck(r.tb, r.st.PutCachedPath(context.Background(), row, []string{r.cache.ID}))
}

// benchReferences is a path's four references in hash-name form (typical of a build output:
// glibc, a compiler runtime, a library, itself).
func benchReferences(path string) []string {
	refs := make([]string, 4)
	for i := range refs {
		refs[i] = benchStorePath(fmt.Sprintf("ref-%d-of-%s", i, path[44:]))[len("/nix/store/"):]
	}
	return refs
}

// benchCPUTime is the CPU time this process has used (user + system): both ends of the
// session run in it, so the CPU per operation is the whole transfer's work on both sides.
// On a machine shared with other jobs it says what the wall-clock figures cannot: how much
// work one operation is.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU milliseconds per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(benchCPUTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func reportWire(b *testing.B, compressed, nar int) {
	b.ReportMetric(float64(compressed)*float64(b.N)/b.Elapsed().Seconds()/1e6, "wire-MB/s")
	b.ReportMetric(float64(compressed)/float64(nar), "ratio")
}

// BenchmarkCacheQueryPull is the cache query benchmark: CacheQuery Pull of 1,000
// cached paths (each answered with its hashes, sizes, four references and deriver) on a
// real /proto worker session, as queries per second. inflight=1 is one query at a time;
// inflight=4 pipelines as a worker does (gradient-protocol §7.2 allows 4 queries in
// flight).
func BenchmarkCacheQueryPull(b *testing.B) {
	r := newBenchRig(b)
	paths := make([]string, cacheserve.MaxQueryPaths)
	for i := range paths {
		paths[i] = benchStorePath(fmt.Sprintf("input-%04d", i))
		r.storeObject(paths[i], narstoretest.Make(narstoretest.NAR(256, uint64(i))))
	}
	for _, inflight := range []int{1, 4} {
		conn := r.dial(benchWorkerID(inflight)) // one session per worker ID: dialed once
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			b.ResetTimer()
			benchCheck(b, benchQueries(conn, paths, b.N, inflight))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(b.N*len(paths))/b.Elapsed().Seconds(), "paths/s")
		})
	}
}

// benchQueries sends n Pull queries keeping inflight of them outstanding, checking that
// each answer lists every path as cached.
func benchQueries(c *wsconn.WorkerConn, paths []string, n, inflight int) error {
	send := func() error {
		return c.Send(context.Background(), &wire.CacheQuery{JobID: "build:bench", QueryID: uuid.Must(uuid.NewV7()).String(),
			Paths: paths, Mode: wire.QueryModePull})
	}
	sent := 0
	for ; sent < min(n, inflight); sent++ {
		if err := send(); err != nil {
			return err
		}
	}
	for done := 0; done < n; done++ {
		status, err := benchNext[*wire.CacheStatus](c)
		if err != nil {
			return err
		}
		if len(status.Cached) != len(paths) || !status.Cached[len(paths)-1].Cached {
			return fmt.Errorf("answer lists %d paths, want %d cached", len(status.Cached), len(paths))
		}
		if sent < n {
			if err := send(); err != nil {
				return err
			}
			sent++
		}
	}
	return nil
}
