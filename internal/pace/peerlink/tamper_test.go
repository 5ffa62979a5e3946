package peerlink

import (
	"bytes"
	"errors"
	"testing"
)

// flips are the bit flips tried on every byte.
var flips = []byte{0x01, 0x80}

// isAny reports whether err matches one of targets.
func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// Flipping any bit of the challenge in flight ends the handshake: the
// dialler sees no challenge (header, grammar), or the acceptor finds the
// proof signed over a challenge it never sent. Nothing is accepted.
func TestTamperedChallengeIsRefused(t *testing.T) {
	for i := range len(pristine(t).challenge) {
		for _, flip := range flips {
			r := newRoster()
			a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
			ah, _ := a.Accept()
			dh, _ := d.Dial("v1", LearnerToVoter)
			c := ah.Challenge()
			c[i] ^= flip
			proof, err := dh.Prove(c)
			if err != nil {
				if !errors.Is(err, ErrNoChallenge) {
					t.Fatalf("byte %d ^ %#x: dialler %v", i, flip, err)
				}
				continue
			}
			if j, err := ah.Judge(proof); !errors.Is(err, ErrBadProof) || j.Verdict != nil {
				t.Fatalf("byte %d ^ %#x: acceptor %v", i, flip, err)
			}
		}
	}
}

// Flipping any bit of the proof ends the handshake at the acceptor without
// a verdict: not a proof, no such id, or a signature that fails.
func TestTamperedProofIsRefusedWithoutAVerdict(t *testing.T) {
	for i := range len(pristine(t).proof) {
		for _, flip := range flips {
			r := newRoster()
			a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
			ah, _ := a.Accept()
			dh, _ := d.Dial("v1", LearnerToVoter)
			proof, err := dh.Prove(ah.Challenge())
			if err != nil {
				t.Fatal(err)
			}
			proof[i] ^= flip
			j, err := ah.Judge(proof)
			if !isAny(err, ErrNotAProof, ErrUnknownKey, ErrBadProof) || j.Verdict != nil {
				t.Fatalf("byte %d ^ %#x: %v (verdict %t)", i, flip, err, j.Verdict != nil)
			}
		}
	}
}

// Flipping any bit of the verdict ends the handshake at the dialler before
// it sends anything: the verdict does not verify, or names a member it
// holds no key for.
func TestTamperedVerdictIsRefused(t *testing.T) {
	for i := range len(pristine(t).verdict) {
		for _, flip := range flips {
			r := newRoster()
			a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
			ah, _ := a.Accept()
			dh, _ := d.Dial("v1", LearnerToVoter)
			proof, _ := dh.Prove(ah.Challenge())
			j, err := ah.Judge(proof)
			if err != nil {
				t.Fatal(err)
			}
			j.Verdict[i] ^= flip
			if s, err := dh.Check(j.Verdict); !isAny(err, ErrAcceptorProof, ErrAcceptorKeyUnknown) || s != nil {
				t.Fatalf("byte %d ^ %#x: %v", i, flip, err)
			}
		}
	}
}

// pristine is an untouched handshake of the tamper tests' shape.
func pristine(t *testing.T) run {
	r := newRoster()
	return exchange(t, member("v1", v1Key, r, 1), member("l1", l1Key, r, 2), "v1", LearnerToVoter)
}

// Flipping any bit of a message frame is refused as what that byte makes
// it: another wire (magic), another version or kind, a length over the
// cap or out of step with the bytes, and otherwise a tag that fails.
func TestTamperedFrameIsRefused(t *testing.T) {
	l, _ := pairOf(t)
	sample := send(t, l.dialler, []byte("MsgApp"))
	for i := range sample {
		for _, flip := range flips {
			l, _ := pairOf(t)
			b := send(t, l.dialler, []byte("MsgApp"))
			b[i] ^= flip
			_, err := receive(l.acceptor, b)
			var want []error
			switch {
			case i < len(Magic):
				want = []error{ErrFrameBadMagic}
			case i < len(Magic)+2:
				want = []error{ErrFrameUnreadable}
			case i < HeaderLen:
				want = []error{ErrFrameOverCap, ErrFrameUnreadable}
			default:
				want = []error{ErrFrameTag}
			}
			if !isAny(err, want...) {
				t.Fatalf("byte %d ^ %#x: %v, want one of %v", i, flip, err, want)
			}
		}
	}
}

// A party in the middle that swaps either ephemeral key for its own, to
// share a secret with each end, breaks a signature: the dialler signs the
// challenge as it got it, the acceptor signs the proof as it got it.
func TestSwappedEphemeralKeysAreRefused(t *testing.T) {
	r := newRoster()
	mitm, err := member("x", strangerKey, r, 99).Accept()
	if err != nil {
		t.Fatal(err)
	}
	theirs := mitm.c.eph

	a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
	ah, _ := a.Accept()
	dh, _ := d.Dial("v1", LearnerToVoter)
	c := ah.Challenge()
	copy(c[bytes.Index(c, ah.c.eph[:]):], theirs[:])
	proof, err := dh.Prove(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ah.Judge(proof); !errors.Is(err, ErrBadProof) {
		t.Fatalf("swapped challenge ephemeral: %v", err)
	}

	ah, _ = a.Accept()
	dh, _ = d.Dial("v1", LearnerToVoter)
	proof, _ = dh.Prove(ah.Challenge())
	copy(proof[bytes.Index(proof, dh.x.p.eph[:]):], theirs[:])
	if _, err := ah.Judge(proof); !errors.Is(err, ErrBadProof) {
		t.Fatalf("swapped proof ephemeral: %v", err)
	}
}

// An all-zero (low-order) ephemeral key gives no secret: in a challenge
// the dialler answers nothing; in a signed proof the acceptor gives no
// verdict.
func TestLowOrderEphemeralKeys(t *testing.T) {
	r := newRoster()
	d := member("l1", l1Key, r, 2)
	dh, _ := d.Dial("v1", LearnerToVoter)
	zero := challenge{}
	if _, err := dh.Prove(zero.appendFrame(nil)); !errors.Is(err, ErrNoChallenge) {
		t.Fatalf("zero challenge ephemeral: %v", err)
	}

	ah, _ := member("v1", v1Key, r, 1).Accept()
	x := &transcript{c: ah.c, p: proof{dialler: "l1", target: "v1", dir: LearnerToVoter}}
	copy(x.p.sig[:], l1Key.Sign("pace-raft-proof-v1", x.proofFields()...))
	j, err := ah.Judge(x.p.appendFrame(nil))
	if !errors.Is(err, ErrBadProof) || j.Verdict != nil {
		t.Fatalf("zero proof ephemeral: %v", err)
	}
}
