package fleet

import (
	"bytes"
	"crypto/ed25519"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"testing"

	"pgregory.net/rapid"
)

var (
	propIDs       = []string{"a", "b", "c", "d", "e"}
	propEndpoints = []string{"10.0.0.1:6680", "10.0.0.2:6680", "[::1]:6680"}
	propNames     = []string{SettingLeaseLifetime, SettingFleetOpen, "upstream", "colour"}
	propValues    = []string{"0", "1", "20min", "30s", "1h", "2h", "600"}
)

// drawCommand draws a command over small pools, so sequences hit the same
// members, keys and settings again and again.
func drawCommand(t *rapid.T) Command {
	id := rapid.SampledFrom(propIDs).Draw(t, "id")
	key := func() ed25519.PublicKey {
		if rapid.Bool().Draw(t, "keyless") {
			return nil
		}
		return testKey(byte(rapid.IntRange(0, 7).Draw(t, "key")))
	}
	ep := func() string {
		if rapid.IntRange(0, 3).Draw(t, "epAbsent") == 0 {
			return ""
		}
		return rapid.SampledFrom(propEndpoints).Draw(t, "endpoint")
	}
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		return Found{ClusterID: testCluster, ID: id, Key: key()}
	case 1, 2:
		seat := rapid.SampledFrom([]Seat{Voter, Learner}).Draw(t, "seat")
		return Admit{ID: id, Seat: seat, RaftEndpoint: rapid.SampledFrom(propEndpoints).Draw(t, "raftEndpoint"), Key: key()}
	case 3:
		return Forget{ID: id}
	case 4:
		return Set{Name: rapid.SampledFrom(propNames).Draw(t, "name"), Value: rapid.SampledFrom(propValues).Draw(t, "value")}
	default:
		return Announce{ID: id, Seq: rapid.Uint64Range(0, 8).Draw(t, "seq"), RaftEndpoint: ep(), NodeEndpoint: ep(), SchedulerEndpoint: ep()}
	}
}

// TestApplyProperties runs random command sequences from a founded cluster
// and checks, after every command: Apply is deterministic and agrees with
// Validate; it never edits its input; snapshot→restore gives the same
// state; the cluster never has zero voters; a revoked key stays revoked and
// is held by nobody; and Membership predicts exactly the seat change Apply
// makes.
func TestApplyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := mustApply(t, New(), Found{ClusterID: testCluster, ID: "a", RaftEndpoint: propEndpoints[0], Key: testKey(0)})
		var revoked []ed25519.PublicKey
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			c := drawCommand(t)
			before := EncodeSnapshot(s)
			next, err := Apply(s, c)
			again, err2 := Apply(s, c)
			if !next.Equal(again) || errText(err) != errText(err2) {
				t.Fatalf("Apply(%#v) is not deterministic", c)
			}
			if errText(err) != errText(Validate(s, c)) {
				t.Fatalf("Apply and Validate disagree on %#v: %v", c, err)
			}
			if !bytes.Equal(EncodeSnapshot(s), before) {
				t.Fatalf("Apply(%#v) edited its input", c)
			}
			if err != nil && next != s {
				t.Fatalf("refused %#v returned a new state", c)
			}
			if err == nil {
				checkMembership(t, s, next, c)
				if f, ok := c.(Forget); ok {
					m, _ := s.Member(f.ID)
					revoked = append(revoked, m.Key)
				}
			}
			restored, derr := DecodeSnapshot(EncodeSnapshot(next))
			if derr != nil || !restored.Equal(next) {
				t.Fatalf("snapshot of %v does not restore: %v", next, derr)
			}
			if next.Voters() < 1 {
				t.Fatalf("%#v left no voter", c)
			}
			for _, k := range revoked {
				if _, held := next.MemberByKey(k); !next.Revoked(k) || held {
					t.Fatalf("revoked key %s came back after %#v", edkey.Text(k), c)
				}
			}
			s = next
		}
	})
}

// checkMembership holds Apply to the change Membership predicted.
func checkMembership(t *rapid.T, before, after *State, c Command) {
	change, needed := Membership(before, c)
	seats := func(s *State) map[string]Seat {
		out := map[string]Seat{}
		for _, m := range s.Members() {
			out[m.ID] = m.Seat
		}
		return out
	}
	b, a := seats(before), seats(after)
	if !needed {
		for id, seat := range b {
			if a[id] != seat {
				t.Fatalf("%#v changed the seat of %s without a conf change", c, id)
			}
		}
		return
	}
	seat, present := a[change.ID]
	ok := map[ChangeOp]bool{
		AddLearner: present && seat == Learner,
		AddVoter:   present && seat == Voter,
		Remove:     !present,
	}[change.Op]
	if !ok || change.RaftID != RaftID(change.ID) {
		t.Fatalf("%#v: change %+v but %s is now %v (present %v)", c, change, change.ID, seat, present)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
