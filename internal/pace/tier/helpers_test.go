package tier

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var (
	bg           = context.Background()
	loopbackPeer = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	offBoxPeer   = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000} // TEST-NET-1: never this host
)

func newFakeClock() *clocktest.Clock { return clocktest.New(time.Unix(1_700_000_000, 0)) }

// noHostAddrs is a host with loopback only, so tests never depend on the machine's interfaces.
func noHostAddrs() ([]netip.Addr, error) { return nil, nil }

// newTier opens a memory-only tier (unless cfg says otherwise) and closes it when the test ends.
func newTier(t testing.TB, cfg Config) *Tier {
	t.Helper()
	return newTierOpen(t, cfg, nil)
}

func newTierOpen(t testing.TB, cfg Config, up upstream) *Tier {
	t.Helper()
	if !cfg.Enabled() {
		cfg.MaxMemory = 64 << 20
	}
	if cfg.HostAddrs == nil {
		cfg.HostAddrs = noHostAddrs
	}
	tr, err := open(cfg, up)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		if err := tr.Close(ctx); err != nil {
			t.Errorf("closing the tier: %v", err)
		}
	})
	return tr
}

// startKV runs a real pace-kv on loopback; stop ends it early (idempotent).
func startKV(t testing.TB, cfg kv.Config) (srv *kv.Server, stop func()) {
	t.Helper()
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.MaxMemory == 0 && cfg.Storage == "" {
		cfg.MaxMemory = 64 << 20
	}
	srv, err := kv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(bg, 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			<-done
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

func kvOpts(srv *kv.Server, password string) kvclient.Options {
	return kvclient.Options{Addr: srv.Addr().String(), Timeout: 10 * time.Second, Password: password}
}

// kvMetric scrapes one series from pace-kv's /metrics.
func kvMetric(t testing.TB, srv *kv.Server, series string) float64 {
	t.Helper()
	return promexporttest.Value(t, "http://"+srv.MetricsAddr().String()+"/metrics", series)
}

// kvFetches is how many FETCHes pace-kv has answered.
func kvFetches(t testing.TB, srv *kv.Server) float64 {
	return kvMetric(t, srv, "pace_kv_hits_total") + kvMetric(t, srv, "pace_kv_misses_total")
}

func compileValue(t testing.TB, object string, regions ...value.Region) []byte {
	t.Helper()
	b, err := value.Encode(value.Value{Object: []byte(object), Regions: regions})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request builds an admitted request as the frame server hands it over.
func request(op wire.Op, fields ...[]byte) *frameserver.Request {
	info, _ := wire.Lookup(op)
	size := 0
	for _, f := range fields {
		size += wire.FieldPrefixLen + len(f)
	}
	return &frameserver.Request{Header: wire.NewRequestHeader(op, uint32(size)), Info: info, Fields: fields}
}

func fetchReq(key string) *frameserver.Request { return request(wire.OpFetch, []byte(key)) }

func dropReq(key string) *frameserver.Request { return request(wire.OpCacheDrop, []byte(key)) }

func storeReq(key, srcRoot, buildTree string, v []byte) *frameserver.Request {
	return request(wire.OpStore, []byte(key), []byte("default"), []byte(srcRoot), []byte(buildTree), v)
}

// expectStatus checks a reply's status and returns its payload.
func expectStatus(t testing.TB, r frameserver.Reply, want wire.Status) []byte {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %s, want %s (payload %q)", r.Status, want, r.Payload)
	}
	return r.Payload
}

// expectRefusal checks an Error reply's code.
func expectRefusal(t testing.TB, r frameserver.Reply, code wire.Code) wire.Refusal {
	t.Helper()
	expectStatus(t, r, wire.StatusError)
	ref, err := wire.ParseErrorPayload(r.Payload)
	if err != nil || ref.Code != code {
		t.Fatalf("refusal %v (%v), want %s", ref, err, code)
	}
	return ref
}

// eventually polls cond until it holds or ten seconds pass. The pause between polls paces the
// loop; it is not what the test asserts.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// receive waits for one value from ch, failing the test after ten seconds instead of hanging.
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up waiting: %s", what)
	}
	var zero T
	return zero
}
