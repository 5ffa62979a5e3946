package consensus

import (
	"errors"
	"fmt"
)

// Errors callers branch on. Validation refusals are fleet.ErrInvalidChange
// and fleet.ErrNotNeeded, returned before anything is proposed.
var (
	// ErrStopped: the node is stopped (or its loop failed; Err says why).
	ErrStopped = errors.New("consensus stopped")
	// ErrNotLeader: only the leader proposes; the error is a *NotLeaderError.
	ErrNotLeader = errors.New("not-leader")
	// ErrProposalDropped: Raft did not take the proposal (no leader, a
	// leadership transfer, or a configuration change still being applied);
	// nothing was appended and it may be retried.
	ErrProposalDropped = errors.New("proposal dropped")
	// ErrProposalLost: the proposal was appended but a new leader replaced
	// it; it was not applied.
	ErrProposalLost = errors.New("proposal lost to a leader change")
	// ErrMembershipBusy: one membership change at a time (pace-consensus §7.1).
	ErrMembershipBusy = errors.New("another membership change is still in progress")
	// ErrStateDir: the state directory holds consensus files that disagree.
	ErrStateDir = errors.New("consensus state directory is inconsistent")
)

// NotLeaderError answers a proposal made to a node that does not lead. It
// names the leader and its scheduler endpoint when this node knows them.
type NotLeaderError struct {
	LeaderID          string // "" when no leader is known (an election is under way)
	SchedulerEndpoint string // "" when the leader has announced none
}

func (e *NotLeaderError) Error() string {
	switch {
	case e.LeaderID == "":
		return "not-leader: no leader is known right now (an election is under way)"
	case e.SchedulerEndpoint == "":
		return fmt.Sprintf("not-leader: the leader is %s (it has announced no scheduler endpoint)", e.LeaderID)
	}
	return fmt.Sprintf("not-leader: the leader is %s at %s", e.LeaderID, e.SchedulerEndpoint)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }
