package raftnet

import (
	"crypto/ed25519"
	"slices"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// Fleet is what a node's links go by: the fleet state it applied and, until that state names
// any voter (a node still asking to be admitted, or a learner before the leader's snapshot
// arrived), the bootstrap roster it started from — the voters it was told to trust
// (pace-consensus §7.3: the cluster's record wins wherever it says anything). It is both the
// transport's Peers and the links' peerlink.Roster.
type Fleet struct {
	State     func() *fleet.State
	Bootstrap func() []fleet.Member // voters with their keys and consensus endpoints; nil: none
	Learner   func() bool           // this node dials every voter (a learner, or pending admission)
}

// Key is the key recorded for id: the state's, a forgotten member's last key as revoked, or
// else the bootstrap roster's.
func (f Fleet) Key(id string) (ed25519.PublicKey, bool, bool) {
	st := f.State()
	if key, ok := st.MemberKey(id); ok {
		return key, st.Revoked(key), true
	}
	if key, ok := st.ForgottenKey(id); ok {
		return key, true, true
	}
	if st.HasVoters() {
		return nil, false, false
	}
	for _, m := range f.bootstrap() {
		if m.ID == id {
			return m.Key, st.Revoked(m.Key), true
		}
	}
	return nil, false, false
}

// MemberByRaftID finds a member in the state, or else in the bootstrap roster.
func (f Fleet) MemberByRaftID(raftID uint64) (fleet.Member, bool) {
	st := f.State()
	if m, ok := st.MemberByRaftID(raftID); ok || st.HasVoters() {
		return m, ok
	}
	i := slices.IndexFunc(f.bootstrap(), func(m fleet.Member) bool { return m.RaftID() == raftID })
	if i < 0 {
		return fleet.Member{}, false
	}
	return f.bootstrap()[i], true
}

// Members are the state's members, or the bootstrap roster while the state names no voter.
func (f Fleet) Members() []fleet.Member {
	if st := f.State(); st.HasVoters() {
		return st.Members()
	}
	return f.bootstrap()
}

// DialsVoters reports whether this node dials every voter.
func (f Fleet) DialsVoters() bool { return f.Learner != nil && f.Learner() }

func (f Fleet) bootstrap() []fleet.Member {
	if f.Bootstrap == nil {
		return nil
	}
	return f.Bootstrap()
}
