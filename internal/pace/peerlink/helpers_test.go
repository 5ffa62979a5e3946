package peerlink

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
)

// Test world: voters v1, v2 and v3 and learner l1; r1 was a member the
// cluster forgot (its key revoked); a stranger holds a key nobody records.
var (
	v1Key       = leasetest.NewSigner("v1")
	v2Key       = leasetest.NewSigner("v2")
	v3Key       = leasetest.NewSigner("v3")
	l1Key       = leasetest.NewSigner("l1")
	r1Key       = leasetest.NewSigner("r1")
	strangerKey = leasetest.NewSigner("stranger")
)

func seededRandom(seed uint64) io.Reader {
	var s [32]byte
	binary.BigEndian.PutUint64(s[:], seed)
	return rand.NewChaCha8(s)
}

func newRoster() *leasetest.Roster {
	return leasetest.NewRoster("c1").
		AddVoter("v1", v1Key.Public()).
		AddVoter("v2", v2Key.Public()).
		AddVoter("v3", v3Key.Public()).
		AddLearner("l1", l1Key.Public()).
		AddLearner("r1", r1Key.Public()).
		Forget("r1")
}

// member is id with key, reading r, drawing from seed.
func member(id string, key Signer, r *leasetest.Roster, seed uint64) *Member {
	return &Member{ID: id, Key: key, Roster: FromLease(r), Random: seededRandom(seed)}
}

// run is one handshake as both ends saw it: the frames that crossed and
// each end's result. A judgement without a verdict reaches the dialler as
// the close it is (ErrEndedByAcceptor).
type run struct {
	challenge, proof, verdict []byte
	judgement                 Judgement
	acceptErr                 error
	dialled                   *Session
	dialErr                   error
}

// exchange runs a whole handshake of d dialling a for target.
func exchange(t testing.TB, a, d *Member, target string, dir Direction) run {
	t.Helper()
	ah, err := a.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	dh, err := d.Dial(target, dir)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	var r run
	r.challenge = ah.Challenge()
	if r.proof, r.dialErr = dh.Prove(r.challenge); r.dialErr != nil {
		return r
	}
	r.judgement, r.acceptErr = ah.Judge(r.proof)
	if r.verdict = r.judgement.Verdict; r.verdict == nil {
		r.dialErr = ErrEndedByAcceptor
		return r
	}
	r.dialled, r.dialErr = dh.Check(r.verdict)
	return r
}

// link is both ends of an accepted handshake.
type link struct {
	acceptor, dialler *Session
	run               run
}

func accepted(t testing.TB, a, d *Member, dir Direction) link {
	t.Helper()
	r := exchange(t, a, d, a.ID, dir)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatalf("handshake: acceptor %v, dialler %v", r.acceptErr, r.dialErr)
	}
	return link{acceptor: r.judgement.Session, dialler: r.dialled, run: r}
}

// pairOf is the usual link: l1 (a learner, so two-way) dialling v1, both
// reading one roster.
func pairOf(t testing.TB) (link, *leasetest.Roster) {
	r := newRoster()
	return accepted(t, member("v1", v1Key, r, 1), member("l1", l1Key, r, 2), LearnerToVoter), r
}

// send seals msg on s and returns the frame's bytes.
func send(t testing.TB, s *Session, msg []byte) []byte {
	t.Helper()
	f, err := s.Seal(msg)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return f.Append(nil)
}

// receive runs a frame's bytes through s as a socket reader would.
func receive(s *Session, b []byte) ([]byte, error) {
	n, err := s.ReadHeader(b)
	if err != nil {
		return nil, err
	}
	f, err := SplitFrame(b, s.MaxMessage())
	if err != nil {
		return nil, err
	}
	if len(f.Payload) != n {
		return nil, ErrFrameUnreadable
	}
	return f.Payload, s.Open(f)
}

// counted is what Count records for one end's error.
func counted(role Role, err error) map[string]uint64 {
	var c Counters
	c.Count(role, err)
	return nonZero(&c)
}

func nonZero(c *Counters) map[string]uint64 {
	m := map[string]uint64{}
	for _, metric := range c.Metrics() {
		if v := metric.Value.Load(); v != 0 {
			m[metric.Name] = v
		}
	}
	return m
}
