package peerlink

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-consensus §7.3: an accepted handshake proves each end to the other,
// and messages then cross both ways on a learner's link, in order.
func TestAcceptedLinkCarriesMessagesBothWays(t *testing.T) {
	l, _ := pairOf(t)
	if p := l.acceptor.Peer(); p.ID != "l1" || !bytes.Equal(p.Key, l1Key.Public()) {
		t.Fatalf("acceptor proved %q", p.ID)
	}
	if p := l.dialler.Peer(); p.ID != "v1" || !bytes.Equal(p.Key, v1Key.Public()) {
		t.Fatalf("dialler proved %q", p.ID)
	}
	if l.acceptor.Direction() != LearnerToVoter || l.dialler.Direction() != LearnerToVoter {
		t.Fatalf("directions %v %v", l.acceptor.Direction(), l.dialler.Direction())
	}
	if o := l.run.judgement.Outcome; o != Accepted {
		t.Fatalf("outcome %v", o)
	}
	for i := range 3 {
		up := []byte(fmt.Sprintf("append %d", i))
		if got, err := receive(l.acceptor, send(t, l.dialler, up)); err != nil || !bytes.Equal(got, up) {
			t.Fatalf("dialler→acceptor %d: %q %v", i, got, err)
		}
		down := []byte(fmt.Sprintf("append response %d", i))
		if got, err := receive(l.dialler, send(t, l.acceptor, down)); err != nil || !bytes.Equal(got, down) {
			t.Fatalf("acceptor→dialler %d: %q %v", i, got, err)
		}
	}
	if got, err := receive(l.acceptor, send(t, l.dialler, nil)); err != nil || len(got) != 0 {
		t.Fatalf("empty message: %q %v", got, err)
	}
}

// pace-consensus §7.3.5: between voters each sends on its own link, so the
// acceptor of a voter-to-voter link sends nothing, and a frame reaching
// that link's dialler is one it cannot use.
func TestVoterToVoterLinkIsOneWay(t *testing.T) {
	r := newRoster()
	l := accepted(t, member("v1", v1Key, r, 1), member("v2", v2Key, r, 2), VoterToVoter)
	if l.acceptor.CanSend() || !l.dialler.CanSend() {
		t.Fatalf("CanSend: acceptor %v, dialler %v", l.acceptor.CanSend(), l.dialler.CanSend())
	}
	if _, err := l.acceptor.Seal([]byte("vote")); !errors.Is(err, ErrOneWay) {
		t.Fatalf("acceptor Seal: %v", err)
	}
	if _, err := receive(l.acceptor, send(t, l.dialler, []byte("heartbeat"))); err != nil {
		t.Fatalf("dialler→acceptor: %v", err)
	}
	header := AppendHeader(nil, KindMessage, 0)
	if _, err := l.dialler.ReadHeader(header); !errors.Is(err, ErrFrameUnreadable) {
		t.Fatalf("a frame to a voter-to-voter dialler: %v", err)
	}
}

// Each link and each direction has its own key: the same message seals
// differently on every side of two links.
func TestSessionKeysDifferPerLinkAndDirection(t *testing.T) {
	r := newRoster()
	a := accepted(t, member("v1", v1Key, r, 1), member("l1", l1Key, r, 2), LearnerToVoter)
	b := accepted(t, member("v1", v1Key, r, 3), member("l1", l1Key, r, 4), LearnerToVoter)
	tags := map[string]string{}
	for name, s := range map[string]*Session{"a.acceptor": a.acceptor, "a.dialler": a.dialler, "b.acceptor": b.acceptor, "b.dialler": b.dialler} {
		f, err := s.Seal([]byte("same message"))
		if err != nil {
			t.Fatal(err)
		}
		tag := hex.EncodeToString(f.Tag)
		if other, dup := tags[tag]; dup {
			t.Fatalf("%s and %s seal alike", name, other)
		}
		tags[tag] = name
	}
}

// The package comment's layout, recomputed from the frames that crossed:
// sigD over the version, the challenge and the proof's fields under
// pace-raft-proof-v1; sigA over all of that, sigD and the verdict's fields
// under pace-raft-verdict-v1.
func TestSignaturesMatchTheDocumentedLayout(t *testing.T) {
	l, _ := pairOf(t)
	c, err := handshakeFields(l.run.challenge, KindChallenge, challengeArity)
	if err != nil {
		t.Fatal(err)
	}
	p, err := handshakeFields(l.run.proof, KindProof, proofArity)
	if err != nil {
		t.Fatal(err)
	}
	v, err := handshakeFields(l.run.verdict, KindVerdict, verdictArity)
	if err != nil {
		t.Fatal(err)
	}
	signedD := append([][]byte{{5}, c[0], c[1]}, p[:5]...)
	msgD := wire.AppendLabelledMessage(nil, "pace-raft-proof-v1", signedD...)
	if !ed25519.Verify(l1Key.Public(), msgD, p[5]) {
		t.Fatal("sigD does not cover the documented fields")
	}
	msgA := wire.AppendLabelledMessage(nil, "pace-raft-verdict-v1", append(signedD, p[5], v[0], v[1])...)
	if !ed25519.Verify(v1Key.Public(), msgA, v[2]) {
		t.Fatal("sigA does not cover the documented fields")
	}
	if string(v[0]) != "v1" || !bytes.Equal(v[1], []byte{byte(Accepted)}) || !bytes.Equal(p[4], []byte{byte(LearnerToVoter)}) {
		t.Fatalf("verdict %q %x, direction %x", v[0], v[1], p[4])
	}
	if !bytes.HasPrefix(l.run.challenge, []byte("PRFT\x05\x01")) || len(l.run.challenge) != HeaderLen+2*(4+32) {
		t.Fatalf("challenge frame %x", l.run.challenge)
	}
}

// A session formats and logs its two ids and nothing else.
func TestSessionNeverFormatsKeyMaterial(t *testing.T) {
	l, _ := pairOf(t)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("link", "session", l.acceptor)
	out := fmt.Sprintf("%v %+v %#v %x %s", l.acceptor, l.acceptor, l.acceptor, l.acceptor, l.acceptor) + logged.String()
	if !strings.Contains(out, `"v1"`) || !strings.Contains(out, `"l1"`) {
		t.Fatalf("ids missing: %s", out)
	}
	if strings.Contains(out, "0x") || strings.Contains(out, "Sealer") {
		t.Fatalf("internals formatted: %s", out)
	}
}

func TestMembersNeedEverything(t *testing.T) {
	r := newRoster()
	for _, m := range []*Member{
		{Key: v1Key, Roster: FromLease(r), Random: seededRandom(1)},
		{ID: "v1", Roster: FromLease(r), Random: seededRandom(1)},
		{ID: "v1", Key: v1Key, Random: seededRandom(1)},
		{ID: "v1", Key: v1Key, Roster: FromLease(r)},
	} {
		if _, err := m.Accept(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("Accept %+v: %v", m, err)
		}
	}
	m := member("v1", v1Key, r, 1)
	for _, bad := range []struct {
		target string
		dir    Direction
	}{{"", VoterToVoter}, {"v2", 0}, {"v2", 3}, {"has space", VoterToVoter}} {
		if _, err := m.Dial(bad.target, bad.dir); !errors.Is(err, ErrBadConfig) {
			t.Errorf("Dial(%q, %d): %v", bad.target, bad.dir, err)
		}
	}
}

// Each handshake step runs once, in order.
func TestHandshakeStepsRunOnce(t *testing.T) {
	r := newRoster()
	a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
	ah, _ := a.Accept()
	dh, _ := d.Dial("v1", LearnerToVoter)
	if _, err := dh.Check(nil); !errors.Is(err, ErrSpent) {
		t.Fatalf("Check before Prove: %v", err)
	}
	proof, err := dh.Prove(ah.Challenge())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dh.Prove(ah.Challenge()); !errors.Is(err, ErrSpent) {
		t.Fatalf("second Prove: %v", err)
	}
	j, err := ah.Judge(proof)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ah.Judge(proof); !errors.Is(err, ErrSpent) {
		t.Fatalf("second Judge: %v", err)
	}
	if _, err := dh.Check(j.Verdict); err != nil {
		t.Fatal(err)
	}
	if _, err := dh.Check(j.Verdict); !errors.Is(err, ErrSpent) {
		t.Fatalf("second Check: %v", err)
	}
}
