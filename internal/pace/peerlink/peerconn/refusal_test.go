package peerconn

import (
	"errors"
	"io"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// refusalCases are the rows of the refusal table of pace-consensus §7.3.6.
var refusalCases = []struct {
	name          string
	acc, dial     func(t *testing.T) *node
	target        string
	acceptErr     error // nil: the acceptor accepted
	dialErr       error
	accAt, dialAt string
}{
	{"stranger", v1, func(t *testing.T) *node { return newNode(t, "x9", strangerKey, newRoster()) }, "v1",
		peerlink.ErrUnknownKey, peerlink.ErrEndedByAcceptor,
		"connections_refused_unknown_key_total", "dials_ended_by_acceptor_total"},
	{"impostor claiming v2", v1, func(t *testing.T) *node { return newNode(t, "v2", strangerKey, newRoster()) }, "v1",
		peerlink.ErrBadProof, peerlink.ErrEndedByAcceptor,
		"connections_refused_proof_total", "dials_ended_by_acceptor_total"},
	{"removed machine still dialling", v1, func(t *testing.T) *node { return newNode(t, "r1", r1Key, newRoster()) }, "v1",
		peerlink.ErrDiallerKeyRevoked, peerlink.ErrDiallerKeyRevoked,
		"connections_refused_revoked_key_total", "dials_refused_own_key_revoked_total"},
	{"stale address", v1, l1, "v2",
		peerlink.ErrWrongTarget, peerlink.ErrWrongTarget,
		"connections_refused_wrong_target_total", "dials_refused_wrong_target_total"},
	{"copied state directory", v1, func(t *testing.T) *node { return newNode(t, "v1", v1Key, newRoster()) }, "v3",
		peerlink.ErrOwnID, peerlink.ErrOwnID,
		"connections_refused_own_id_total", "dials_refused_own_id_total"},
	{"acceptor's key unknown to the dialler", v1, func(t *testing.T) *node {
		return newNode(t, "l1", l1Key, leasetest.NewRoster("c1").AddLearner("l1", l1Key.Public()))
	}, "v1", nil, peerlink.ErrAcceptorKeyUnknown, "", "dials_refused_acceptor_key_unknown_total"},
	{"impostor at v1's address", func(t *testing.T) *node { return newNode(t, "v1", strangerKey, newRoster()) }, l1, "v1",
		nil, peerlink.ErrAcceptorProof, "", "dials_refused_acceptor_proof_total"},
	{"removed machine still answering", v1, func(t *testing.T) *node {
		return newNode(t, "l1", l1Key, newRoster().Forget("v1"))
	}, "v1", nil, peerlink.ErrAcceptorKeyRevoked, "", "dials_refused_acceptor_key_revoked_total"},
}

// pace-consensus §7.3.6: on sockets, each row of the refusal table ends
// the handshake on both ends with the documented error and exactly the
// documented counter on each node; the dialler never gets a link it could
// send a message on.
func TestRefusalsAreCountedOnBothEnds(t *testing.T) {
	for _, tt := range refusalCases {
		t.Run(tt.name, func(t *testing.T) {
			acc, dial := tt.acc(t), tt.dial(t)
			r := overPipe(t, acc, dial, tt.target, peerlink.LearnerToVoter)
			if (tt.acceptErr == nil) != (r.acceptErr == nil) || (tt.acceptErr != nil && !errors.Is(r.acceptErr, tt.acceptErr)) {
				t.Fatalf("acceptor: %v", r.acceptErr)
			}
			if !errors.Is(r.dialErr, tt.dialErr) || r.dialled != nil {
				t.Fatalf("dialler: %v", r.dialErr)
			}
			if r.accepted != nil {
				// The dialler refused the verdict and closed: nothing came.
				if _, err := r.accepted.ReadMessage(); !errors.Is(err, io.EOF) {
					t.Fatalf("acceptor read after the dialler refused: %v", err)
				}
			}
			if got := acc.counts(); !cmp.Equal(got, one(tt.accAt)) {
				t.Errorf("acceptor counted %v", got)
			}
			if got := dial.counts(); !cmp.Equal(got, one(tt.dialAt)) {
				t.Errorf("dialler counted %v", got)
			}
		})
	}
}

func v1(t *testing.T) *node { return newNode(t, "v1", v1Key, newRoster()) }
func l1(t *testing.T) *node { return newNode(t, "l1", l1Key, newRoster()) }

func one(name string) map[string]uint64 {
	if name == "" {
		return map[string]uint64{}
	}
	return map[string]uint64{name: 1}
}

// pace-consensus §7.3.5: a key revoked on a live link ends it at its next
// message on each end, counted as withdrawn there; the redial is refused
// with the revocation, signed.
func TestRevocationEndsTheLinkAndTheRedialIsRefused(t *testing.T) {
	acc, dial, r := pair(t)
	up := readAsync(r.accepted)
	if err := r.dialled.WriteMessage([]byte("before")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, up); got.err != nil {
		t.Fatal(got.err)
	}
	// The learner is forgotten; both nodes share the roster here, so the
	// dialler's next write and the acceptor's next read both end the link.
	acc.roster.Forget("l1")
	up = readAsync(r.accepted)
	if err := r.dialled.WriteMessage([]byte("after")); !errors.Is(err, peerlink.ErrKeyWithdrawn) {
		t.Fatalf("dialler write: %v", err)
	}
	if got := await(t, up); !errors.Is(got.err, io.EOF) {
		t.Fatalf("acceptor read after the dialler ended the link: %v", got.err)
	}
	if got := dial.counts(); !cmp.Equal(got, one("dials_ended_key_withdrawn_total")) {
		t.Fatalf("dialler counted %v", got)
	}
	redial := overPipe(t, acc, dial, "v1", peerlink.LearnerToVoter)
	if !errors.Is(redial.acceptErr, peerlink.ErrDiallerKeyRevoked) || !errors.Is(redial.dialErr, peerlink.ErrDiallerKeyRevoked) {
		t.Fatalf("redial: %v / %v", redial.acceptErr, redial.dialErr)
	}
	if got := acc.counts(); !cmp.Equal(got, one("connections_refused_revoked_key_total")) {
		t.Fatalf("acceptor counted %v", got)
	}
}

// The acceptor's side of a revocation: the dialler's message, sealed
// before the acceptor applied the forget, ends the link when it arrives.
func TestRevocationEndsTheAcceptorsLinkAtTheNextMessage(t *testing.T) {
	roster := newRoster()
	acc := newNode(t, "v1", v1Key, roster)
	dial := newNode(t, "l1", l1Key, newRoster()) // has not applied the forget yet
	r := overPipe(t, acc, dial, "v1", peerlink.LearnerToVoter)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatal(r.acceptErr, r.dialErr)
	}
	roster.Forget("l1")
	up := readAsync(r.accepted)
	if err := r.dialled.WriteMessage([]byte("MsgAppResp")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, up); !errors.Is(got.err, peerlink.ErrKeyWithdrawn) {
		t.Fatalf("acceptor read: %v", got.err)
	}
	if got := acc.counts(); !cmp.Equal(got, one("connections_ended_key_withdrawn_total")) {
		t.Fatalf("acceptor counted %v", got)
	}
	// And an idle link on the dialler, once it applies the forget too.
	dial.roster.Forget("l1")
	if err := r.dialled.Recheck(); !errors.Is(err, peerlink.ErrKeyWithdrawn) {
		t.Fatalf("dialler Recheck: %v", err)
	}
	if got := dial.counts(); !cmp.Equal(got, one("dials_ended_key_withdrawn_total")) {
		t.Fatalf("dialler counted %v", got)
	}
}

// The caller's listener refuses what it has no room for; counted here.
func TestRefuseFull(t *testing.T) {
	acc := v1(t)
	dial := l1(t)
	a, b := net.Pipe()
	go acc.ep.RefuseFull(a)
	if _, err := dial.ep.Dial(testContext(t), b, "v1", peerlink.LearnerToVoter); !errors.Is(err, peerlink.ErrNoChallenge) {
		t.Fatalf("dial of a full listener: %v", err)
	}
	if !cmp.Equal(acc.counts(), one("connections_refused_full_total")) {
		t.Fatalf("counted %v", acc.counts())
	}
}
