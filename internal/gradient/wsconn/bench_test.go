package wsconn

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// BenchmarkNarPushThroughput pushes 512 KiB NarPush frames from the server's writer (lanes,
// batching, one socket) to the worker's typed reader over loopback TCP; MB/s counts frame
// bytes.
func BenchmarkNarPushThroughput(b *testing.B) {
	url, accepted := serveWorkers(b, Options{})
	worker := dialServer(b, url, DialOptions{})
	server := acceptOne(b, accepted)
	agreeBoth(b, worker, server)
	worker.EnterSession()
	benchmarkThroughput(b, wire.ServerMessage(narPush(0, wire.BulkChunkSize)), server.Writer, worker.Reader)
}

// BenchmarkUploadChunkThroughput is the other direction: 512 KiB UploadChunk frames from the
// worker, whose frames the library masks, to the server's reader.
func BenchmarkUploadChunkThroughput(b *testing.B) {
	url, accepted := serveWorkers(b, Options{})
	worker := dialServer(b, url, DialOptions{})
	server := acceptOne(b, accepted)
	agreeBoth(b, worker, server)
	server.EnterSession()
	chunk := &wire.UploadChunk{RequestID: 7, Data: narPush(0, wire.BulkChunkSize).Data, Offset: 1 << 30}
	benchmarkThroughput(b, wire.ClientMessage(chunk), worker.Writer, server.Reader)
}

func benchmarkThroughput[S, R wire.Message](b *testing.B, m S, w *Writer[S], r *Reader[R]) {
	frame, err := wire.Encode(m, 30)
	if err != nil {
		b.Fatal(err)
	}
	ctx := testCtx(b)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	sendErr := make(chan error, 1)
	go func() {
		for range b.N {
			if err := w.Send(ctx, m); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	for range b.N {
		_, release, err := r.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
	if err := <-sendErr; err != nil {
		b.Fatal(err)
	}
}
