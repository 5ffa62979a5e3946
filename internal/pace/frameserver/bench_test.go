package frameserver

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// valueHandler answers every FETCH with one preallocated value, as a
// memory tier serving a hit would (no copy on the server side).
func valueHandler(value []byte) Handler {
	return HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply { return Ok(value) })
}

// fetcher does FETCH exchanges on one connection with reusable buffers.
type fetcher struct {
	conn net.Conn
	br   *bufio.Reader
	req  []byte
	buf  []byte
	hdr  [wire.ReplyHeaderLen]byte
}

func newFetcher(tb testing.TB, addr string, size int) *fetcher {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	return &fetcher{conn: conn, br: bufio.NewReaderSize(conn, 64<<10),
		req: fetch("0123456789abcdef0123456789abcdef"), buf: make([]byte, size)}
}

func (f *fetcher) fetch() error {
	if _, err := f.conn.Write(f.req); err != nil {
		return err
	}
	if _, err := io.ReadFull(f.br, f.hdr[:]); err != nil {
		return err
	}
	if f.hdr[0] != byte(wire.StatusOk) || binary.BigEndian.Uint32(f.hdr[1:]) != uint32(len(f.buf)) {
		return fmt.Errorf("reply header % x", f.hdr)
	}
	_, err := io.ReadFull(f.br, f.buf)
	return err
}

// BenchmarkFetchLoopback measures FETCH-shaped exchanges over loopback
// TCP: one connection doing request/reply, and 16 parallel connections.
func BenchmarkFetchLoopback(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		_, addr := startServer(b, Config{Handler: valueHandler(make([]byte, size))})
		b.Run(fmt.Sprintf("%dKiB/conns=1", size>>10), func(b *testing.B) {
			f := newFetcher(b, addr, size)
			defer f.conn.Close()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := f.fetch(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dKiB/parallel", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				f := newFetcher(b, addr, size)
				defer f.conn.Close()
				for pb.Next() {
					if err := f.fetch(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkFreshConnectionPerFetch is pace-cc's pattern: one connection
// per operation.
func BenchmarkFreshConnectionPerFetch(b *testing.B) {
	_, addr := startServer(b, Config{Handler: valueHandler(make([]byte, 4<<10))})
	b.ReportAllocs()
	for b.Loop() {
		f := newFetcher(b, addr, 4<<10)
		if err := f.fetch(); err != nil {
			b.Fatal(err)
		}
		f.conn.Close()
	}
}
