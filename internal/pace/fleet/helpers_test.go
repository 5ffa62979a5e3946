package fleet

import (
	"crypto/ed25519"
	"testing"
)

const testCluster = "0123456789abcdef0123456789abcdef"

// testKey returns a deterministic valid public key per index.
func testKey(i byte) ed25519.PublicKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = i
	seed[1] = 0xa5
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}

// mustApply applies cmds in order and fails the test on any refusal.
func mustApply(t interface {
	Helper()
	Fatalf(string, ...any)
}, s *State, cmds ...Command) *State {
	t.Helper()
	for _, c := range cmds {
		next, err := Apply(s, c)
		if err != nil {
			t.Fatalf("apply %#v: %v", c, err)
		}
		s = next
	}
	return s
}

// fixture is a founded cluster: n1 voter (founder), n2 voter, n3 learner,
// n4 learner pending promotion, and "gone" forgotten (its key revoked).
func fixture(t testing.TB) *State {
	t.Helper()
	return mustApply(t, New(),
		Found{ClusterID: testCluster, ID: "n1", RaftEndpoint: "10.0.0.1:6680", NodeEndpoint: "10.0.0.1:6674", Key: testKey(1)},
		Admit{ID: "n2", Seat: Voter, RaftEndpoint: "10.0.0.2:6680", Key: testKey(2)},
		Admit{ID: "n2", Seat: Voter, RaftEndpoint: "10.0.0.2:6680"}, // promotion once caught up
		Admit{ID: "n3", Seat: Learner, RaftEndpoint: "10.0.0.3:6680", Key: testKey(3)},
		Admit{ID: "n4", Seat: Voter, RaftEndpoint: "10.0.0.4:6680", Key: testKey(4)},
		Admit{ID: "gone", Seat: Learner, RaftEndpoint: "10.0.0.9:6680", Key: testKey(9)},
		Forget{ID: "gone"},
	)
}
