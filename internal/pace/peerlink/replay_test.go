package peerlink

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// A proof recorded from one handshake, replayed against a new challenge,
// fails its signature: the acceptor's fresh nonce and key are in it.
func TestRecordedProofReplayedIsRefused(t *testing.T) {
	r := newRoster()
	a := member("v1", v1Key, r, 1)
	recorded := exchange(t, a, member("l1", l1Key, r, 2), "v1", LearnerToVoter)
	if recorded.acceptErr != nil {
		t.Fatal(recorded.acceptErr)
	}
	ah, err := a.Accept()
	if err != nil {
		t.Fatal(err)
	}
	j, err := ah.Judge(recorded.proof)
	if !errors.Is(err, ErrBadProof) || j.Verdict != nil {
		t.Fatalf("replayed proof: %v", err)
	}
}

// A verdict recorded from one handshake, replayed to a later dial of the
// same member, fails its signature: the dialler's fresh nonce is in it. So
// an address that once answered cannot be impersonated by a recording.
func TestRecordedVerdictReplayedIsRefused(t *testing.T) {
	r := newRoster()
	d := member("l1", l1Key, r, 2)
	recorded := exchange(t, member("v1", v1Key, r, 1), d, "v1", LearnerToVoter)
	if recorded.dialErr != nil {
		t.Fatal(recorded.dialErr)
	}
	// The impostor replays the challenge too; the dialler's new proof
	// carries a new nonce and key, so the old verdict does not cover it.
	dh, err := d.Dial("v1", LearnerToVoter)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dh.Prove(recorded.challenge); err != nil {
		t.Fatal(err)
	}
	if s, err := dh.Check(recorded.verdict); !errors.Is(err, ErrAcceptorProof) || s != nil {
		t.Fatalf("replayed verdict: %v", err)
	}
}

// stream is three messages the dialler sent on a live link, and a second
// link between the same members whose frames an attacker could splice in.
func stream(t *testing.T) (l, other link, frames [][]byte) {
	l, _ = pairOf(t)
	r := newRoster()
	other = accepted(t, member("v1", v1Key, r, 11), member("l1", l1Key, r, 12), LearnerToVoter)
	for _, m := range []string{"first", "second", "third"} {
		frames = append(frames, send(t, l.dialler, []byte(m)))
	}
	return l, other, frames
}

// Replayed, reordered, dropped, spliced and reflected frames fail their
// tag: the sequence number, the link's keys and the direction are in it.
func TestOutOfPlaceFramesFailTheirTag(t *testing.T) {
	tests := []struct {
		name    string
		deliver func(frames [][]byte, l, other link) (to *Session, seq [][]byte) // the last must fail
	}{
		{"replayed", func(f [][]byte, l, _ link) (*Session, [][]byte) { return l.acceptor, [][]byte{f[0], f[0]} }},
		{"reordered", func(f [][]byte, l, _ link) (*Session, [][]byte) { return l.acceptor, [][]byte{f[1]} }},
		{"dropped", func(f [][]byte, l, _ link) (*Session, [][]byte) { return l.acceptor, [][]byte{f[0], f[2]} }},
		{"spliced from another link", func(_ [][]byte, l, o link) (*Session, [][]byte) {
			return l.acceptor, [][]byte{send(t, o.dialler, []byte("first"))}
		}},
		{"reflected to its sender", func(f [][]byte, l, _ link) (*Session, [][]byte) { return l.dialler, [][]byte{f[0]} }},
		{"untagged", func(f [][]byte, l, _ link) (*Session, [][]byte) {
			forged := append([]byte(nil), f[0]...)
			clear(forged[len(forged)-TagLen:])
			return l.acceptor, [][]byte{forged}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, other, frames := stream(t)
			to, seq := tt.deliver(frames, l, other)
			for i, b := range seq {
				_, err := receive(to, b)
				if last := i == len(seq)-1; last != errors.Is(err, ErrFrameTag) {
					t.Fatalf("frame %d of %d: %v", i, len(seq), err)
				}
			}
		})
	}
}

// Property: whatever an adversary on the wire delivers out of the frames
// one end sent, the other accepts exactly the in-order prefix, and the
// first frame out of place fails its tag (the link then closes).
func TestAdversaryCanOnlyDeliverTheNextFrame(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l, _ := pairOf(t)
		from, to := l.dialler, l.acceptor
		if rapid.Bool().Draw(rt, "downstream") {
			from, to = l.acceptor, l.dialler
		}
		sent := rapid.IntRange(1, 12).Draw(rt, "sent")
		frames := make([][]byte, sent)
		for i := range frames {
			frames[i] = send(t, from, []byte{byte(i)})
		}
		picks := rapid.SliceOfN(rapid.IntRange(0, sent-1), 1, 2*sent).Draw(rt, "delivered")
		for next, pick := range picks {
			_, err := receive(to, frames[pick])
			if pick != next {
				if !errors.Is(err, ErrFrameTag) {
					rt.Fatalf("frame %d delivered as #%d: %v", pick, next, err)
				}
				return
			}
			if err != nil {
				rt.Fatalf("in-order frame %d: %v", pick, err)
			}
		}
	})
}
