package storetest

import (
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// binaryCacheTests cover the reads of the HTTP binary cache: a narinfo names a store hash,
// a NAR URL names the compressed bytes' hash.
var binaryCacheTests = []test{
	{"NarinfoLookupByHashIsScopedToTheCache/7", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		hash := must(store.StoreHash(storePath("a")))
		got := must(e.s.CachedPathByHash(e.ctx, e.cache.ID, hash))
		if got.StorePath != storePath("a") || got.FileHash != "sha256:file-a" || got.NarSize != 1000 {
			t.Fatalf("by hash: %+v", got)
		}
		if _, err := e.s.CachedPathByHash(e.ctx, other.ID, hash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another cache's path: %v, want ErrNotFound", err)
		}
		if _, err := e.s.CachedPathByHash(e.ctx, "not-a-uuid", hash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a malformed cache ID: %v, want ErrNotFound", err)
		}
	}},
	{"PendingPathsAreNeverServed/7.3", func(t *testing.T, e *env) {
		pending := cachedPath("a")
		pending.FileHash, pending.FileSize = "", 0
		check(t, e.s.PutCachedPath(e.ctx, pending, []string{e.cache.ID}))
		if _, err := e.s.CachedPathByHash(e.ctx, e.cache.ID, must(store.StoreHash(storePath("a")))); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pending row by hash: %v, want ErrNotFound", err)
		}
	}},
	{"NarLookupByFileHash/7", func(t *testing.T, e *env) {
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		got := must(e.s.CachedPathByFileHash(e.ctx, e.cache.ID, "sha256:file-a"))
		if got.StorePath != storePath("a") {
			t.Fatalf("by file hash: %+v", got)
		}
		if _, err := e.s.CachedPathByFileHash(e.ctx, e.cache.ID, "sha256:file-b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown file hash: %v, want ErrNotFound", err)
		}
		check(t, e.s.DemoteCachedPath(e.ctx, got.StoreHash))
		if _, err := e.s.CachedPathByFileHash(e.ctx, e.cache.ID, "sha256:file-a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("demoted path: %v, want ErrNotFound", err)
		}
	}},
	{"LookupsCarryOnlyThisCachesSignature/7", func(t *testing.T, e *env) {
		other := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "other"}))
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID, other.ID}))
		hash := must(store.StoreHash(storePath("a")))
		if got := must(e.s.CachedPathByHash(e.ctx, e.cache.ID, hash)); len(got.Signatures) != 0 {
			t.Fatalf("unsigned path has signatures: %+v", got.Signatures)
		}
		check(t, e.s.SignCachedPath(e.ctx, hash, e.cache.ID, "main-1:c2ln"))
		check(t, e.s.SignCachedPath(e.ctx, hash, other.ID, "other-1:c2ln"))
		for _, get := range []func() (store.CachedPath, error){
			func() (store.CachedPath, error) { return e.s.CachedPathByHash(e.ctx, e.cache.ID, hash) },
			func() (store.CachedPath, error) { return e.s.CachedPathByFileHash(e.ctx, e.cache.ID, "sha256:file-a") },
		} {
			got := must(get())
			want := []store.Signature{{CacheID: e.cache.ID, Signature: "main-1:c2ln"}}
			if len(got.Signatures) != 1 || got.Signatures[0] != want[0] {
				t.Errorf("signatures %+v, want %+v", got.Signatures, want)
			}
		}
	}},
}
