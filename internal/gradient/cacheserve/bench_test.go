package cacheserve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// BenchmarkUploadThroughput uploads a 256 MiB NAR worker → server over loopback through
// the whole path: wsconn both ends, 512 KiB UploadChunks, staging with the running SHA-256,
// then the commit (file hash check, streaming decompression + NAR SHA-256, fsync, rename)
// and the SQLite record, until UploadCommitted arrives. MB/s counts NAR bytes; wire-MB/s
// counts the compressed bytes that crossed the socket. The level-6 compression is the
// worker's cost and is done once, outside the timer. "text" compresses about 4:1 (build
// output); "random" does not compress (the transport's worst case).
func BenchmarkUploadThroughput(b *testing.B) {
	const size = 256 << 20
	for _, c := range []struct {
		name string
		nar  func() []byte
	}{
		{"text", func() []byte { return narstoretest.NAR(size, 42) }},
		{"random", func() []byte { return narstoretest.IncompressibleNAR(size) }},
	} {
		b.Run(c.name, func(b *testing.B) { benchUpload(b, narstoretest.Make(c.nar())) })
	}
}

func benchUpload(b *testing.B, obj narstoretest.Object) {
	e := newEnv(b)
	c := worker(b, e.serve(b))
	b.SetBytes(int64(len(obj.NAR)))
	var sending, total time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		queued := uploadOverSocket(b, c, uint64(i+1), fmt.Sprintf("/nix/store/%032d-bench", i), obj)
		sending += queued.Sub(start)
		total += time.Since(start)
	}
	b.StopTimer()
	secs := total.Seconds()
	b.ReportMetric(float64(len(obj.Compressed))*float64(b.N)/secs/1e6, "wire-MB/s")
	b.ReportMetric(float64(len(obj.Compressed))/float64(len(obj.NAR)), "ratio")
	b.ReportMetric(sending.Seconds()*1000/float64(b.N), "send-ms/op")
	b.ReportMetric((total-sending).Seconds()*1000/float64(b.N), "after-send-ms/op")
}

// uploadOverSocket runs one upload as the worker does and returns when the last frame was
// queued.
func uploadOverSocket(b *testing.B, c *wsconn.WorkerConn, id uint64, p string, obj narstoretest.Object) time.Time {
	ctx := context.Background()
	check(b, c.Send(ctx, &wire.UploadRequest{JobID: "build:1", RequestID: id, Object: &wire.UploadObjectNar{StorePath: p}, Size: uint64(len(obj.NAR))}))
	read[*wire.UploadGrant](b, c)
	for off := 0; off < len(obj.Compressed); off += ChunkSize {
		end := min(off+ChunkSize, len(obj.Compressed))
		check(b, c.Send(ctx, &wire.UploadChunk{RequestID: id, Data: obj.Compressed[off:end], Offset: uint64(off), IsFinal: end == len(obj.Compressed)}))
	}
	check(b, c.Send(ctx, &wire.UploadFinished{RequestID: id, Metadata: metadata(obj)}))
	queued := time.Now()
	if o := read[*wire.UploadCommitted](b, c).Outcome; !isOk(o) {
		b.Fatalf("outcome %#v", o)
	}
	return queued
}
