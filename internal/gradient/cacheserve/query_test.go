package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// faultyPaths wraps the real store with injected failures.
type faultyPaths struct {
	Paths
	lookupErr, putErr error
	block             chan struct{} // when set, lookups wait for it to close
}

func (f *faultyPaths) LookupCachedPaths(ctx context.Context, caches, paths []string) (map[string]store.CachedPath, error) {
	if f.block != nil {
		<-f.block
	}
	if f.lookupErr != nil {
		return nil, f.lookupErr
	}
	return f.Paths.LookupCachedPaths(ctx, caches, paths)
}

func (f *faultyPaths) PutCachedPath(ctx context.Context, p store.CachedPath, caches []string) error {
	if f.putErr != nil {
		return f.putErr
	}
	return f.Paths.PutCachedPath(ctx, p, caches)
}

// gradient-protocol §7.2: Normal lists only cached paths, Pull lists every path with full
// metadata for the cached ones, Push lists every path with cached only; all through the
// session's caches.
func TestCacheQueryModes(t *testing.T) {
	e := newEnv(t)
	obj := narstoretest.Make(narstoretest.NAR(64<<10, 1))
	mine, missing, theirs := storePath("mine"), storePath("missing"), storePath("theirs")
	e.stored(mine, obj, e.main.ID)
	e.stored(theirs, obj, e.other.ID)
	full := wire.CachedPath{
		Path: mine, Cached: true,
		FileSize: wire.Some(uint64(obj.Expect.FileSize)), NarSize: wire.Some(uint64(obj.Expect.NarSize)),
		NarHash: wire.Some(obj.Expect.NarHash.String()), FileHash: wire.Some(obj.Expect.FileHash.String()),
		References: wire.Some([]string{"/nix/store/0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep"}),
		Signatures: wire.Some([]string{}), Deriver: wire.Some("/nix/store/02ka9i0praijlj1j365gbm6gr87vm6w6-x.drv"),
	}
	cases := []struct {
		mode wire.QueryMode
		want []wire.CachedPath
	}{
		{wire.QueryModeNormal, []wire.CachedPath{{Path: mine, Cached: true}}},
		{wire.QueryModePull, []wire.CachedPath{full, {Path: missing}, {Path: theirs}}},
		{wire.QueryModePush, []wire.CachedPath{{Path: mine, Cached: true}, {Path: missing}, {Path: theirs}}},
	}
	s, rec := e.session()
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			id := "q-" + c.mode.String()
			handle(t, s, &wire.CacheQuery{JobID: "build:1", QueryID: id, Paths: []string{mine, missing, theirs}, Mode: c.mode})
			got := next[*wire.CacheStatus](t, rec)
			if diff := cmp.Diff(&wire.CacheStatus{QueryID: id, Cached: c.want}, got); diff != "" {
				t.Errorf("CacheStatus (-want +got):\n%s", diff)
			}
		})
	}
}

// Refusals answered with CacheError at once, never cached:false.
func TestCacheQueryRefusals(t *testing.T) {
	e := newEnv(t)
	many := make([]string, MaxQueryPaths+1)
	for i := range many {
		many[i] = fmt.Sprintf("/nix/store/%032d-p", i)
	}
	cases := []struct {
		name string
		q    wire.CacheQuery
		msg  string
	}{
		{"over 1000 paths", wire.CacheQuery{Paths: many}, "1001 paths in one query, at most 1000"},
		{"external with two paths", wire.CacheQuery{Paths: many[:2], External: true}, "an external query names exactly one path"},
		{"external push", wire.CacheQuery{Paths: many[:1], External: true, Mode: wire.QueryModePush}, "an external query names exactly one path"},
	}
	s, rec := e.session()
	for _, c := range cases {
		c.q.QueryID = c.name
		handle(t, s, &c.q)
		got := next[*wire.CacheError](t, rec)
		if got.QueryID != c.name || !strings.HasPrefix(got.Message, c.msg) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	if got := e.counters.QueryErrTooMany.Load() + e.counters.QueryErrInvalid.Load(); got != 3 {
		t.Errorf("query error counters = %d, want 3", got)
	}
	handle(t, s, &wire.CacheQuery{QueryID: "one", Paths: many[:MaxQueryPaths], Mode: wire.QueryModePush})
	if st := next[*wire.CacheStatus](t, rec); len(st.Cached) != MaxQueryPaths {
		t.Errorf("a 1000-path Push answered %d paths", len(st.Cached))
	}
}

func TestCacheQueryStoreErrorIsCacheError(t *testing.T) {
	e := newEnv(t)
	p := storePath("x")
	e.stored(p, narstoretest.Make(narstoretest.NAR(1000, 1)), e.main.ID)
	s, rec := e.session(func(c *Config) { c.Paths = &faultyPaths{Paths: e.db, lookupErr: errors.New("database is locked")} })
	for _, mode := range []wire.QueryMode{wire.QueryModeNormal, wire.QueryModePull, wire.QueryModePush} {
		handle(t, s, &wire.CacheQuery{QueryID: "q", Paths: []string{p}, Mode: mode})
		if got := next[*wire.CacheError](t, rec); got.QueryID != "q" || strings.Contains(got.Message, "locked") {
			t.Errorf("%s: %+v (the store's error text stays in the log)", mode, got)
		}
	}
	if e.counters.QueryErrStore.Load() != 3 {
		t.Errorf("store error counter = %d", e.counters.QueryErrStore.Load())
	}
}

// A store that never answers still gets the worker a CacheError within the 45 s limit.
func TestCacheQueryTimesOutWithCacheError(t *testing.T) {
	e := newEnv(t)
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		rec := newRecorder()
		s := New(Config{Paths: &faultyPaths{Paths: e.db, block: block}, NARs: e.nars, Send: rec.send,
			Scope: func() ([]string, []string) { return []string{e.main.ID}, nil }, Counters: e.counters})
		start := time.Now()
		handle(t, s, &wire.CacheQuery{QueryID: "slow", Paths: []string{storePath("x")}, Mode: wire.QueryModePull})
		synctest.Wait()
		rec.none(t)
		got, _ := (<-rec.ch).(*wire.CacheError) // fake time: rec.next's own 30 s would fire first
		if waited := time.Since(start); got == nil || got.QueryID != "slow" || waited != DefaultQueryTimeout {
			t.Errorf("%+v after %s, want a CacheError after %s", got, waited, DefaultQueryTimeout)
		}
		close(block)
		s.Close()
	})
	if e.counters.QueryErrTimeout.Load() != 1 {
		t.Errorf("timeout counter = %d", e.counters.QueryErrTimeout.Load())
	}
}

// A row whose object is gone answers uncached and is demoted, so the path is pushed again.
func TestCacheQueryDemotesARowWithoutItsObject(t *testing.T) {
	e := newEnv(t)
	p := storePath("gone")
	e.stored(p, narstoretest.Make(narstoretest.NAR(1000, 1)), e.main.ID)
	hash, _ := store.StoreHash(p)
	check(t, e.nars.Remove(hash))
	s, rec := e.session()
	handle(t, s, &wire.CacheQuery{QueryID: "q", Paths: []string{p}, Mode: wire.QueryModePush})
	if diff := cmp.Diff([]wire.CachedPath{{Path: p}}, next[*wire.CacheStatus](t, rec).Cached); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if _, ok := e.lookup(p, e.main.ID); ok || e.counters.Demoted.Load() != 1 {
		t.Errorf("row kept (demoted counter %d)", e.counters.Demoted.Load())
	}
}

func TestReadOnlySessionRefusesPushAndUploads(t *testing.T) {
	e := newEnv(t)
	p := storePath("pub")
	e.stored(p, narstoretest.Make(narstoretest.NAR(1000, 1)), e.other.ID)
	s, rec := e.session(func(c *Config) {
		c.ReadOnly, c.WorkerID = true, ""
		c.Scope = func() ([]string, []string) { return []string{e.other.ID}, nil }
	})
	refused := []wire.ClientMessage{
		&wire.CacheQuery{QueryID: "q", Paths: []string{p}, Mode: wire.QueryModePush},
		&wire.UploadRequest{RequestID: 1, Object: &wire.UploadObjectNar{StorePath: p}, Size: 10},
		&wire.UploadChunk{RequestID: 1, Data: []byte("x")},
		&wire.UploadFinished{RequestID: 1, Metadata: &wire.NarUploadMetadata{}},
		&wire.UploadCancel{RequestID: 1},
	}
	for _, m := range refused {
		if handled, err := s.Handle(t.Context(), m); !handled || !errors.Is(err, ErrForbidden) {
			t.Errorf("%T: %v, %v; want ErrForbidden", m, handled, err)
		}
	}
	rec.none(t)
	handle(t, s, &wire.CacheQuery{QueryID: "n", Paths: []string{p}})
	if diff := cmp.Diff([]wire.CachedPath{{Path: p, Cached: true}}, next[*wire.CacheStatus](t, rec).Cached); diff != "" {
		t.Errorf("Normal query on the cache session (-want +got):\n%s", diff)
	}
	if handled, err := s.Handle(t.Context(), &wire.RequestJob{}); handled || err != nil {
		t.Errorf("a non-cache message: %v, %v", handled, err)
	}
}
