package peerlink

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
)

// scenario is one random handshake against v1: who dials claiming which
// id, whom it means, and what each end's roster says.
type scenario struct {
	claim          string // the id the dialler proves
	forged         bool   // it signs with a key other than the one recorded for claim
	diallerRevoked bool   // the acceptor's roster revokes claim's key
	target         string
	acceptorKnown  bool // the dialler's roster records v1
	acceptorForged bool // the acceptor signs with a key other than v1's
	acceptorGone   bool // the dialler's roster forgot v1
}

var keys = map[string]Signer{"v1": v1Key, "v2": v2Key, "v3": v3Key, "l1": l1Key, "x9": strangerKey}

func drawScenario(rt *rapid.T) scenario {
	return scenario{
		claim:          rapid.SampledFrom([]string{"v1", "v2", "l1", "x9"}).Draw(rt, "claim"),
		forged:         rapid.Bool().Draw(rt, "forged"),
		diallerRevoked: rapid.Bool().Draw(rt, "diallerRevoked"),
		target:         rapid.SampledFrom([]string{"v1", "v2", "v3"}).Draw(rt, "target"),
		acceptorKnown:  rapid.Bool().Draw(rt, "acceptorKnown"),
		acceptorForged: rapid.Bool().Draw(rt, "acceptorForged"),
		acceptorGone:   rapid.Bool().Draw(rt, "acceptorGone"),
	}
}

// build makes both ends of sc.
func (sc scenario) build() (a, d *Member) {
	ar := newRoster()
	if sc.diallerRevoked && sc.claim != "x9" {
		ar.Revoke(keys[sc.claim].Public())
	}
	dr := leasetest.NewRoster("c1").AddLearner(sc.claim, keys[sc.claim].Public())
	if sc.acceptorKnown {
		dr.AddVoter("v1", v1Key.Public())
		if sc.acceptorGone {
			dr.Forget("v1")
		}
	}
	var dkey, akey Signer = keys[sc.claim], v1Key
	if sc.forged {
		dkey = forgingSigner{claims: dkey, signs: v3Key}
	}
	if sc.acceptorForged {
		akey = forgingSigner{claims: akey, signs: v3Key}
	}
	return member("v1", akey, ar, 1), member(sc.claim, dkey, dr, 2)
}

// model is pace-consensus §7.3.3 as a table: what each end must conclude.
func (sc scenario) model() (acceptErr error, outcome Outcome, dialErr error) {
	switch {
	case sc.claim == "x9":
		return ErrUnknownKey, 0, ErrEndedByAcceptor
	case sc.forged:
		return ErrBadProof, 0, ErrEndedByAcceptor
	case sc.claim == "v1":
		acceptErr, outcome = ErrOwnID, OwnID
	case sc.diallerRevoked:
		acceptErr, outcome = ErrDiallerKeyRevoked, Revoked
	case sc.target != "v1":
		acceptErr, outcome = ErrWrongTarget, WrongTarget
	default:
		outcome = Accepted
	}
	// The dialler that claims v1 holds v1's key itself: its roster records
	// it whatever acceptorKnown says.
	switch known := sc.acceptorKnown || sc.claim == "v1"; {
	case !known:
		return acceptErr, outcome, ErrAcceptorKeyUnknown
	case sc.acceptorForged:
		return acceptErr, outcome, ErrAcceptorProof
	case sc.acceptorKnown && sc.acceptorGone:
		return acceptErr, outcome, ErrAcceptorKeyRevoked
	}
	return acceptErr, outcome, acceptErr
}

// Property: every combination of who dials, whom it means and what each
// roster says ends as the model says on both ends, and an accepted link
// carries a message each way.
func TestHandshakeOutcomesFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sc := drawScenario(rt)
		a, d := sc.build()
		r := exchange(t, a, d, sc.target, LearnerToVoter)
		acceptErr, outcome, dialErr := sc.model()
		if !sameErr(r.acceptErr, acceptErr) || r.judgement.Outcome != outcome {
			rt.Fatalf("acceptor: %v %v, model %v %v", r.acceptErr, r.judgement.Outcome, acceptErr, outcome)
		}
		if !sameErr(r.dialErr, dialErr) {
			rt.Fatalf("dialler: %v, model %v", r.dialErr, dialErr)
		}
		if r.dialled == nil {
			return
		}
		up, err := receive(r.judgement.Session, send(t, r.dialled, []byte("up")))
		if err != nil || !bytes.Equal(up, []byte("up")) {
			rt.Fatalf("up: %v", err)
		}
		if _, err := receive(r.dialled, send(t, r.judgement.Session, []byte("down"))); err != nil {
			rt.Fatalf("down: %v", err)
		}
	})
}

// Property: whatever an adversary changes in any of the three handshake
// frames, no link is established unless every frame arrived as sent.
func TestNoTamperedHandshakeEstablishesALink(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := newRoster()
		a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
		ah, _ := a.Accept()
		dh, _ := d.Dial("v1", LearnerToVoter)
		which := rapid.IntRange(0, 2).Draw(rt, "frame")
		mutate := func(i int, b []byte) []byte {
			if i != which {
				return b
			}
			return mutated(rt, b)
		}
		proof, err := dh.Prove(mutate(0, ah.Challenge()))
		if err != nil {
			return
		}
		j, err := ah.Judge(mutate(1, proof))
		if j.Verdict == nil {
			return
		}
		s, derr := dh.Check(mutate(2, j.Verdict))
		if err == nil && derr == nil {
			rt.Fatalf("a link was established from a changed frame %d (acceptor %v, dialler %v)", which, s, j.Session)
		}
	})
}

// mutated is b changed somehow: a flipped byte, cut short or extended.
func mutated(rt *rapid.T, b []byte) []byte {
	c := bytes.Clone(b)
	switch rapid.IntRange(0, 2).Draw(rt, "how") {
	case 0:
		i := rapid.IntRange(0, len(c)-1).Draw(rt, "at")
		c[i] ^= rapid.ByteRange(1, 255).Draw(rt, "xor")
	case 1:
		c = c[:rapid.IntRange(0, len(c)-1).Draw(rt, "cut")]
	default:
		c = append(c, rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(rt, "extra")...)
	}
	return c
}
