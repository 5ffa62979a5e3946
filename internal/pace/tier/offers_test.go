package tier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-node §4 rule 3: a slow upstream never slows a local STORE. With the one worker held
// inside an upstream exchange and the queue full, a STORE is still answered, and its offer
// dropped and counted.
func TestSlowUpstreamNeverBlocksALocalStore(t *testing.T) {
	up := newFakeUpstream()
	hold := make(chan struct{})
	up.hold, up.entered = hold, make(chan struct{}, 8)
	tr := newTierWith(t, Config{UpstreamConns: 1, OfferQueue: 1}, up)
	defer close(hold) // before the tier's cleanup closes it

	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("held", "", "", v)), wire.StatusOk)
	receive(t, up.entered, "the worker inside the upstream") // and held there
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("queued", "", "", v)), wire.StatusOk)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("dropped", "", "", v)), wire.StatusOk)
	if s := tr.Snapshot(); s.UpstreamStoreFailures != 1 || s.UpstreamStores != 0 {
		t.Fatalf("counters %+v", s)
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("dropped")), wire.StatusOk)
}

// The queue is bounded in bytes too, but one value larger than the bound is still taken when
// nothing else waits.
func TestOfferQueueIsBoundedInBytes(t *testing.T) {
	up := newFakeUpstream()
	hold := make(chan struct{})
	up.hold, up.entered = hold, make(chan struct{}, 8)
	big := compileValue(t, string(make([]byte, 4096)))
	tr := newTierWith(t, Config{UpstreamConns: 1, OfferQueueBytes: 1024}, up)
	defer close(hold)

	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("held", "", "", big)), wire.StatusOk)
	receive(t, up.entered, "the worker inside the upstream")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("alone", "", "", big)), wire.StatusOk)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("over", "", "", compileValue(t, "small"))), wire.StatusOk)
	if s := tr.Snapshot(); s.UpstreamStoreFailures != 1 {
		t.Fatalf("counters %+v: the offer beyond the byte bound must be dropped", s)
	}
}

// Close gives queued offers until its context ends, then abandons them without hanging on a
// stalled upstream.
func TestCloseAbandonsOffersToAStalledUpstream(t *testing.T) {
	px := startProxy(t, "", stall)
	tr, err := New(Config{MaxMemory: 1 << 20, HostAddrs: noHostAddrs, Upstream: px.addr(), UpstreamConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := compileValue(t, "object")
	for _, k := range []string{"a", "b", "c"} {
		expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq(k, "", "", v)), wire.StatusOk)
	}
	eventually(t, "the first offer in flight", func() bool { return px.connections() == 1 })
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	if err := tr.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want the abandoned offers reported", err)
	}
	if s := tr.Snapshot(); s.UpstreamStoreFailures != 3 || s.UpstreamStores != 0 {
		t.Fatalf("counters %+v: every abandoned offer is a failure", s)
	}
	if px.connections() != 1 {
		t.Fatalf("%d connections: abandoned offers must not dial", px.connections())
	}
}

func TestStoresAfterCloseAreNotOffered(t *testing.T) {
	up := newFakeUpstream()
	tr, err := open(Config{MaxMemory: 1 << 20, HostAddrs: noHostAddrs, Upstream: "fake.invalid:1"}, up)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(bg); err != nil {
		t.Fatal(err)
	}
	if tr.offers.enqueue(offer{key: []byte("k"), value: []byte{1}}) {
		t.Fatal("an offer was taken after Close")
	}
}
