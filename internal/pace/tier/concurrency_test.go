package tier

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Many callers at once against a real pace-kv upstream (run with -race): every hit is the
// key's own value, every FETCH is counted exactly once, every STORE offered exactly once.
func TestConcurrentCallersAgainstARealUpstream(t *testing.T) {
	const workers, ops, keys = 16, 150, 24
	srv, _ := startKV(t, kv.Config{})
	// The queue holds every store, so none is dropped: dropping is TestSlowUpstreamNeverBlocksALocalStore's.
	tr := newTier(t, Config{Upstream: srv.Addr().String(), MaxMemory: 1 << 20, OfferQueue: workers * ops})
	values := make([][]byte, keys)
	for i := range values {
		values[i] = compileValue(t, fmt.Sprintf("object %d", i))
	}
	var fetches, stores atomic.Uint64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range ops {
				i := rng.IntN(keys)
				randomOp(t, tr, rng, fmt.Sprintf("key-%d", i), values[i], &fetches, &stores)
			}
		})
	}
	wg.Wait()
	s := tr.Snapshot()
	if s.Hits+s.UpstreamHits+s.Misses != fetches.Load() {
		t.Fatalf("%d FETCHes, counted %+v", fetches.Load(), s)
	}
	eventually(t, "every offer accounted for", func() bool {
		s := tr.Snapshot()
		return s.UpstreamStores+s.UpstreamStoreFailures == stores.Load()
	})
	if s := tr.Snapshot(); s.UpstreamStoreFailures != 0 || s.FillFailures != 0 || tr.UpstreamDown() {
		t.Fatalf("a healthy upstream failed: %+v", s)
	}
}

// randomOp sends one STORE, CACHE-DROP or FETCH (twice as likely) of key, whose value is v.
func randomOp(t *testing.T, tr *Tier, rng *rand.Rand, key string, v []byte, fetches, stores *atomic.Uint64) {
	switch rng.IntN(4) {
	case 0:
		stores.Add(1)
		if r := tr.ServeFrom(bg, loopbackPeer, storeReq(key, "", "", v)); r.Status != wire.StatusOk {
			t.Errorf("STORE %s: %s", key, r.Status)
		}
	case 1:
		tr.ServeFrom(bg, loopbackPeer, dropReq(key))
	default:
		fetches.Add(1)
		if r := tr.ServeFrom(bg, loopbackPeer, fetchReq(key)); r.Status == wire.StatusOk && !bytes.Equal(r.Payload, v) {
			t.Errorf("FETCH %s answered another key's value", key)
		}
	}
}
