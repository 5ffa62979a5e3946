package fleet

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestApply checks the record each accepted command leaves, and the Raft
// configuration change (if any) it needs.
func TestApply(t *testing.T) {
	cases := []struct {
		name   string
		cmd    Command
		change *Change
		check  func(t *testing.T, s *State)
	}{
		{"new voter enters as learner pending promotion (pace-consensus §7.1)",
			Admit{ID: "n5", Seat: Voter, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)},
			&Change{Op: AddLearner, ID: "n5", RaftID: RaftID("n5")},
			func(t *testing.T, s *State) {
				m, _ := s.Member("n5")
				want := Member{ID: "n5", Seat: Learner, PromotionPending: true, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}
				if diff := cmp.Diff(want, m); diff != "" {
					t.Fatal(diff)
				}
				if _, ok := s.VoterKey("n5"); ok {
					t.Fatal("a learner pending promotion verifies as a voter")
				}
				if k, ok := s.MemberKey("n5"); !ok || !bytes.Equal(k, testKey(5)) {
					t.Fatal("learner key not readable")
				}
			}},
		{"pending learner promoted", Admit{ID: "n4", Seat: Voter, RaftEndpoint: "10.0.0.4:6680"},
			&Change{Op: AddVoter, ID: "n4", RaftID: RaftID("n4")},
			func(t *testing.T, s *State) {
				m, _ := s.Member("n4")
				if m.Seat != Voter || m.PromotionPending || s.Voters() != 3 {
					t.Fatalf("after promotion: %+v, %d voters", m, s.Voters())
				}
			}},
		{"voter demoted", Admit{ID: "n2", Seat: Learner, RaftEndpoint: "10.0.0.2:6680"},
			&Change{Op: AddLearner, ID: "n2", RaftID: RaftID("n2")},
			func(t *testing.T, s *State) {
				if _, ok := s.VoterKey("n2"); ok || s.Voters() != 1 {
					t.Fatal("demoted voter still a voter")
				}
			}},
		{"move clears the announced endpoints (pace-consensus §7.5)", Admit{ID: "n1", Seat: Voter, RaftEndpoint: "10.0.7.1:6680"}, nil,
			func(t *testing.T, s *State) {
				m, _ := s.Member("n1")
				if m.RaftEndpoint != "10.0.7.1:6680" || m.NodeEndpoint != "" || m.Endpoints != Cleared {
					t.Fatalf("after move: %+v", m)
				}
			}},
		{"forget removes and revokes in one entry (pace-consensus §7.6)", Forget{ID: "n2"},
			&Change{Op: Remove, ID: "n2", RaftID: RaftID("n2")},
			func(t *testing.T, s *State) {
				if _, ok := s.Member("n2"); ok || !s.Revoked(testKey(2)) {
					t.Fatal("forget left the member or its key")
				}
				if _, ok := s.MemberByRaftID(RaftID("n2")); ok {
					t.Fatal("raft id index kept a forgotten member")
				}
				if _, ok := s.MemberByKey(testKey(2)); ok {
					t.Fatal("key index kept a forgotten member")
				}
			}},
		{"set lease-lifetime", Set{Name: "lease-lifetime", Value: "20min"}, nil,
			func(t *testing.T, s *State) {
				if s.Settings().LeaseLifetime != 20*time.Minute {
					t.Fatalf("lease-lifetime %v", s.Settings().LeaseLifetime)
				}
			}},
		{"leader announces its scheduler", Announce{ID: "n2", Seq: 3, SchedulerEndpoint: "10.0.0.2:6674"}, nil,
			func(t *testing.T, s *State) {
				m, _ := s.Member("n2")
				if m.SchedulerEndpoint != "10.0.0.2:6674" || m.AnnounceSeq != 3 || m.Endpoints != Announced {
					t.Fatalf("after announce: %+v", m)
				}
			}},
	}
	base := fixture(t)
	frozen := EncodeSnapshot(base)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			change, needed := Membership(base, tc.cmd)
			if (tc.change != nil) != needed || (needed && change != *tc.change) {
				t.Fatalf("Membership = %+v, %v; want %+v", change, needed, tc.change)
			}
			next, err := Apply(base, tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, next)
			if !bytes.Equal(EncodeSnapshot(base), frozen) {
				t.Fatal("Apply modified its input state")
			}
		})
	}
}

// TestApplyRefusalLeavesState: a refused command returns the same state.
func TestApplyRefusalLeavesState(t *testing.T) {
	s := fixture(t)
	next, err := Apply(s, Forget{ID: "nobody"})
	if !errors.Is(err, ErrInvalidChange) || next != s {
		t.Fatalf("refused apply: %v, same state %v", err, next == s)
	}
}

// rosterView is the method set internal/pace/lease asks of the applied
// roster; State must satisfy it without fleet importing lease.
type rosterView interface {
	ClusterID() string
	HasVoters() bool
	VoterKey(id string) (ed25519.PublicKey, bool)
	MemberKey(id string) (ed25519.PublicKey, bool)
	Revoked(key ed25519.PublicKey) bool
}

var _ rosterView = (*State)(nil)

// forgottenKeys is lease's optional extension: the key a forgotten id held.
var _ interface {
	ForgottenKey(id string) (ed25519.PublicKey, bool)
} = (*State)(nil)

// TestForgottenKey: a forget remembers which id the key belonged to; a
// second forget of a re-admitted id answers with the newer key.
func TestForgottenKey(t *testing.T) {
	s := fixture(t)
	if k, ok := s.ForgottenKey("gone"); !ok || !bytes.Equal(k, testKey(9)) {
		t.Fatal("forgotten key of gone not recorded")
	}
	if _, ok := s.ForgottenKey("n1"); ok {
		t.Fatal("a live member reads as forgotten")
	}
	s = mustApply(t, s,
		Admit{ID: "gone", Seat: Learner, RaftEndpoint: "10.0.0.9:6680", Key: testKey(19)},
		Forget{ID: "gone"})
	if k, _ := s.ForgottenKey("gone"); !bytes.Equal(k, testKey(19)) {
		t.Fatal("ForgottenKey did not answer the latest forget")
	}
	revs := s.Revocations()
	if len(revs) != 2 || !bytes.Equal(revs[0].Key, testKey(9)) || revs[1].ID != "gone" {
		t.Fatalf("revocations out of order: %+v", revs)
	}
	if !s.Revoked(testKey(9)) || !s.Revoked(testKey(19)) {
		t.Fatal("an older revocation was lost")
	}
}

// TestRosterView pins the read-only view lease and ticket verification use.
func TestRosterView(t *testing.T) {
	s := fixture(t)
	if s.ClusterID() != testCluster || !s.HasVoters() {
		t.Fatal("cluster id or voters missing")
	}
	if k, ok := s.VoterKey("n1"); !ok || !bytes.Equal(k, testKey(1)) {
		t.Fatal("founder is not a voter")
	}
	if _, ok := s.VoterKey("n3"); ok {
		t.Fatal("a learner answered as a voter")
	}
	if _, ok := s.MemberKey("gone"); ok || !s.Revoked(testKey(9)) {
		t.Fatal("forgotten member still readable or not revoked")
	}
	if s.Revoked(testKey(1)) || s.Revoked(nil) {
		t.Fatal("live or empty key reads as revoked")
	}
	k, _ := s.VoterKey("n1")
	k[0] ^= 0xff
	if again, _ := s.VoterKey("n1"); !bytes.Equal(again, testKey(1)) {
		t.Fatal("a caller mutated the state through a returned key")
	}
	if New().HasVoters() || New().Founded() {
		t.Fatal("empty state has voters")
	}
}
