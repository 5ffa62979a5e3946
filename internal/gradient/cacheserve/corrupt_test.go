package cacheserve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// flipByte corrupts one byte of a stored object in place, keeping its size (so only the
// hash can tell).
func (e *env) flipByte(p string, at int64) {
	e.t.Helper()
	hash, err := store.StoreHash(p)
	check(e.t, err)
	f, err := os.OpenFile(filepath.Join(e.dir, "nar", hash+".nar.zst"), os.O_RDWR, 0)
	check(e.t, err)
	defer f.Close()
	b := []byte{0}
	_, err = f.ReadAt(b, at)
	check(e.t, err)
	b[0] ^= 0x5a
	_, err = f.WriteAt(b, at)
	check(e.t, err)
}

// gradient-protocol §7.4: an object damaged on disk (same size, other bytes) is
// never served as good. Its stream ends in NarAbort where the final chunk would be, the row
// is demoted, and the next request of the path is answered NarUnavailable. A resume hashes
// the prefix it skips, so damage before the resume point is caught too.
func TestCorruptStoredNARIsNeverServedAsGood(t *testing.T) {
	obj := narstoretest.Make(narstoretest.NAR(6<<20, 21))
	tiny := narstoretest.Make(narstoretest.NAR(300, 22))
	size := int64(len(obj.Compressed))
	cases := []struct {
		name   string
		obj    narstoretest.Object
		flipAt int64
		resume uint64 // 0: a plain NarRequest
	}{
		{"first byte", obj, 0, 0},
		{"middle", obj, size / 2, 0},
		{"last byte", obj, size - 1, 0},
		{"single-chunk object", tiny, int64(len(tiny.Compressed)) / 2, 0},
		{"resume past the damage", obj, 10, 2 * ChunkSize},
		{"resume before the damage", obj, size - 1, ChunkSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := storePath("corrupt")
			e.stored(p, c.obj, e.main.ID)
			e.flipByte(p, c.flipAt)
			s, rec := e.session()
			var req wire.ClientMessage = &wire.NarRequest{JobID: "build:1", Paths: []string{p}}
			if c.resume > 0 {
				req = &wire.NarRequestResume{JobID: "build:1", StorePath: p, ReceivedBytes: c.resume,
					StreamToken: streamToken(int64(len(c.obj.Compressed)))}
			}
			handle(t, s, req)
			got := collectFrom(t, rec, p, c.resume)
			abort, ok := got.end.(*wire.NarAbort)
			if !ok {
				t.Fatalf("stream ended with %T, want NarAbort", got.end)
			}
			if abort.StorePath != p || abort.JobID != "build:1" {
				t.Errorf("abort names %s/%s", abort.JobID, abort.StorePath)
			}
			if c.resume+uint64(len(got.data)) >= uint64(len(c.obj.Compressed)) {
				t.Errorf("all %d bytes were sent", len(c.obj.Compressed))
			}
			if _, ok := e.lookup(p, e.main.ID); ok {
				t.Error("the row of a corrupt object was not demoted")
			}
			if e.counters.AbortCorrupt.Load() != 1 || e.counters.NarServes.Load() != 0 || e.counters.Demoted.Load() != 1 {
				t.Errorf("corrupt %d, serves %d, demoted %d", e.counters.AbortCorrupt.Load(), e.counters.NarServes.Load(), e.counters.Demoted.Load())
			}
			handle(t, s, &wire.NarRequest{JobID: "build:1", Paths: []string{p}})
			if again := collect(t, rec, p)[p]; again.header != nil {
				t.Errorf("a demoted path streamed again: %T", again.end)
			} else if _, ok := again.end.(*wire.NarUnavailable); !ok {
				t.Errorf("retry answered %T, want NarUnavailable", again.end)
			}
		})
	}
}

// A good object still streams whole after the verification (the hash check passes on a
// resume too), so the check costs nothing but a hash.
func TestVerifiedStreamDeliversGoodObjects(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(3<<20, 23))
	p := storePath("good")
	e.stored(p, obj, e.main.ID)
	s, rec := e.session(lateBookkeeping)
	for _, from := range []uint64{0, ChunkSize + 7} {
		handle(t, s, &wire.NarRequestResume{JobID: "j", StorePath: p, ReceivedBytes: from,
			StreamToken: streamToken(int64(len(obj.Compressed)))})
		got := collectFrom(t, rec, p, from)
		if _, ok := got.end.(*wire.NarPush); !ok || string(got.data) != string(obj.Compressed[from:]) {
			t.Fatalf("from %d: ended %T with %d bytes, want the stored %d", from, got.end, len(got.data), len(obj.Compressed[from:]))
		}
	}
	settled(s)
	if e.counters.NarServes.Load() != 2 || e.counters.AbortCorrupt.Load() != 0 {
		t.Errorf("serves %d, corrupt %d", e.counters.NarServes.Load(), e.counters.AbortCorrupt.Load())
	}
}

// collectFrom reads one path's stream that starts at from (a resume point).
func collectFrom(t *testing.T, rec *recorder, p string, from uint64) *pulled {
	t.Helper()
	out := &pulled{}
	for {
		switch m := rec.next(t).(type) {
		case *wire.NarStreamHeader:
			out.header = m
		case *wire.NarPush:
			if m.StorePath != p || m.Offset != from+uint64(len(out.data)) {
				t.Fatalf("chunk of %s at %d, want %d", m.StorePath, m.Offset, from+uint64(len(out.data)))
			}
			out.data = append(out.data, m.Data...)
			if m.IsFinal {
				out.end = m
				return out
			}
		case *wire.NarUnavailable:
			out.end = m
			return out
		case *wire.NarAbort:
			out.end = m
			return out
		default:
			t.Fatalf("unexpected %T", m)
		}
	}
}
