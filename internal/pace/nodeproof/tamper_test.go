package nodeproof

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Flipping any bit of any byte of the challenge reply fails the client:
// a length prefix breaks the grammar, every other byte the signature.
func TestFlippingAnyByteOfTheChallengeReplyFailsTheClient(t *testing.T) {
	w := newWorld()
	c := w.client("n2", nodeKey)
	_, sample := challenge(t, w.server.NewSession(), c)
	for i := range sample {
		for _, flip := range []byte{0x01, 0x80} {
			h, answer := challenge(t, w.server.NewSession(), c)
			answer[i] ^= flip
			if _, err := h.Prove(answer); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrServerSignature) {
				t.Fatalf("byte %d ^ %#x: %v", i, flip, err)
			}
		}
	}
}

// Flipping any bit of any byte of the proof fails the server, and only as
// malformed or rejected: a tampered proof never reaches the roster.
func TestFlippingAnyByteOfTheProofFailsTheServer(t *testing.T) {
	w := newWorld()
	c := w.client("n2", nodeKey)
	s := w.server.NewSession()
	h, answer := challenge(t, s, c)
	_, sample := proofBody(t, h, answer)
	tried := 0
	for i := range sample {
		for _, flip := range []byte{0x01, 0x80} {
			s := w.server.NewSession()
			h, answer := challenge(t, s, c)
			_, body := proofBody(t, h, answer)
			body[i] ^= flip
			tried++
			fields, err := wire.SplitFields(nil, body, 3)
			if err != nil {
				continue // the frame server answers a broken field list itself
			}
			if _, _, err := s.Prove(fields); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProofRejected) {
				t.Fatalf("byte %d ^ %#x: %v", i, flip, err)
			}
		}
	}
	got := counts(w.counters)
	if got["pace_node_proofs_accepted_total"] != 0 || got["pace_node_proofs_refused_unknown_key_total"] != 0 ||
		got["pace_node_proofs_rejected_total"] == 0 {
		t.Fatalf("after %d tampered proofs: %v", tried, got)
	}
}

// A man in the middle that swaps the client's ephemeral key for its own
// (to learn the session secret) breaks the server's signature as the
// client sees it: the signature covers the challenge as the server got it.
func TestSwappedClientEphemeralFailsTheClient(t *testing.T) {
	w := newWorld()
	h, err := w.client("n2", nodeKey).Begin()
	if err != nil {
		t.Fatal(err)
	}
	req := h.Request()
	mitm, err := NewEphemeral(seededRandom(99))
	if err != nil {
		t.Fatal(err)
	}
	req.Ephemeral = mitm.Public()
	answer, err := w.server.NewSession().Challenge(fieldsOf(t, req.Append(nil), 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Prove(answer); !errors.Is(err, ErrServerSignature) {
		t.Fatalf("swapped ephemeral: %v", err)
	}
}

// A recorded proof replayed on a new connection meets a new challenge and
// fails its signature.
func TestRecordedProofReplayedAgainstANewChallengeFails(t *testing.T) {
	w := newWorld()
	c := w.client("n2", nodeKey)
	s := w.server.NewSession()
	h, answer := challenge(t, s, c)
	_, recorded := proofBody(t, h, answer)
	if _, _, err := prove(t, s, recorded); err != nil {
		t.Fatal(err)
	}
	replay := w.server.NewSession()
	challenge(t, replay, w.client("attacker", strangerKey))
	if _, _, err := prove(t, replay, recorded); !errors.Is(err, ErrProofRejected) {
		t.Fatalf("replayed proof: %v", err)
	}
	if _, err := replay.Proven(); !errors.Is(err, ErrNotProven) {
		t.Fatalf("replay connection standing: %v", err)
	}
}

// pace-wire §1.15.4: a challenge is spent by one proof whatever its outcome.
func TestChallengeIsSpentByOneProofWhateverItsOutcome(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	h, answer := challenge(t, s, w.client("n2", nodeKey))
	_, body := proofBody(t, h, answer)
	bad := bytes.Clone(body)
	bad[len(bad)-1] ^= 1
	if _, _, err := prove(t, s, bad); !errors.Is(err, ErrProofRejected) {
		t.Fatalf("bad proof: %v", err)
	}
	if s.Outstanding() {
		t.Fatal("challenge outstanding after a refused proof")
	}
	if _, _, err := prove(t, s, body); !errors.Is(err, ErrUnchallenged) {
		t.Fatalf("good proof after the challenge was spent: %v", err)
	}
}

// Asking again redraws: a proof for the first challenge no longer counts.
func TestAskingAgainRedrawsTheChallenge(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	c := w.client("n2", nodeKey)
	h1, answer1 := challenge(t, s, c)
	h2, answer2 := challenge(t, s, c)
	if bytes.Equal(answer1, answer2) {
		t.Fatal("second challenge repeats the first")
	}
	_, stale := proofBody(t, h1, answer1)
	if _, _, err := prove(t, s, stale); !errors.Is(err, ErrProofRejected) {
		t.Fatalf("proof of the superseded challenge: %v", err)
	}
	// The refused proof spent the redrawn challenge too.
	_, fresh := proofBody(t, h2, answer2)
	if _, _, err := prove(t, s, fresh); !errors.Is(err, ErrUnchallenged) {
		t.Fatalf("proof after the spend: %v", err)
	}
}

func TestProveWithoutAChallengeIsUnchallenged(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	h, answer := challenge(t, w.server.NewSession(), w.client("n2", nodeKey))
	_, body := proofBody(t, h, answer)
	_, _, err := prove(t, s, body)
	if r, _ := RefusalFor(err); r.Code != wire.CodeNodeProofUnchallenged {
		t.Fatalf("got %v (%v)", r.Code, err)
	}
	if got := counts(w.counters); !cmp.Equal(got, map[string]uint64{"pace_node_proofs_unchallenged_total": 1}) {
		t.Fatalf("counters %v", got)
	}
}

// One proof per connection: after an accepted proof, PROVE-NODE finds no
// challenge and NODE-CHALLENGE is refused.
func TestOneProofPerConnection(t *testing.T) {
	w := newWorld()
	c := w.client("n2", nodeKey)
	p := handshake(t, w, c)
	h, answer := challenge(t, w.server.NewSession(), c)
	_, body := proofBody(t, h, answer)
	if _, _, err := prove(t, p.session, body); !errors.Is(err, ErrUnchallenged) {
		t.Fatalf("second PROVE-NODE: %v", err)
	}
	h2, err := c.Begin()
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.session.Challenge(fieldsOf(t, h2.Request().Append(nil), 2))
	if r, _ := RefusalFor(err); !errors.Is(err, ErrAlreadyProven) || r.Code != wire.CodeNodeProofRejected {
		t.Fatalf("second NODE-CHALLENGE: %v", err)
	}
	if peer, err := p.session.Proven(); err != nil || peer.ID != "n2" {
		t.Fatalf("the first proof stands: %v %v", peer, err)
	}
	want := map[string]uint64{"pace_node_proofs_accepted_total": 1,
		"pace_node_proofs_unchallenged_total": 1, "pace_node_proofs_rejected_total": 1}
	if got := counts(w.counters); !cmp.Equal(got, want) {
		t.Fatalf("counters %v", got)
	}
}

// pace-node §8.3: the signature is checked before the roster, so a forged proof
// is rejected even where the roster would have refused it anyway.
func TestSignatureIsCheckedBeforeTheRoster(t *testing.T) {
	w := newWorld()
	w.roster = newRosterWithoutVoters()
	w.server.Roster = w.roster
	s := w.server.NewSession()
	forger := &Client{ID: "n2", Key: forgingSigner{claims: nodeKey, signs: strangerKey}, Random: seededRandom(3)}
	h, answer := challenge(t, s, forger)
	_, body := proofBody(t, h, answer)
	if _, _, err := prove(t, s, body); !errors.Is(err, ErrProofRejected) {
		t.Fatalf("forged proof on an unapplied roster: %v", err)
	}
}

// A small-order identity key verifies a signature over any message under
// cofactorless Ed25519; both sides refuse it as proving nothing.
func TestSmallOrderKeysProveNothing(t *testing.T) {
	identityPoint := make(ed25519.PublicKey, 32)
	identityPoint[0] = 1
	anySig := make([]byte, 64)
	anySig[0] = 1 // R = identity, S = 0
	if !ed25519.Verify(identityPoint, []byte("anything at all"), anySig) {
		t.Fatal("precondition: the small-order forgery should verify under plain Ed25519")
	}
	w := newWorld()
	w.roster.AddLearner("weak", identityPoint)
	forger := &Client{ID: "weak", Key: fixedSigner{pub: identityPoint, sig: anySig}, Random: seededRandom(4)}
	s := w.server.NewSession()
	h, answer := challenge(t, s, forger)
	_, body := proofBody(t, h, answer)
	if _, _, err := prove(t, s, body); !errors.Is(err, ErrProofRejected) {
		t.Fatalf("server: small-order proof %v", err)
	}
	weakServer := &Server{ID: "s1", Key: fixedSigner{pub: identityPoint, sig: anySig}, Roster: w.roster, Random: seededRandom(5)}
	h2, answer2 := challenge(t, weakServer.NewSession(), w.client("n2", nodeKey))
	if _, err := h2.Prove(answer2); !errors.Is(err, ErrServerSignature) {
		t.Fatalf("client: small-order server key %v", err)
	}
}

// An all-zero (low-order) X25519 key from the client gives no secret.
func TestLowOrderClientEphemeralIsMalformed(t *testing.T) {
	w := newWorld()
	body := wire.AppendField(wire.AppendField(nil, make([]byte, 32)), make([]byte, 32))
	_, err := w.server.NewSession().Challenge(fieldsOf(t, body, 2))
	if !errors.Is(err, ErrMalformed) || !errors.Is(err, ErrLowOrderEphemeral) {
		t.Fatalf("zero ephemeral: %v", err)
	}
}

// forgingSigner claims one key and signs with another.
type forgingSigner struct{ claims, signs Signer }

func (f forgingSigner) Public() ed25519.PublicKey { return f.claims.Public() }
func (f forgingSigner) Sign(label string, fields ...[]byte) []byte {
	return f.signs.Sign(label, fields...)
}

// fixedSigner presents a fixed key and answers every message with one
// signature.
type fixedSigner struct {
	pub ed25519.PublicKey
	sig []byte
}

func (f fixedSigner) Public() ed25519.PublicKey     { return f.pub }
func (f fixedSigner) Sign(string, ...[]byte) []byte { return f.sig }
