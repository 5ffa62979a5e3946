package fleet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// moveCase is one member's statement and what it records; want nil: nothing.
type moveCase struct {
	name string
	m    Member
	node string
	seq  uint64
	want *Announce
}

// TestMovedRecordsWhatAMemberStates: which endpoints a member's statement of its node endpoint
// moves (pace-consensus §7.4).
func TestMovedRecordsWhatAMemberStates(t *testing.T) {
	for _, c := range moveCases() {
		got, ok := Moved(c.m, c.node, c.seq)
		switch {
		case c.want == nil && ok:
			t.Errorf("%s: recorded %+v", c.name, got)
		case c.want != nil && !ok:
			t.Errorf("%s: recorded nothing", c.name)
		case c.want != nil:
			if diff := cmp.Diff(*c.want, got); diff != "" {
				t.Errorf("%s: %s", c.name, diff)
			}
		}
	}
}

func moveCases() []moveCase {
	voter := Member{ID: "v", Seat: Voter, RaftEndpoint: "10.0.0.2:6680", NodeEndpoint: "10.0.0.2:6674", AnnounceSeq: 10}
	leader := voter
	leader.SchedulerEndpoint = voter.NodeEndpoint
	pinnedApart := voter
	pinnedApart.RaftEndpoint = "raft.example:6680"
	learner := voter
	learner.Seat = Learner
	pending := learner
	pending.PromotionPending = true
	unannounced := voter
	unannounced.NodeEndpoint = ""
	v6 := Member{ID: "v", Seat: Voter, RaftEndpoint: "[fd00::2]:6680", NodeEndpoint: "[fd00:0::2]:6674"}
	onLoopback := Member{ID: "v", Seat: Voter, RaftEndpoint: "127.0.0.1:7680", NodeEndpoint: "127.0.0.1:7674"}
	return []moveCase{
		{"a voter's endpoints that share a host both move", voter, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, RaftEndpoint: "10.0.0.7:6680", NodeEndpoint: "10.0.0.7:6674"}},
		{"the scheduler endpoint moves with the node endpoint it was", leader, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, RaftEndpoint: "10.0.0.7:6680", NodeEndpoint: "10.0.0.7:6674", SchedulerEndpoint: "10.0.0.7:6674"}},
		{"a consensus endpoint pinned to another host stays", pinnedApart, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, NodeEndpoint: "10.0.0.7:6674"}},
		{"a learner moves only its node endpoint", learner, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, NodeEndpoint: "10.0.0.7:6674"}},
		{"so does a learner pending promotion", pending, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, NodeEndpoint: "10.0.0.7:6674"}},
		{"a first statement records the node endpoint alone", unannounced, "10.0.0.7:6674", 11,
			&Announce{ID: "v", Seq: 11, NodeEndpoint: "10.0.0.7:6674"}},
		{"two spellings of one IPv6 host share it", v6, "[fd00::9]:6674", 1,
			&Announce{ID: "v", Seq: 1, RaftEndpoint: "[fd00::9]:6680", NodeEndpoint: "[fd00::9]:6674"}},
		{"a fleet on one machine moves on loopback", onLoopback, "127.0.0.1:8674", 1,
			&Announce{ID: "v", Seq: 1, RaftEndpoint: "127.0.0.1:7680", NodeEndpoint: "127.0.0.1:8674"}},
		{"an older statement is ignored", voter, "10.0.0.7:6674", 9, nil},
		{"a repeated statement is ignored", voter, "10.0.0.7:6674", 10, nil},
		{"a newer statement of the endpoints on record is recorded for its sequence", leader, "10.0.0.2:6674", 11,
			&Announce{ID: "v", Seq: 11, RaftEndpoint: "10.0.0.2:6680", NodeEndpoint: "10.0.0.2:6674", SchedulerEndpoint: "10.0.0.2:6674"}},
		{"a wildcard is nobody's address", voter, "0.0.0.0:6674", 11, nil},
		{"loopback is not where a member of several machines moves", voter, "127.0.0.1:6674", 11, nil},
		{"not an endpoint", voter, "10.0.0.7", 11, nil},
	}
}

// TestStatementsInAnyOrderEndAtTheNewest: however a member's statements arrive — late,
// repeated, out of order — the record ends at the endpoints of the newest one, because each is
// judged against the record the ones before it left.
func TestStatementsInAnyOrderEndAtTheNewest(t *testing.T) {
	statements := []struct {
		seq  uint64
		node string
	}{{100, "10.0.0.5:6674"}, {200, "10.0.0.6:6674"}, {300, "10.0.0.7:6674"}, {400, "10.0.0.6:6674"}}
	for _, order := range permutations(len(statements)) {
		s := mustApply(t, fixture(t), Announce{ID: "n2", Seq: 1, NodeEndpoint: "10.0.0.2:6674"})
		for _, i := range order {
			m, _ := s.Member("n2")
			if a, ok := Moved(m, statements[i].node, statements[i].seq); ok {
				s = mustApply(t, s, a)
			}
		}
		m, _ := s.Member("n2")
		if m.NodeEndpoint != "10.0.0.6:6674" || m.RaftEndpoint != "10.0.0.6:6680" || m.AnnounceSeq != 400 {
			t.Errorf("statements in the order %v left %s, %s at %d; want the newest, 10.0.0.6 at 400",
				order, m.RaftEndpoint, m.NodeEndpoint, m.AnnounceSeq)
		}
	}
}

// permutations lists every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}
