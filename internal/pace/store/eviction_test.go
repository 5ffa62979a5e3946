package store_test

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// watchBudget samples Stats until stopped, failing the test if bytes used plus bytes reserved
// ever exceed the disk budget or the memory tier exceeds its own. stop returns the sample count.
func watchBudget(t *testing.T, s *store.Store, budget int64) (stop func() int) {
	var done atomic.Bool
	var violation atomic.Value
	samples := make(chan int)
	go func() {
		n := 0
		for ; !done.Load(); n++ {
			st := s.Stats()
			if st.Disk.Bytes+st.Reserved > budget || st.Memory.Bytes > st.Memory.Limit {
				violation.Store(fmt.Sprintf("used %d + reserved %d > budget %d (memory %d/%d)", st.Disk.Bytes, st.Reserved, budget, st.Memory.Bytes, st.Memory.Limit))
			}
		}
		samples <- n
	}()
	return func() int {
		done.Store(true)
		n := <-samples
		if msg := violation.Load(); msg != nil {
			t.Fatal(msg)
		}
		return n
	}
}

func TestEvictionKeepsTheBudgetUnder32ConcurrentWriters(t *testing.T) {
	const budget = 1 << 20
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxDisk: budget, MaxMemory: 256 << 10, Sync: store.SyncNever})

	stop := watchBudget(t, s, budget)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := range 40 {
				key := fmt.Sprintf("writer-%d-%d", w, i)
				if err := s.Put([]byte(key), valueFor(key, sizeFor(key, 8<<10, 64<<10))); err != nil {
					t.Errorf("Put(%s): %v", key, err)
				}
			}
		})
	}
	wg.Wait()
	samples := stop()

	st := s.Stats()
	blobs, onDisk, temps := walkStore(t, dir)
	if st.Disk.Bytes > budget || st.Reserved != 0 || len(temps) != 0 {
		t.Fatalf("at the end: used %d (budget %d), reserved %d, %d temp files", st.Disk.Bytes, budget, st.Reserved, len(temps))
	}
	if onDisk != st.Disk.Bytes || int64(blobs) != st.Disk.Items {
		t.Fatalf("files on disk: %d blobs, %d bytes; index: %d items, %d bytes", blobs, onDisk, st.Disk.Items, st.Disk.Bytes)
	}
	if st.Disk.Evictions == 0 {
		t.Fatal("no eviction happened: the test did not exercise the budget")
	}
	t.Logf("%d samples, %d evictions, %d blobs kept", samples, st.Disk.Evictions, blobs)
}

func TestLRUKeepsRecentlyReadValues(t *testing.T) {
	dir := t.TempDir()
	v := make([]byte, 100)
	s := openStore(t, store.Options{Dir: dir, MaxDisk: 3 * blobSize([]byte("a"), v)})
	for _, k := range []string{"a", "b", "c"} {
		mustPut(t, s, k, v)
	}
	mustGet(t, s, "a", v)
	mustPut(t, s, "d", v) // evicts b, the least recently used
	mustMiss(t, s, "b")
	for _, k := range []string{"a", "c", "d"} {
		mustGet(t, s, k, v)
	}
	if fileExists(blobPath(dir, []byte("b"))) {
		t.Fatal("the evicted blob is still on disk")
	}
	if st := s.Stats(); st.Disk.Evictions != 1 {
		t.Fatalf("%d evictions, want 1", st.Disk.Evictions)
	}
}

func TestMemoryHitsKeepValuesInTheDiskTier(t *testing.T) {
	dir := t.TempDir()
	v := make([]byte, 100)
	s := openStore(t, store.Options{Dir: dir, MaxDisk: 3 * blobSize([]byte("a"), v), MaxMemory: 1 << 20})
	for _, k := range []string{"a", "b", "c"} {
		mustPut(t, s, k, v)
	}
	mustGet(t, s, "a", v) // a memory hit
	mustPut(t, s, "d", v)
	if !fileExists(blobPath(dir, []byte("a"))) || fileExists(blobPath(dir, []byte("b"))) {
		t.Fatal("the disk tier evicted a value hot in memory instead of the least recently used one")
	}
}

func TestReopenRebuildsLRUOrderFromModificationTimes(t *testing.T) {
	dir := t.TempDir()
	v := make([]byte, 100)
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old", "mid", "new"} {
		mustPut(t, s, k, v)
	}
	_ = s.Close()
	now := time.Now()
	for i, k := range []string{"old", "mid", "new"} {
		at := now.Add(time.Duration(i-3) * time.Hour)
		if err := os.Chtimes(blobPath(dir, []byte(k)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// A lower budget than last run: Open evicts the oldest down to it.
	s = openStore(t, store.Options{Dir: dir, MaxDisk: 2 * blobSize([]byte("mid"), v)})
	mustMiss(t, s, "old")
	mustPut(t, s, "newest", v[:97]) // same blob size as the others; evicts mid, the older survivor
	mustMiss(t, s, "mid")
	mustGet(t, s, "new", v)
	mustGet(t, s, "newest", v[:97])
	if st := s.Stats(); st.Disk.Evictions != 2 || st.Disk.Bytes > st.Disk.Limit {
		t.Fatalf("after reopen with a lower budget: %+v", st.Disk)
	}
}
