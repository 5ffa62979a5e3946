package peerlink

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
)

// forgingSigner presents one key and signs with another.
type forgingSigner struct{ claims, signs Signer }

func (f forgingSigner) Public() ed25519.PublicKey { return f.claims.Public() }
func (f forgingSigner) Sign(label string, fields ...[]byte) []byte {
	return f.signs.Sign(label, fields...)
}

// ends are a handshake's two members.
type ends struct{ acceptor, dialler *Member }

// refusalCases are the rows of the refusal table of pace-consensus §7.3.6.
var refusalCases = []struct {
	name       string
	setup      func() (ends, string) // the two ends and the target
	acceptErr  error                 // nil: accepted by the acceptor
	outcome    Outcome               // 0: closed without a verdict
	dialErr    error
	acceptorAt string // the acceptor's counter, "" for none
	diallerAt  string // the dialler's counter, "" for none
}{
	{"stranger claims an unknown id", func() (ends, string) {
		r := newRoster()
		return ends{member("v1", v1Key, r, 1), member("x9", strangerKey, r, 2)}, "v1"
	}, ErrUnknownKey, 0, ErrEndedByAcceptor,
		"connections_refused_unknown_key_total", "dials_ended_by_acceptor_total"},
	{"impostor claims a member's id", func() (ends, string) {
		r := newRoster()
		return ends{member("v1", v1Key, r, 1), member("v2", strangerKey, r, 2)}, "v1"
	}, ErrBadProof, 0, ErrEndedByAcceptor,
		"connections_refused_proof_total", "dials_ended_by_acceptor_total"},
	{"forgotten member still dialling", func() (ends, string) {
		r := newRoster()
		return ends{member("v1", v1Key, r, 1), member("r1", r1Key, r, 2)}, "v1"
	}, ErrDiallerKeyRevoked, Revoked, ErrDiallerKeyRevoked,
		"connections_refused_revoked_key_total", "dials_refused_own_key_revoked_total"},
	{"member whose key is revoked", func() (ends, string) {
		r := newRoster().Revoke(v2Key.Public())
		return ends{member("v1", v1Key, r, 1), member("v2", v2Key, r, 2)}, "v1"
	}, ErrDiallerKeyRevoked, Revoked, ErrDiallerKeyRevoked,
		"connections_refused_revoked_key_total", "dials_refused_own_key_revoked_total"},
	{"stale address: v3 answers where v2 was", func() (ends, string) {
		r := newRoster()
		return ends{member("v3", v3Key, r, 1), member("l1", l1Key, r, 2)}, "v2"
	}, ErrWrongTarget, WrongTarget, ErrWrongTarget,
		"connections_refused_wrong_target_total", "dials_refused_wrong_target_total"},
	{"copied state directory: one id and key on both ends", func() (ends, string) {
		r := newRoster()
		return ends{member("v1", v1Key, r, 1), member("v1", v1Key, r, 2)}, "v2"
	}, ErrOwnID, OwnID, ErrOwnID,
		"connections_refused_own_id_total", "dials_refused_own_id_total"},
	{"the dialler holds no key for the acceptor", func() (ends, string) {
		dr := leasetest.NewRoster("c1").AddLearner("l1", l1Key.Public())
		return ends{member("v1", v1Key, newRoster(), 1), member("l1", l1Key, dr, 2)}, "v1"
	}, nil, Accepted, ErrAcceptorKeyUnknown,
		"", "dials_refused_acceptor_key_unknown_total"},
	{"impostor at a member's address", func() (ends, string) {
		r := newRoster()
		return ends{member("v1", strangerKey, r, 1), member("l1", l1Key, r, 2)}, "v1"
	}, nil, Accepted, ErrAcceptorProof,
		"", "dials_refused_acceptor_proof_total"},
	{"removed machine still answering", func() (ends, string) {
		return ends{member("v1", v1Key, newRoster(), 1), member("l1", l1Key, newRoster().Forget("v1"), 2)}, "v1"
	}, nil, Accepted, ErrAcceptorKeyRevoked,
		"", "dials_refused_acceptor_key_revoked_total"},
}

// pace-consensus §7.3.3, pace-consensus §7.3.6: each situation of the
// refusal table is refused on each end as it says, with or without a
// verdict, and counted under its own name on each end.
func TestRefusalsOnBothEnds(t *testing.T) {
	for _, tt := range refusalCases {
		t.Run(tt.name, func(t *testing.T) {
			e, target := tt.setup()
			r := exchange(t, e.acceptor, e.dialler, target, LearnerToVoter)
			if !sameErr(r.acceptErr, tt.acceptErr) || r.judgement.Outcome != tt.outcome || (r.verdict != nil) != (tt.outcome != 0) {
				t.Fatalf("acceptor: %v, outcome %v (verdict %t)", r.acceptErr, r.judgement.Outcome, r.verdict != nil)
			}
			if !errors.Is(r.dialErr, tt.dialErr) || r.dialled != nil {
				t.Fatalf("dialler: %v", r.dialErr)
			}
			if got := counted(RoleAcceptor, r.acceptErr); !cmp.Equal(got, want(tt.acceptorAt)) {
				t.Errorf("acceptor counted %v", got)
			}
			if got := counted(RoleDialler, r.dialErr); !cmp.Equal(got, want(tt.diallerAt)) {
				t.Errorf("dialler counted %v", got)
			}
		})
	}
}

func sameErr(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

func want(name string) map[string]uint64 {
	if name == "" {
		return map[string]uint64{}
	}
	return map[string]uint64{"pace_raft_peer_" + name: 1}
}

// pace-consensus §7.3.3: the signature is checked before any claim, so a
// forged proof of a revoked member's id, or of the acceptor's own id, earns
// no verdict: nobody signs an answer to a proof nobody could check.
func TestForgedProofsEarnNoVerdict(t *testing.T) {
	r := newRoster()
	a := member("v1", v1Key, r, 1)
	for _, claim := range []string{"r1", "v1"} {
		d := member(claim, forgingSigner{claims: strangerKey, signs: strangerKey}, r, 2)
		got := exchange(t, a, d, "v3", LearnerToVoter)
		if !errors.Is(got.acceptErr, ErrBadProof) || got.verdict != nil {
			t.Errorf("forged %q: %v, verdict %t", claim, got.acceptErr, got.verdict != nil)
		}
	}
}

// A small-order key verifies a forgery under plain Ed25519; recorded for a
// member by mistake, it still proves nothing on either end.
func TestSmallOrderRecordedKeysProveNothing(t *testing.T) {
	weak := make([]byte, 32)
	weak[0] = 1 // the identity point
	anySig := make([]byte, 64)
	anySig[0] = 1
	r := newRoster().AddLearner("weak", weak)
	forger := member("weak", fixedSigner{pub: weak, sig: anySig}, r, 2)
	got := exchange(t, member("v1", v1Key, r, 1), forger, "v1", LearnerToVoter)
	if !errors.Is(got.acceptErr, ErrBadProof) {
		t.Fatalf("acceptor: %v", got.acceptErr)
	}
	weakAcceptor := member("weak", fixedSigner{pub: weak, sig: anySig}, r, 3)
	got = exchange(t, weakAcceptor, member("l1", l1Key, r, 4), "weak", LearnerToVoter)
	if !errors.Is(got.dialErr, ErrAcceptorProof) {
		t.Fatalf("dialler: %v", got.dialErr)
	}
}

type fixedSigner struct {
	pub ed25519.PublicKey
	sig []byte
}

func (f fixedSigner) Public() ed25519.PublicKey     { return f.pub }
func (f fixedSigner) Sign(string, ...[]byte) []byte { return f.sig }

// Every counted error maps to exactly the counter of its end, and the
// list holds the 29 names of pace-consensus §7.3.6, each once.
func TestCountersAreTheDocumentedOnes(t *testing.T) {
	var c Counters
	seen := map[string]bool{}
	for _, m := range c.Metrics() {
		if seen[m.Name] || m.Help == "" || m.Value == nil {
			t.Errorf("%s: duplicate, no help or no value", m.Name)
		}
		seen[m.Name] = true
	}
	if len(seen) != 29 {
		t.Fatalf("%d counters", len(seen))
	}
	for _, o := range outcomes {
		for _, role := range []Role{RoleAcceptor, RoleDialler} {
			if got := counted(role, o.err); len(got) > 1 {
				t.Errorf("%v on the %v counts %v", o.err, role, got)
			}
		}
	}
	for _, quiet := range []error{nil, ErrNoProof, ErrOneWay, ErrMessageTooLarge, ErrSpent, errors.New("closed")} {
		if len(counted(RoleDialler, quiet))+len(counted(RoleAcceptor, quiet)) != 0 {
			t.Errorf("%v is counted", quiet)
		}
	}
	if (*Counters)(nil).Count(RoleAcceptor, ErrFrameTag) {
		t.Error("a nil Counters counted")
	}
}
