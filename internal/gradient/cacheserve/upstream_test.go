package cacheserve

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// fakeUpstream holds one path for the caches it was asked about.
type fakeUpstream struct {
	path   string
	answer wire.CachedPath
	err    error
	asked  [][]string
}

func (f *fakeUpstream) Lookup(_ context.Context, caches []string, p string) (wire.CachedPath, bool, error) {
	f.asked = append(f.asked, caches)
	if f.err != nil {
		return wire.CachedPath{}, false, f.err
	}
	return f.answer, p == f.path, nil
}

// gradient-server §14: an external query for a path the caches lack is answered from the
// session's caches' upstreams; a path the caches hold never reaches them, and a
// non-external query never does.
func TestExternalQueryConsultsUpstreams(t *testing.T) {
	e := newEnv(t)
	mine, up, nowhere := storePath("mine"), storePath("up"), storePath("nowhere")
	e.stored(mine, narstoretest.Make(narstoretest.NAR(1024, 1)), e.main.ID)
	answer := wire.CachedPath{Path: up, Cached: true, URL: wire.Some("http://up.example/nar/x.nar.xz"),
		NarSize: wire.Some(uint64(100)), NarHash: wire.Some("sha256:x"), Signatures: wire.Some([]string{"up-1:sig"})}
	fake := &fakeUpstream{path: up, answer: answer}
	s, rec := e.session(func(c *Config) { c.Upstream = fake })
	ask := func(p string, mode wire.QueryMode, external bool) wire.ServerMessage {
		handle(t, s, &wire.CacheQuery{JobID: "build:1", QueryID: p + mode.String(), Paths: []string{p}, Mode: mode, External: external})
		return rec.next(t)
	}
	if got := ask(up, wire.QueryModePull, true).(*wire.CacheStatus); !cmp.Equal(got.Cached, []wire.CachedPath{answer}) {
		t.Errorf("Pull external of an upstream path = %+v", got.Cached)
	}
	if got := ask(up, wire.QueryModeNormal, true).(*wire.CacheStatus); !cmp.Equal(got.Cached, []wire.CachedPath{{Path: up, Cached: true}}) {
		t.Errorf("Normal external of an upstream path = %+v", got.Cached)
	}
	if got := ask(nowhere, wire.QueryModePull, true).(*wire.CacheStatus); !cmp.Equal(got.Cached, []wire.CachedPath{{Path: nowhere}}) {
		t.Errorf("Pull external of a path nobody has = %+v", got.Cached)
	}
	asked := len(fake.asked)
	if got := ask(mine, wire.QueryModePull, true).(*wire.CacheStatus); len(got.Cached) != 1 || !got.Cached[0].Cached || got.Cached[0].URL.Valid {
		t.Errorf("Pull external of a cached path = %+v", got.Cached)
	}
	if got := ask(up, wire.QueryModePull, false).(*wire.CacheStatus); !cmp.Equal(got.Cached, []wire.CachedPath{{Path: up}}) {
		t.Errorf("Pull (not external) of an upstream path = %+v", got.Cached)
	}
	if len(fake.asked) != asked {
		t.Errorf("the upstreams were consulted for a cached path or a query that is not external")
	}
	if len(fake.asked) == 0 || !cmp.Equal(fake.asked[0], []string{e.main.ID}) {
		t.Errorf("upstreams asked for caches %v, want the session's", fake.asked)
	}
	if got := e.counters.UpstreamHits.Load(); got != 2 {
		t.Errorf("upstream hits = %d, want 2", got)
	}
	fake.err = errors.New("db down")
	if _, ok := ask(up, wire.QueryModePull, true).(*wire.CacheError); !ok {
		t.Error("a failure to read the upstreams was not a CacheError")
	}
}
