package storetest

import (
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cachedPath is a fully stored path's metadata.
func cachedPath(name string) store.CachedPath {
	return store.CachedPath{StorePath: storePath(name), NarHash: "sha256:" + name, NarSize: 1000,
		FileHash: "sha256:file-" + name, FileSize: 400, References: []string{path.Base(storePath(name + "-dep"))},
		Deriver: drvPath(name), CA: ""}
}

var cacheTests = []test{
	{"PathWithoutFileHashIsNotCached/7.3", func(t *testing.T, e *env) {
		pending := cachedPath("a")
		pending.FileHash, pending.FileSize = "", 0
		check(t, e.s.PutCachedPath(e.ctx, pending, []string{e.cache.ID}))
		if got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a")})); len(got) != 0 {
			t.Fatalf("a pending row answers cached: %+v", got)
		}
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		check(t, e.s.PutCachedPath(e.ctx, pending, nil)) // a late pending put never forgets stored bytes
		got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a")}))
		want := cachedPath("a")
		want.StoreHash, _ = store.StoreHash(want.StorePath)
		want.CreatedAt = e.clock.Now()
		if diff := cmp.Diff(map[string]store.CachedPath{storePath("a"): want}, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("lookup (-want +got):\n%s", diff)
		}
	}},
	{"PathsAreVisibleOnlyThroughTheirCaches/7.2", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("b"), []string{other.ID}))
		paths := []string{storePath("a"), storePath("b"), storePath("c")}
		cases := []struct {
			caches []string
			want   []string
		}{
			{[]string{e.cache.ID}, []string{storePath("a")}},
			{[]string{other.ID}, []string{storePath("b")}},
			{[]string{e.cache.ID, other.ID}, []string{storePath("a"), storePath("b")}},
			{nil, nil},
		}
		for _, c := range cases {
			var got []string
			for p := range must(e.s.LookupCachedPaths(e.ctx, c.caches, paths)) {
				got = append(got, p)
			}
			if diff := cmp.Diff(sorted(c.want...), sorted(got...)); diff != "" {
				t.Errorf("caches %v (-want +got):\n%s", c.caches, diff)
			}
		}
		ref := path.Base(storePath("a")) // the hash-name reference form
		if got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{ref})); len(got) != 1 {
			t.Errorf("reference form %s not found", ref)
		}
	}},
	{"ListCachedPathsShowsOneCacheNewestFirst/9", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		e.clock.Advance(time.Second)
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("b"), []string{e.cache.ID, other.ID}))
		pending := cachedPath("c")
		pending.FileHash, pending.FileSize = "", 0
		check(t, e.s.PutCachedPath(e.ctx, pending, []string{e.cache.ID}))
		names := func(ps []store.CachedPath) (out []string) {
			for _, p := range ps {
				out = append(out, p.StorePath)
			}
			return out
		}
		if got := names(must(e.s.ListCachedPaths(e.ctx, e.cache.ID, 0))); !cmp.Equal(got, []string{storePath("b"), storePath("a")}) {
			t.Errorf("cache paths %v, want b then a (the pending c hidden)", got)
		}
		if got := names(must(e.s.ListCachedPaths(e.ctx, other.ID, 0))); !cmp.Equal(got, []string{storePath("b")}) {
			t.Errorf("other cache paths %v, want b", got)
		}
		if got := must(e.s.ListCachedPaths(e.ctx, e.cache.ID, 1)); len(got) != 1 || got[0].NarSize != 1000 {
			t.Errorf("limit 1: %+v", got)
		}
	}},
	{"SignaturesArePerCache/9", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID, other.ID}))
		hash, _ := store.StoreHash(storePath("a"))
		check(t, e.s.SignCachedPath(e.ctx, hash, e.cache.ID, "main-1:c2ln"))
		wantErr(t, e.s.SignCachedPath(e.ctx, "00000000000000000000000000000000", e.cache.ID, "x"), store.ErrNotFound)
		got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID, other.ID}, []string{storePath("a")}))[storePath("a")]
		if diff := cmp.Diff([]store.Signature{{CacheID: e.cache.ID, Signature: "main-1:c2ln"}}, got.Signatures); diff != "" {
			t.Errorf("signatures (-want +got):\n%s", diff)
		}
		if sigs := must(e.s.LookupCachedPaths(e.ctx, []string{other.ID}, []string{storePath("a")}))[storePath("a")].Signatures; len(sigs) != 0 {
			t.Errorf("other cache sees signatures %v", sigs)
		}
	}},
	{"DemoteAndFetchStamps/7.4", func(t *testing.T, e *env) {
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		hash, _ := store.StoreHash(storePath("a"))
		e.clock.Advance(time.Hour)
		check(t, e.s.MarkFetched(e.ctx, hash))
		got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a")}))[storePath("a")]
		if !got.LastFetchedAt.Equal(e.clock.Now()) {
			t.Errorf("last fetched %v, want %v", got.LastFetchedAt, e.clock.Now())
		}
		check(t, e.s.DemoteCachedPath(e.ctx, hash))
		check(t, e.s.DemoteCachedPath(e.ctx, hash))
		if got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a")})); len(got) != 0 {
			t.Errorf("demoted path still cached")
		}
	}},
	{"QueriesAreBounded/7.2", func(t *testing.T, e *env) {
		paths := make([]string, 1001)
		for i := range paths {
			paths[i] = storePath(fmt.Sprint(i))
		}
		_, err := e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, paths)
		wantErr(t, err, store.ErrInvalid)
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("7"), []string{e.cache.ID}))
		got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, paths[:1000]))
		if len(got) != 1 {
			t.Errorf("1000-path query found %d", len(got))
		}
		bad := cachedPath("x")
		bad.StorePath = "/nix/store/short-x"
		wantErr(t, e.s.PutCachedPath(e.ctx, bad, nil), store.ErrInvalid)
	}},
}
