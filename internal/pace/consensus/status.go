package consensus

import (
	"go.etcd.io/raft/v3"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// Role is the Raft role (pace-consensus §7.1 names the four).
type Role string

// Roles.
const (
	RoleFollower     Role = "follower"
	RolePreCandidate Role = "pre-candidate"
	RoleCandidate    Role = "candidate"
	RoleLeader       Role = "leader"
)

// Roles lists every role, for gauges that render each as 0 or 1.
func Roles() []Role { return []Role{RoleFollower, RolePreCandidate, RoleCandidate, RoleLeader} }

func roleOf(st raft.StateType) Role {
	switch st {
	case raft.StateLeader:
		return RoleLeader
	case raft.StateCandidate:
		return RoleCandidate
	case raft.StatePreCandidate:
		return RolePreCandidate
	}
	return RoleFollower
}

// MemberSeat is one member and its seat.
type MemberSeat struct {
	ID   string
	Seat fleet.Seat
}

// Status is a point-in-time view of consensus for status verbs and the
// pace-node §10.6 consensus gauges:
//
//	pace_node_consensus_members        len(Members)
//	pace_node_consensus_term           Term
//	pace_node_consensus_commit_index   CommitIndex
//	pace_node_consensus_role{role}     1 for Role, 0 for the other Roles()
//	pace_node_consensus_member{member,seat} 1 per entry of Members
//	pace_node_consensus_leader{leader} 1 for LeaderID; absent while LeaderID is ""
type Status struct {
	ClusterID    string
	NodeID       string
	RaftID       uint64
	Mode         Mode
	CreatedAt    int64 // unix seconds this node minted its cluster; 0 when not recorded
	Role         Role
	Term         uint64
	CommitIndex  uint64
	AppliedIndex uint64
	LeaderID     string // "" during an election, or while the leader is not in the applied state yet
	Members      []MemberSeat
}
