package lease

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
)

// Test world: scheduler n1 (a voter of cluster c1) grants a compile at the
// worker that advertises endpointA.
const (
	testCluster = "c1"
	endpointA   = "10.0.0.2:6674"
	endpointB   = "10.0.0.3:6674"
	testFP      = "fp-gcc-13"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	schedulerKey = leasetest.NewSigner("n1")
	workerKey    = leasetest.NewSigner("worker")
	strangerKey  = leasetest.NewSigner("stranger")
)

// fixture is one scenario: the claims a scheduler signs, the key it signs
// with, and what the worker knows. Every field starts out good.
type fixture struct {
	claims   Claims
	signer   Signer
	roster   *leasetest.Roster
	ctx      Context
	preSpend bool
}

func newFixture() *fixture {
	f := &fixture{
		claims: Claims{
			Serial: 7, Endpoint: endpointA, Fingerprint: testFP, Key: "0123456789abcdef0123456789abcdef",
			ExpiresAt: testNow.Add(10 * time.Minute), ClusterID: testCluster, Epoch: 3, SignerID: "n1",
			WorkerKey: workerKey.Public(),
		},
		signer: schedulerKey,
		roster: leasetest.NewRoster(testCluster).AddVoter("n1", schedulerKey.Public()).AddLearner("w1", workerKey.Public()),
	}
	f.ctx = Context{
		Roster: f.roster, LeaderHeardAt: testNow.Add(-time.Minute), Endpoint: endpointA,
		RequestFingerprint: testFP, Serves: func(fp string) bool { return fp == testFP }, Now: testNow,
	}
	return f
}

func (f *fixture) token(t testing.TB) string {
	t.Helper()
	text, err := Issue(f.claims, f.signer)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return text
}

// verify issues the fixture's token and verifies it at a fresh worker.
func (f *fixture) verify(t testing.TB) (Claims, *Refusal) {
	t.Helper()
	return f.verifyText(t, f.token(t))
}

func (f *fixture) verifyText(t testing.TB, text string) (Claims, *Refusal) {
	t.Helper()
	v := NewVerifier(0)
	// Junk cannot be spent: a stacked decode defect leaves nothing to spend.
	if tok, err := Parse(text); f.preSpend && err == nil {
		if err := v.spent.Spend(tok.SpentID(), tok.Claims.ExpiresAt.Add(ClockSlack), f.ctx.Now); err != nil {
			t.Fatalf("pre-spending: %v", err)
		}
	}
	return v.Verify(text, f.ctx)
}
