package tier

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-node §4 rule 1: a local hit answers and never consults the upstream.
func TestLocalHitNeverAsksTheUpstream(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	tr := newTier(t, Config{Upstream: srv.Addr().String()})
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)), wire.StatusOk)
	eventually(t, "the store offered upstream", func() bool { return tr.Snapshot().UpstreamStores == 1 })

	for range 5 {
		got := expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk)
		if !bytes.Equal(got, v) {
			t.Fatalf("local hit answered %q", got)
		}
	}
	if n := kvFetches(t, srv); n != 0 {
		t.Fatalf("the upstream answered %v FETCHes; a local hit must never ask", n)
	}
	if s := tr.Snapshot(); s.Hits != 5 || s.UpstreamHits != 0 || s.Misses != 0 {
		t.Fatalf("counters %+v", s)
	}
}

// pace-node §4 rule 2: a local miss reads through, fills the local tier and answers; the
// second FETCH is served locally even with the upstream gone.
func TestLocalMissReadsThroughAndFills(t *testing.T) {
	srv, stopKV := startKV(t, kv.Config{})
	v := compileValue(t, "from upstream")
	if err := kvclient.Store(bg, kvOpts(srv, ""), "k", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	tr := newTier(t, Config{Upstream: srv.Addr().String()})

	if got := expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk); !bytes.Equal(got, v) {
		t.Fatalf("read-through answered %q", got)
	}
	if n := kvFetches(t, srv); n != 1 {
		t.Fatalf("upstream FETCHes %v, want 1", n)
	}
	stopKV()
	if got := expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk); !bytes.Equal(got, v) {
		t.Fatalf("second fetch answered %q", got)
	}
	if s := tr.Snapshot(); s.UpstreamHits != 1 || s.Hits != 1 || s.FillFailures != 0 || !s.UpstreamConfigured {
		t.Fatalf("counters %+v", s)
	}
	if tr.UpstreamDown() {
		t.Fatal("the second fetch consulted the stopped upstream")
	}
}

func TestUpstreamMissIsAMiss(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	tr := newTier(t, Config{Upstream: srv.Addr().String()})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("absent")), wire.StatusMiss)
	if s := tr.Snapshot(); s.Misses != 1 || s.UpstreamHits != 0 {
		t.Fatalf("counters %+v", s)
	}
	if tr.UpstreamDown() {
		t.Fatal("a miss is an answer: the upstream is up")
	}
}

// pace-node §4 rule 3: the store lands locally at once and reaches the upstream in the
// background.
func TestStoreReachesTheUpstream(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	tr := newTier(t, Config{Upstream: srv.Addr().String()})
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)), wire.StatusOk)
	var got []byte
	eventually(t, "the value at the upstream", func() bool {
		var hit bool
		got, hit, _ = kvclient.Fetch(bg, kvOpts(srv, ""), "k")
		return hit
	})
	if !bytes.Equal(got, v) {
		t.Fatalf("upstream holds %q", got)
	}
	eventually(t, "the offer counted", func() bool { return tr.Snapshot().UpstreamStores == 1 })
}

// pace-node §4 rule 4: an unreachable upstream is a miss, never an error, and a STORE still
// succeeds locally.
func TestDeadUpstreamIsAMissAndStoresStillSucceed(t *testing.T) {
	tr := newTier(t, Config{Upstream: deadAddr(t)})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if !tr.UpstreamDown() {
		t.Fatal("a refused connection must open the down window")
	}
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)), wire.StatusOk)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk)
	eventually(t, "the skipped offer counted", func() bool { return tr.Snapshot().UpstreamStoreFailures == 1 })
	if s := tr.Snapshot(); s.Misses != 1 || s.Hits != 1 || s.StoreFailures != 0 || s.UpstreamStores != 0 {
		t.Fatalf("counters %+v", s)
	}
}

// deadAddr is a loopback port nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// pace-node §4 rule 4: the 10 s window. Inside it nothing reaches the upstream; the first
// operation after it retries; an answer ends it.
func TestDownWindowHoldsTenSecondsThenRetries(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	v := compileValue(t, "object")
	if err := kvclient.Store(bg, kvOpts(srv, ""), "k", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, srv.Addr().String(), drop)
	clock := newFakeClock()
	tr := newTier(t, Config{Upstream: px.addr(), Now: clock.Now})

	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if px.connections() != 1 || !tr.UpstreamDown() {
		t.Fatalf("first fetch: %d connections, down %v", px.connections(), tr.UpstreamDown())
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("other", "", "", v)), wire.StatusOk)
	eventually(t, "the skipped store counted", func() bool { return tr.Snapshot().UpstreamStoreFailures == 1 })
	clock.Advance(DefaultDownWindow - time.Millisecond)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if n := px.connections(); n != 1 {
		t.Fatalf("%d connections inside the window, want 1", n)
	}

	clock.Advance(time.Millisecond)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if n := px.connections(); n != 2 || !tr.UpstreamDown() {
		t.Fatalf("after the window: %d connections (want the one retry), down %v", n, tr.UpstreamDown())
	}

	px.setMode(forward)
	clock.Advance(DefaultDownWindow)
	if got := expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk); !bytes.Equal(got, v) {
		t.Fatalf("after recovery: %q", got)
	}
	if tr.UpstreamDown() {
		t.Fatal("an answer must end the window")
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("absent")), wire.StatusMiss)
	if n := kvFetches(t, srv); n != 2 {
		t.Fatalf("upstream answered %v FETCHes after recovery, want 2", n)
	}
}

// An upstream that accepts and never answers is down once the operation timeout passes.
func TestStalledUpstreamIsRememberedDown(t *testing.T) {
	px := startProxy(t, "", stall)
	tr := newTier(t, Config{Upstream: px.addr(), UpstreamTimeout: 50 * time.Millisecond})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if !tr.UpstreamDown() {
		t.Fatal("a stall past the timeout must open the down window")
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if n := px.connections(); n != 1 {
		t.Fatalf("%d connections, want 1: the second fetch must not wait on the stalled upstream", n)
	}
}

// A pooled connection the upstream closed while idle is replaced without declaring the
// upstream down, and a healthy connection is reused rather than redialled.
func TestPooledConnectionsAreReusedAndReplacedWhenClosed(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	px := startProxy(t, srv.Addr().String(), forward)
	tr := newTier(t, Config{Upstream: px.addr()})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("a")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("b")), wire.StatusMiss)
	if n := px.connections(); n != 1 {
		t.Fatalf("%d connections for two sequential fetches, want 1 (pooled)", n)
	}
	px.cutAll()
	v := compileValue(t, "object")
	if err := kvclient.Store(bg, kvOpts(srv, ""), "c", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("c")), wire.StatusOk)
	if tr.UpstreamDown() || px.connections() != 2 {
		t.Fatalf("after the cut: down %v, %d connections", tr.UpstreamDown(), px.connections())
	}
}

// pace-node §4 rule 5: the upstream password is presented, so a pace-kv with --requirepass
// takes the tier's stores and answers its read-throughs.
func TestUpstreamPasswordIsPresented(t *testing.T) {
	srv, _ := startKV(t, kv.Config{Password: "s3cret"})
	tr := newTier(t, Config{Upstream: srv.Addr().String(), UpstreamPassword: "s3cret"})
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("mine", "", "", v)), wire.StatusOk)
	eventually(t, "the store at the upstream", func() bool {
		_, hit, _ := kvclient.Fetch(bg, kvOpts(srv, "s3cret"), "mine")
		return hit
	})
	if err := kvclient.Store(bg, kvOpts(srv, "s3cret"), "theirs", kvclient.StoreArgs{}, v); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("theirs")), wire.StatusOk)
	if s := tr.Snapshot(); s.UpstreamHits != 1 || s.UpstreamStores != 1 || s.UpstreamStoreFailures != 0 {
		t.Fatalf("counters %+v", s)
	}
	if n := kvMetric(t, srv, "pace_cache_credentials_rejected_total"); n != 0 {
		t.Fatalf("%v credentials rejected", n)
	}
}

// A refusing upstream (here: a wrong password) is a miss, but it answered, so it is not down.
func TestRefusingUpstreamIsAMissButNotDown(t *testing.T) {
	srv, _ := startKV(t, kv.Config{Password: "s3cret"})
	tr := newTier(t, Config{Upstream: srv.Addr().String(), UpstreamPassword: "wrong"})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	if tr.UpstreamDown() {
		t.Fatal("a refusal is an answer: the upstream is up")
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", compileValue(t, "o"))), wire.StatusOk)
	eventually(t, "the refused offer counted", func() bool { return tr.Snapshot().UpstreamStoreFailures == 1 })
	if n := kvMetric(t, srv, "pace_cache_credentials_rejected_total"); n != 2 {
		t.Fatalf("%v credentials rejected, want 2 (one per connection: a refused one is not reused)", n)
	}
}

// CACHE-DROP removes from the local tier only and is never forwarded.
func TestCacheDropIsLocalOnly(t *testing.T) {
	srv, _ := startKV(t, kv.Config{})
	tr := newTier(t, Config{Upstream: srv.Addr().String()})
	v := compileValue(t, "object")
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)), wire.StatusOk)
	eventually(t, "the offer", func() bool { return tr.Snapshot().UpstreamStores == 1 })

	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, dropReq("k")), wire.StatusOk)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, dropReq("k")), wire.StatusMiss)
	if _, hit, err := kvclient.Fetch(bg, kvOpts(srv, ""), "k"); !hit || err != nil {
		t.Fatalf("the upstream lost the value: hit %v err %v", hit, err)
	}
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk)
	if s := tr.Snapshot(); s.UpstreamHits != 1 || s.Hits != 0 {
		t.Fatalf("after the drop the fetch must read through: %+v", s)
	}
}

func TestWithoutUpstreamAMissIsAMiss(t *testing.T) {
	tr := newTier(t, Config{})
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusMiss)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", compileValue(t, "o"))), wire.StatusOk)
	expectStatus(t, tr.ServeFrom(bg, loopbackPeer, fetchReq("k")), wire.StatusOk)
	if s := tr.Snapshot(); s.UpstreamConfigured || s.Misses != 1 || s.Hits != 1 || s.UpstreamStoreFailures != 0 {
		t.Fatalf("counters %+v", s)
	}
}
