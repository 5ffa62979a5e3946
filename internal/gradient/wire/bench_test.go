package wire

import (
	"fmt"
	"testing"
)

func benchNarPush() *NarPush {
	data := make([]byte, BulkChunkSize)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return &NarPush{JobID: "build:0190f5a2-7c1e-7b3d-9a4e-2f6b8c1d0e9f",
		StorePath: "/nix/store/7h6zq0d2xq9m4v1r8c3k5j2n0p6s4w8y-hello-2.12.1", Data: data, Offset: 1 << 30}
}

func benchCacheQuery() *CacheQuery {
	q := &CacheQuery{JobID: "build:0190f5a2-7c1e-7b3d-9a4e-2f6b8c1d0e9f", QueryID: "0190f5a2-7c1e-7b3d-9a4e-2f6b8c1d0e90",
		Mode: QueryModePush}
	for i := range CacheQueryMaxPaths {
		q.Paths = append(q.Paths, fmt.Sprintf("/nix/store/%032d-package-%d-1.2.3", i*7919, i))
		q.NarSizes = append(q.NarSizes, Some(uint64(i)*4096+17))
	}
	return q
}

// BenchmarkMemcpy512KiB is the floor NarPush encoding is measured against.
func BenchmarkMemcpy512KiB(b *testing.B) {
	src := benchNarPush().Data
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkEncodeNarPush(b *testing.B) {
	m := benchNarPush()
	buf := make([]byte, 0, BulkChunkSize+256)
	b.SetBytes(int64(len(m.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = Append(buf[:0], m, 30); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeNarPush(b *testing.B) {
	frame, err := Encode(benchNarPush(), 30)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeServerMessage(frame, 30); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCacheQuery1000(b *testing.B) {
	m := benchCacheQuery()
	frame, err := Encode(m, 30)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(frame))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = Append(buf[:0], m, 30); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCacheQuery1000(b *testing.B) {
	frame, err := Encode(benchCacheQuery(), 30)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeClientMessage(frame, 30); err != nil {
			b.Fatal(err)
		}
	}
}
