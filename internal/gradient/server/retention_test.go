package server

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// TestPartialsAndExpiredLeasesAreSweptOnATimer: an upload lease idle past its time is
// reclaimed (its upload told so) and a partial nobody wrote for a lease is deleted, by the
// server's own timer; a fresh partial stays.
func TestPartialsAndExpiredLeasesAreSweptOnATimer(t *testing.T) {
	clock := clocktest.New(time.Now())
	r := newRig(t, Config{Now: clock.Now, Retention: RetentionConfig{SweepEvery: 20 * time.Millisecond}})
	var expired atomic.Bool
	if _, err := r.srv.uploads.Acquire(strings.Repeat("a", 32), 100, func() { expired.Store(true) }); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"stale", "fresh"} {
		st, err := r.srv.cfg.NARs.Stage(key)
		if err == nil {
			err = st.Write(0, []byte("some bytes"))
		}
		if err == nil {
			err = st.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(r.dir, "nar-partial", "stale.part")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stale partial to be swept", func() bool { _, err := os.Stat(stale); return os.IsNotExist(err) })
	if _, err := os.Stat(filepath.Join(r.dir, "nar-partial", "fresh.part")); err != nil {
		t.Fatalf("the fresh partial: %v", err)
	}
	if expired.Load() {
		t.Fatal("a lease expired before its time")
	}
	clock.Advance(301 * time.Second)
	eventually(t, "the idle lease to be reclaimed", expired.Load)
	if large, small, bytes := r.srv.uploads.Usage(); large+small != 0 || bytes != 0 {
		t.Fatalf("admission after the sweep: %d large, %d small, %d bytes", large, small, bytes)
	}
	for _, name := range []string{"gradient_upload_leases_swept_total", "gradient_partial_uploads_swept_total"} {
		eventually(t, name+" to count 1", func() bool { v, _ := seriesValue(scrapeMetrics(t, r.srv), name); return v == 1 })
	}
}

// TestTheDiskCapStartsACollection: with the NAR objects over the cap, the server collects
// by itself, and the path no root keeps goes, row and object.
func TestTheDiskCapStartsACollection(t *testing.T) {
	r := newRig(t, Config{Retention: RetentionConfig{MaxDisk: 1, DiskCheck: 20 * time.Millisecond}})
	obj := narstoretest.Make(narstoretest.NAR(4000, 1))
	path := "/nix/store/" + strings.Repeat("b", 32) + "-orphan"
	hash, _ := store.StoreHash(path)
	st, err := r.srv.cfg.NARs.Stage("orphan")
	if err == nil {
		err = st.Write(0, obj.Compressed)
	}
	if err == nil {
		err = st.Commit(hash, obj.Expect)
	}
	if err != nil {
		t.Fatal(err)
	}
	row := store.CachedPath{StorePath: path, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize}
	if err := r.st.PutCachedPath(ctx, row, nil); err != nil {
		t.Fatal(err)
	}
	r.srv.measureDisk() // the object did not come through an upload, which the estimate counts
	eventually(t, "the cap's collection", func() bool { return r.srv.retained.collections.Load() > 0 })
	if ok, _, _ := r.srv.cfg.NARs.Has(hash); ok {
		t.Fatal("the object outlived the collection")
	}
	if g, err := r.st.RetentionGraph(ctx); err != nil || len(g.Paths) != 0 {
		t.Fatalf("rows after the collection: %+v, %v", g.Paths, err)
	}
	m := scrapeMetrics(t, r.srv)
	if v, _ := seriesValue(m, "gradient_cache_gc_paths_deleted_total"); v != 1 {
		t.Errorf("gradient_cache_gc_paths_deleted_total = %v, want 1", v)
	}
	if v, _ := seriesValue(m, "gradient_cache_gc_bytes_deleted_total"); v != float64(len(obj.Compressed)) {
		t.Errorf("gradient_cache_gc_bytes_deleted_total = %v, want %d", v, len(obj.Compressed))
	}
}
