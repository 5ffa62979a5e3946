package storetest

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// upstreamTests cover the caches' upstream substituters (gradient-server §14).
var upstreamTests = []test{
	{"UpstreamsAreKeptPerCache/14", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		a := store.CacheUpstream{CacheID: e.cache.ID, URL: "https://a.example", PublicKey: "a-1:AAAA"}
		b := store.CacheUpstream{CacheID: e.cache.ID, URL: "file:///srv/b", PublicKey: "b-1:BBBB"}
		c := store.CacheUpstream{CacheID: other.ID, URL: "https://a.example", PublicKey: "c-1:CCCC"}
		check(t, e.s.AddCacheUpstream(e.ctx, a))
		e.clock.Advance(time.Second)
		check(t, e.s.AddCacheUpstream(e.ctx, b))
		check(t, e.s.AddCacheUpstream(e.ctx, c))
		got := must(e.s.ListCacheUpstreams(e.ctx, []string{e.cache.ID}))
		if len(got) != 2 || got[0].URL != a.URL || got[1].URL != b.URL || got[1].PublicKey != b.PublicKey {
			t.Fatalf("ListCacheUpstreams(main) = %+v, want a then b", got)
		}
		a.PublicKey = "a-2:DDDD" // adding the same URL again replaces its key
		check(t, e.s.AddCacheUpstream(e.ctx, a))
		got = must(e.s.ListCacheUpstreams(e.ctx, []string{e.cache.ID, other.ID}))
		if len(got) != 3 {
			t.Fatalf("ListCacheUpstreams(both) = %+v, want 3", got)
		}
		for _, u := range got {
			if u.CacheID == e.cache.ID && u.URL == a.URL && u.PublicKey != "a-2:DDDD" {
				t.Errorf("key of a after re-adding = %q", u.PublicKey)
			}
		}
		check(t, e.s.RemoveCacheUpstream(e.ctx, e.cache.ID, a.URL))
		wantErr(t, e.s.RemoveCacheUpstream(e.ctx, e.cache.ID, a.URL), store.ErrNotFound)
		wantErr(t, e.s.RemoveCacheUpstream(e.ctx, "not-a-uuid", a.URL), store.ErrNotFound)
		if got := must(e.s.ListCacheUpstreams(e.ctx, []string{e.cache.ID})); len(got) != 1 || got[0].URL != b.URL {
			t.Errorf("after removing a: %+v", got)
		}
		if got := must(e.s.ListCacheUpstreams(e.ctx, []string{other.ID})); len(got) != 1 || got[0].PublicKey != c.PublicKey {
			t.Errorf("the other cache's upstream changed: %+v", got)
		}
		wantErr(t, e.s.AddCacheUpstream(e.ctx, store.CacheUpstream{CacheID: workerA, URL: "https://x", PublicKey: "k:AAAA"}), store.ErrNotFound)
		if got := must(e.s.ListCacheUpstreams(e.ctx, []string{"junk"})); len(got) != 0 {
			t.Errorf("ListCacheUpstreams(junk) = %+v", got)
		}
	}},
}
