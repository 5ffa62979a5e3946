package scheduler

import (
	"bytes"
	"errors"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// testSigner issues a token naming the serial and key, remembering claims.
type testSigner struct {
	mu     sync.Mutex
	claims []Claims
	fail   error
}

func (s *testSigner) IssueLease(c Claims) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return "", s.fail
	}
	s.claims = append(s.claims, c)
	return "tok-" + strconv.FormatUint(c.Serial, 10) + "-" + c.Key, nil
}

func (s *testSigner) last() Claims {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims[len(s.claims)-1]
}

// trivialSigner is the benchmark's signer: no bookkeeping.
type trivialSigner struct{}

func (trivialSigner) IssueLease(c Claims) (string, error) { return c.Key, nil }

type fixture struct {
	t      testing.TB
	s      *Scheduler
	clock  *clocktest.Clock
	signer *testSigner
	logs   *bytes.Buffer
}

var params = Params{Epoch: 7, LeaseLifetime: 10 * time.Minute}

func newFixture(t testing.TB) *fixture {
	f := &fixture{t: t, clock: clocktest.New(time.Unix(1_700_000_000, 0)), signer: &testSigner{}, logs: &bytes.Buffer{}}
	s, err := New(Config{ClusterID: "cluster-a", Signer: f.signer, Now: f.clock.Now,
		Logger: slog.New(slog.NewTextHandler(f.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

// caller is a proven node at addr.
func caller(node, addr string) Caller {
	key := make([]byte, verbs.KeyLen)
	copy(key, node)
	return Caller{NodeID: node, Key: key, Addr: netip.MustParseAddr(addr)}
}

// register registers a toolchain for node at its own address, port 6674.
func (f *fixture) register(node, addr, fingerprint string, slots uint32) string {
	f.t.Helper()
	return f.registerReq(caller(node, addr), verbs.RegisterRequest{Fingerprint: fingerprint,
		Endpoint: addr + ":6674", Slots: slots, Codecs: wire.NewCodecList(wire.CodecZstd)})
}

func (f *fixture) registerReq(c Caller, req verbs.RegisterRequest) string {
	f.t.Helper()
	ok, err := f.s.Register(req, c, params)
	if err != nil {
		f.t.Fatalf("register %s: %v", req.Endpoint, err)
	}
	return ok.WorkerID
}

func (f *fixture) heartbeat(node, addr, workerID string, inFlight uint32, load verbs.Load) {
	f.t.Helper()
	if err := f.s.Heartbeat(verbs.HeartbeatRequest{WorkerID: workerID, InFlight: inFlight, Load: load}, caller(node, addr)); err != nil {
		f.t.Fatalf("heartbeat %s: %v", workerID, err)
	}
}

func (f *fixture) lease(fingerprint, key string, exclusions ...string) (verbs.LeaseGrant, error) {
	return f.s.Lease(verbs.LeaseRequest{Fingerprint: fingerprint, Key: key, Exclusions: exclusions}, params)
}

func (f *fixture) mustLease(fingerprint, key string) verbs.LeaseGrant {
	f.t.Helper()
	g, err := f.lease(fingerprint, key)
	if err != nil {
		f.t.Fatalf("lease %s: %v", key, err)
	}
	return g
}

// refusedWith asserts err is a refusal with code.
func refusedWith(t testing.TB, err error, code wire.Code) {
	t.Helper()
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != code {
		t.Fatalf("got %v, want a %s refusal", err, code)
	}
}

// inFlight reads a machine's in-flight figure.
func (f *fixture) inFlight(node string) int {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	m := f.s.machines[node]
	if m == nil {
		return 0
	}
	return m.inFlight()
}

// counter reads one counter by its exported name.
func (f *fixture) counter(name string) uint64 {
	for _, m := range f.s.Counters().Metrics() {
		if m.Name == name {
			return m.Value.Load()
		}
	}
	f.t.Fatalf("no counter %s", name)
	return 0
}
