package fleet

// ChangeOp is the Raft configuration change a command needs.
type ChangeOp uint8

// Configuration changes, one member at a time (pace-consensus §7.1).
const (
	AddLearner ChangeOp = 1 // a new member, or a voter demoted
	AddVoter   ChangeOp = 2 // a learner promoted
	Remove     ChangeOp = 3 // a forgotten member
)

func (op ChangeOp) String() string {
	switch op {
	case AddLearner:
		return "add-learner"
	case AddVoter:
		return "add-voter"
	case Remove:
		return "remove"
	}
	return "unknown-change"
}

// Change is the Raft configuration change of one member.
type Change struct {
	Op     ChangeOp
	ID     string
	RaftID uint64
}

// Membership returns the Raft configuration change applying c to s needs,
// and false when c changes no seat (settings, announcements, a move, a new
// key). The founder's seat is not a change: it is the founding ConfState.
// The consensus loop proposes a command that needs a change as a conf
// change entry carrying the command, and at apply time checks that the
// change the entry carries is still the one Membership computes, so the
// Raft configuration and the fleet's seats never disagree.
func Membership(s *State, c Command) (Change, bool) {
	switch c := c.(type) {
	case Admit:
		old, exists := s.members[c.ID]
		next := admitted(old, c)
		switch {
		case !exists:
			return Change{Op: AddLearner, ID: c.ID, RaftID: RaftID(c.ID)}, true
		case old.Seat == next.Seat:
			return Change{}, false
		case next.Seat == Voter:
			return Change{Op: AddVoter, ID: c.ID, RaftID: RaftID(c.ID)}, true
		default:
			return Change{Op: AddLearner, ID: c.ID, RaftID: RaftID(c.ID)}, true
		}
	case Forget:
		if _, exists := s.members[c.ID]; exists {
			return Change{Op: Remove, ID: c.ID, RaftID: RaftID(c.ID)}, true
		}
	}
	return Change{}, false
}
