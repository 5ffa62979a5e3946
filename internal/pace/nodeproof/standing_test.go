package nodeproof

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// REGISTER-like verbs on an unproven connection: the node answers
// node-identity-required, loopback included.
func TestUnprovenConnectionIsNodeIdentityRequired(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	_, err := s.Proven()
	if r, ok := RefusalFor(err); !ok || r.Code != wire.CodeNodeIdentityRequired {
		t.Fatalf("unproven: %v", err)
	}
	// A refused proof leaves the connection unproven.
	c := &Client{ID: "stranger", Key: strangerKey, Random: seededRandom(9)}
	h, answer := challenge(t, s, c)
	_, body := proofBody(t, h, answer)
	if _, _, err := prove(t, s, body); !errors.Is(err, ErrKeyUnknown) {
		t.Fatal(err)
	}
	if _, err := s.Proven(); !errors.Is(err, ErrNotProven) {
		t.Fatalf("after a refused proof: %v", err)
	}
}

// pace-consensus §7.6: the roster is asked on every message, so a key revoked
// after the proof stops admitting at the connection's next request.
func TestProvenRechecksTheRosterOnEveryRequest(t *testing.T) {
	w := newWorld()
	p := handshake(t, w, w.client("n2", nodeKey))
	if peer, err := p.session.Proven(); err != nil || peer.ID != "n2" {
		t.Fatalf("proven: %v %v", peer, err)
	}
	if p.session.PresentedRevokedKey() {
		t.Fatal("live key reads as revoked")
	}
	w.roster.Forget("n2")
	_, err := p.session.Proven()
	if r, _ := RefusalFor(err); !errors.Is(err, ErrKeyRevoked) || r.Code != wire.CodeNodeKeyRevoked {
		t.Fatalf("after forget: %v", err)
	}
	if !p.session.PresentedRevokedKey() {
		t.Fatal("revoked key not marked")
	}
}

// A key swapped under the same id (a roster that records another key for
// the proven id) stops admitting too.
func TestProvenStopsWhenTheRosterRecordsAnotherKey(t *testing.T) {
	w := newWorld()
	p := handshake(t, w, w.client("n2", nodeKey))
	w.roster.AddLearner("n2", strangerKey.Public())
	if _, err := p.session.Proven(); !errors.Is(err, ErrKeyUnknown) {
		t.Fatalf("after the key changed: %v", err)
	}
}

// A connection that presented a revoked key stays marked: it cannot clear
// the mark by proving again with another key.
func TestRevokedMarkOutlastsALaterChallenge(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	h, answer := challenge(t, s, &Client{ID: "n3", Key: revokedKey, Random: seededRandom(10)})
	_, body := proofBody(t, h, answer)
	if _, _, err := prove(t, s, body); !errors.Is(err, ErrKeyRevoked) {
		t.Fatal(err)
	}
	h2, err := w.client("n2", nodeKey).Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Challenge(fieldsOf(t, h2.Request().Append(nil), 2)); !errors.Is(err, ErrKeyRevoked) {
		t.Fatalf("challenge after presenting a revoked key: %v", err)
	}
	if !s.PresentedRevokedKey() {
		t.Fatal("mark lost")
	}
	if got := counts(w.counters); !cmp.Equal(got, map[string]uint64{"pace_node_proofs_refused_revoked_key_total": 1}) {
		t.Fatalf("a refused challenge is no proof: counters %v", got)
	}
}

func TestRefusalForUnknownErrors(t *testing.T) {
	if _, ok := RefusalFor(errors.New("something else")); ok {
		t.Fatal("a foreign error was given a code")
	}
	if _, ok := RefusalFor(nil); ok {
		t.Fatal("nil was given a code")
	}
}
