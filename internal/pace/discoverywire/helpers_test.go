package discoverywire

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// testKey is a deterministic identity key, so signed seeds are the same on every run.
func testKey(t testing.TB, b byte) *identity.Key {
	t.Helper()
	k, err := identity.NewKey(bytes.NewReader(bytes.Repeat([]byte{b}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sampleSummary() verbs.FleetSummary {
	return verbs.FleetSummary{ClusterID: "c-blue", State: verbs.FleetEstablished, CreatedAt: 1700000000,
		LeaderID: "n1", LeaderNodeEndpoint: "10.0.0.1:6674", NodeID: "n2", RaftEndpoint: "10.0.0.2:6680",
		Members: []string{"n1", "n2"}, MemberTotal: 3, NodeEndpoint: "10.0.0.2:6674", LeaderKey: bytes.Repeat([]byte{7}, 32)}
}

func sampleChallenge() Challenge {
	var c Challenge
	copy(c.Cookie[:], bytes.Repeat([]byte{0xc0}, CookieLen))
	c.ClusterID = "c-red"
	return c
}

// exchange is one genuine beacon, the challenge answering it and the proof answering that.
type exchange struct{ beacon, challenge, proof []byte }

func genuineExchange(t testing.TB) exchange {
	t.Helper()
	s := sampleSummary()
	beacon := AppendBeacon(nil, s)
	challenge, err := AppendChallenge(nil, sampleChallenge(), len(beacon))
	if err != nil {
		t.Fatal(err)
	}
	proof := AppendProof(nil, SignProof(testKey(t, 1), sampleChallenge(), s))
	return exchange{beacon: beacon, challenge: challenge, proof: proof}
}
