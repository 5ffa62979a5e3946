package fleet

import (
	"errors"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"strings"
	"testing"
)

// TestValidate walks every command kind through its refusals (pace-node §3.2,
// pace-consensus §7.5, pace-consensus §7.6) against the fixture: each row names
// the sentinel and a phrase the operator's sentence must contain.
func TestValidate(t *testing.T) {
	small := make([]byte, 32)
	small[0] = 1 // the identity point: small order
	cases := []struct {
		name   string
		cmd    Command
		want   error
		phrase string
	}{
		{"found twice", Found{ClusterID: testCluster, ID: "x", Key: testKey(20)}, ErrInvalidChange, "already founded"},

		{"admit new learner", Admit{ID: "n5", Seat: Learner, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}, nil, ""},
		{"admit new voter", Admit{ID: "n5", Seat: Voter, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}, nil, ""},
		{"admit without key, none recorded", Admit{ID: "n5", Seat: Voter, RaftEndpoint: "10.0.0.5:6680"}, ErrInvalidChange, "no key stated for n5 and none recorded"},
		{"admit revoked key", Admit{ID: "back", Seat: Learner, RaftEndpoint: "10.0.0.9:6680", Key: testKey(9)}, ErrInvalidChange, "key " + edkey.Text(testKey(9)) + " is revoked"},
		{"admit revoked key under the old id", Admit{ID: "gone", Seat: Voter, RaftEndpoint: "10.0.0.9:6680", Key: testKey(9)}, ErrInvalidChange, "is revoked"},
		{"admit small-order key", Admit{ID: "n5", Seat: Learner, RaftEndpoint: "10.0.0.5:6680", Key: small}, ErrMalformedKey, "small-order"},
		{"admit another member's key", Admit{ID: "n5", Seat: Learner, RaftEndpoint: "10.0.0.5:6680", Key: testKey(2)}, ErrInvalidChange, "already recorded for member n2"},
		{"admit bad id", Admit{ID: "a b", Seat: Learner, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}, ErrInvalidChange, "member id"},
		{"admit bad endpoint", Admit{ID: "n5", Seat: Learner, RaftEndpoint: "10.0.0.5", Key: testKey(5)}, ErrInvalidChange, "not host:port"},
		{"admit bad seat", Admit{ID: "n5", Seat: 7, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}, ErrInvalidChange, "neither voter nor learner"},
		{"promote learner", Admit{ID: "n3", Seat: Voter, RaftEndpoint: "10.0.0.3:6680"}, nil, ""},
		{"demote voter", Admit{ID: "n2", Seat: Learner, RaftEndpoint: "10.0.0.2:6680"}, nil, ""},
		{"move voter", Admit{ID: "n2", Seat: Voter, RaftEndpoint: "10.0.9.2:6680"}, nil, ""},
		{"rekey member", Admit{ID: "n3", Seat: Learner, RaftEndpoint: "10.0.0.3:6680", Key: testKey(13)}, nil, ""},
		{"re-admit unchanged", Admit{ID: "n3", Seat: Learner, RaftEndpoint: "10.0.0.3:6680"}, ErrNotNeeded, "already recorded as learner"},
		{"re-admit unchanged with same key", Admit{ID: "n2", Seat: Voter, RaftEndpoint: "10.0.0.2:6680", Key: testKey(2)}, ErrNotNeeded, "already recorded as voter"},

		{"forget learner", Forget{ID: "n3"}, nil, ""},
		{"forget voter", Forget{ID: "n2"}, nil, ""},
		{"forget stranger", Forget{ID: "n9"}, ErrInvalidChange, "not a member"},
		{"forget forgotten", Forget{ID: "gone"}, ErrInvalidChange, "stays forgotten"},
		{"forget non-UTF-8 id", Forget{ID: "\xff"}, ErrInvalidChange, "not a member"},

		{"set lease-lifetime", Set{Name: "lease-lifetime", Value: "20min"}, nil, ""},
		{"set lease-lifetime 1h", Set{Name: "lease-lifetime", Value: "1h"}, nil, ""},
		{"set lease-lifetime 31s", Set{Name: "lease-lifetime", Value: "31s"}, nil, ""},
		{"set lease-lifetime 30s", Set{Name: "lease-lifetime", Value: "30s"}, ErrInvalidChange, "more than 30s and at most 1h"},
		{"set lease-lifetime 61min", Set{Name: "lease-lifetime", Value: "61min"}, ErrInvalidChange, "out of range"},
		{"set lease-lifetime bare", Set{Name: "lease-lifetime", Value: "600"}, ErrInvalidChange, "want a duration"},
		{"set lease-lifetime unchanged", Set{Name: "lease-lifetime", Value: "600s"}, ErrNotNeeded, "already 10min"},
		{"set fleet-open", Set{Name: "fleet-open", Value: "1"}, nil, ""},
		{"set fleet-open unchanged", Set{Name: "fleet-open", Value: "0"}, ErrNotNeeded, "already 0"},
		{"set fleet-open yes", Set{Name: "fleet-open", Value: "yes"}, ErrInvalidChange, "want 0 or 1"},
		{"set upstream", Set{Name: "upstream", Value: "kv:6379"}, ErrInvalidChange, "upstream is never a cluster setting"},
		{"set unknown", Set{Name: "colour", Value: "blue"}, ErrInvalidChange, `unknown setting "colour"`},

		{"announce leader", Announce{ID: "n2", Seq: 1, SchedulerEndpoint: "10.0.0.2:6674"}, nil, ""},
		{"announce move", Announce{ID: "n1", Seq: 1, RaftEndpoint: "10.0.7.1:6680", NodeEndpoint: "10.0.7.1:6674"}, nil, ""},
		{"announce stale seq", Announce{ID: "n1", Seq: 0, NodeEndpoint: "10.0.7.1:6674"}, ErrNotNeeded, "not newer"},
		{"announce unchanged, newer", Announce{ID: "n1", Seq: 5, NodeEndpoint: "10.0.0.1:6674"}, nil, ""},
		{"announce forgotten", Announce{ID: "gone", Seq: 9, NodeEndpoint: "10.0.0.9:6674"}, ErrInvalidChange, "not re-recorded"},
		{"announce nothing", Announce{ID: "n1", Seq: 9}, ErrInvalidChange, "names no endpoint"},
		{"announce bad endpoint", Announce{ID: "n1", Seq: 9, NodeEndpoint: "x"}, ErrInvalidChange, "not host:port"},
	}
	s := fixture(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(s, tc.cmd)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want accepted", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.phrase) {
				t.Fatalf("Validate = %v, want %v containing %q", err, tc.want, tc.phrase)
			}
			if errors.Is(err, ErrInvalidChange) == errors.Is(err, ErrNotNeeded) {
				t.Fatalf("refusal %v must wrap exactly one of the two sentinels", err)
			}
		})
	}
}

// TestValidateOnlyVoter pins pace-consensus §7.6 and pace-consensus §7.1:
// neither a forget nor a demotion may leave the cluster without a voter.
func TestValidateOnlyVoter(t *testing.T) {
	s := mustApply(t, New(), Found{ClusterID: testCluster, ID: "solo", Key: testKey(1)})
	if err := Validate(s, Forget{ID: "solo"}); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "only voter") {
		t.Fatalf("forget of the only voter: %v", err)
	}
	s = mustApply(t, s, Admit{ID: "solo", Seat: Voter, RaftEndpoint: "127.0.0.1:6680"})
	if err := Validate(s, Admit{ID: "solo", Seat: Learner, RaftEndpoint: "127.0.0.1:6680"}); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "without a voter") {
		t.Fatalf("demotion of the only voter: %v", err)
	}
}

// TestValidateUnfounded: before the Found entry nothing but Found applies.
func TestValidateUnfounded(t *testing.T) {
	s := New()
	for _, c := range []Command{
		Admit{ID: "n1", Seat: Voter, RaftEndpoint: "h:1", Key: testKey(1)},
		Forget{ID: "n1"}, Set{Name: "fleet-open", Value: "1"}, Announce{ID: "n1", Seq: 1, NodeEndpoint: "h:1"},
	} {
		if err := Validate(s, c); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "no cluster has been founded") {
			t.Errorf("%T on an unfounded state: %v", c, err)
		}
	}
	for _, c := range []Found{
		{ClusterID: "xyz", ID: "n1", Key: testKey(1)},
		{ClusterID: testCluster, ID: "", Key: testKey(1)},
		{ClusterID: testCluster, ID: "n1"},
		{ClusterID: testCluster, ID: "n1", Key: testKey(1), RaftEndpoint: "nope"},
		{ClusterID: testCluster, ID: "n1", Key: testKey(1), NodeEndpoint: "h:0"},
	} {
		if err := Validate(s, c); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("Found %+v accepted: %v", c, err)
		}
	}
}
