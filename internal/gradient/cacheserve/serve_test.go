package cacheserve

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// pulled is what one path's stream delivered.
type pulled struct {
	header *wire.NarStreamHeader
	data   []byte
	end    wire.ServerMessage // the final NarPush, NarUnavailable or NarAbort
}

// collect reads stream messages until every path ended.
func collect(t *testing.T, rec *recorder, paths ...string) map[string]*pulled {
	t.Helper()
	out := map[string]*pulled{}
	for _, p := range paths {
		out[p] = &pulled{}
	}
	for open := len(paths); open > 0; {
		switch m := rec.next(t).(type) {
		case *wire.NarStreamHeader:
			out[m.StorePath].header = m
		case *wire.NarPush:
			st := out[m.StorePath]
			if m.Offset != uint64(len(st.data)) || len(m.Data) > ChunkSize || (!m.IsFinal && len(m.Data) != ChunkSize) {
				t.Fatalf("%s: chunk at %d of %d bytes after %d", m.StorePath, m.Offset, len(m.Data), len(st.data))
			}
			st.data = append(st.data, m.Data...)
			if m.IsFinal {
				st.end, open = m, open-1
			}
		case *wire.NarUnavailable:
			out[m.StorePath].end, open = m, open-1
		case *wire.NarAbort:
			out[m.StorePath].end, open = m, open-1
		default:
			t.Fatalf("unexpected %T", m)
		}
	}
	return out
}

// gradient-protocol §7.4: a header with the compressed size and token "len-<size>", then
// 512 KiB chunks with offsets, the last one final; NarUnavailable for what the session may
// not read or the server does not hold (and the stale row is demoted).
func TestNarRequestStreamsOrRefusesEachPath(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(8<<20, 12))
	mine, theirs, gone, small := storePath("mine"), storePath("theirs"), storePath("gone"), storePath("small")
	tiny := narstoretest.Make(narstoretest.NAR(100, 1))
	e.stored(mine, obj, e.main.ID)
	e.stored(small, tiny, e.main.ID)
	e.stored(theirs, obj, e.other.ID)
	e.stored(gone, obj, e.main.ID)
	goneHash, _ := store.StoreHash(gone)
	check(t, e.nars.Remove(goneHash))
	s, rec := e.session(lateBookkeeping)
	paths := []string{mine, theirs, gone, small, "/nix/store/bad"}
	handle(t, s, &wire.NarRequest{JobID: "build:1", Paths: paths})
	got := collect(t, rec, paths...)
	for p, o := range map[string]narstoretest.Object{mine: obj, small: tiny} {
		want := &wire.NarStreamHeader{JobID: "build:1", StorePath: p, TotalBytes: uint64(len(o.Compressed)), StreamToken: streamToken(int64(len(o.Compressed)))}
		if diff := cmp.Diff(want, got[p].header); diff != "" {
			t.Errorf("header (-want +got):\n%s", diff)
		}
		if !bytes.Equal(got[p].data, o.Compressed) {
			t.Errorf("%s: pulled %d bytes differ from the stored %d", p, len(got[p].data), len(o.Compressed))
		}
	}
	for p, reason := range map[string]string{theirs: "not in this cache", gone: "the cache has no stored object for this path", "/nix/store/bad": "not a store path"} {
		want := &wire.NarUnavailable{JobID: "build:1", StorePath: p, Reason: reason}
		if diff := cmp.Diff(want, got[p].end); diff != "" || got[p].header != nil {
			t.Errorf("%s (-want +got):\n%s", p, diff)
		}
	}
	if _, ok := e.lookup(gone, e.main.ID); ok {
		t.Error("the row of a missing object was not demoted")
	}
	settled(s)
	if e.counters.NarServes.Load() != 2 || e.counters.Demoted.Load() != 1 {
		t.Errorf("serves %d, demoted %d", e.counters.NarServes.Load(), e.counters.Demoted.Load())
	}
}

// gradient-protocol §7.4: a resume with the current token continues from received_bytes; a
// stale token or an offset past the end restarts from 0.
func TestNarRequestResume(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(4<<20, 13))
	p := storePath("r")
	e.stored(p, obj, e.main.ID)
	size := int64(len(obj.Compressed))
	cases := []struct {
		name     string
		received uint64
		token    string
		from     uint64
	}{
		{"current token", ChunkSize, streamToken(size), ChunkSize},
		{"current token, odd offset", 1000, streamToken(size), 1000},
		{"stale token", ChunkSize, "len-1", 0},
		{"past the end", uint64(size) + 1, streamToken(size), 0},
	}
	s, rec := e.session()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			handle(t, s, &wire.NarRequestResume{JobID: "j", StorePath: p, ReceivedBytes: c.received, StreamToken: c.token})
			next[*wire.NarStreamHeader](t, rec)
			var data []byte
			for {
				m := next[*wire.NarPush](t, rec)
				if m.Offset != c.from+uint64(len(data)) {
					t.Fatalf("chunk at %d, want %d", m.Offset, c.from+uint64(len(data)))
				}
				data = append(data, m.Data...)
				if m.IsFinal {
					break
				}
			}
			if !bytes.Equal(data, obj.Compressed[c.from:]) {
				t.Error("resumed bytes differ")
			}
		})
	}
}

// gatedSend blocks every stream header until released, counting how many wait.
type gatedSend struct {
	rec     *recorder
	release chan struct{}
	mu      sync.Mutex
	waiting int
	arrived chan struct{}
}

func (g *gatedSend) send(ctx context.Context, m wire.ServerMessage) error {
	if _, ok := m.(*wire.NarStreamHeader); ok {
		g.mu.Lock()
		g.waiting++
		g.mu.Unlock()
		g.arrived <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.rec.send(ctx, m)
}

// At most 8 paths stream at once per session; the rest queue without blocking Handle, and
// Close stops everything.
func TestServesAreBoundedPerSession(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(1000, 14))
	var paths []string
	for range 20 {
		p := storePath("p")
		e.stored(p, obj, e.main.ID)
		paths = append(paths, p)
	}
	g := &gatedSend{rec: newRecorder(), release: make(chan struct{}), arrived: make(chan struct{}, 64)}
	s, _ := e.session(func(c *Config) { c.Send = g.send })
	handle(t, s, &wire.NarRequest{JobID: "j", Paths: paths})
	for range MaxConcurrentServes {
		<-g.arrived
	}
	s.mu.Lock()
	running, queued := s.running, len(s.pending)
	s.mu.Unlock()
	if running != MaxConcurrentServes || queued+running != len(paths) || !s.Busy() {
		t.Fatalf("running %d, queued %d", running, queued)
	}
	close(g.release)
	collect(t, g.rec, paths...)
	s.Close()
	if s.Busy() {
		t.Error("busy after close")
	}
}
