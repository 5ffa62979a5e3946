package fleet

import (
	"github.com/buildfleet/buildfleet/internal/pace/edkey"

	"errors"
	"fmt"
)

// Refusal sentinels. Every refusal from Validate and Apply wraps exactly one
// of them; the node answers them as invalid-cluster-change and
// cluster-change-not-needed.
var (
	ErrInvalidChange = errors.New("invalid cluster change")
	ErrNotNeeded     = errors.New("cluster change not needed")
)

// Bounds on the state, checked at admission and when a snapshot is read.
const (
	MaxMembers = 4096
	MaxRevoked = 1 << 16
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidChange}, args...)...)
}

func notNeeded(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotNeeded}, args...)...)
}

// Validate says whether c may be applied to s. A nil result means Apply
// would change the state; otherwise the error wraps ErrInvalidChange or
// ErrNotNeeded and its text is a sentence for the operator.
func Validate(s *State, c Command) error {
	if _, founding := c.(Found); !founding && !s.Founded() {
		return invalid("no cluster has been founded yet")
	}
	switch c := c.(type) {
	case Found:
		return validateFound(s, c)
	case Admit:
		return validateAdmit(s, c)
	case Forget:
		return validateForget(s, c)
	case Set:
		return validateSet(s, c)
	case Announce:
		return validateAnnounce(s, c)
	}
	return invalid("unknown command %T", c)
}

func validateFound(s *State, c Found) error {
	if s.Founded() {
		return invalid("cluster %s is already founded", s.clusterID)
	}
	if err := CheckClusterID(c.ClusterID); err != nil {
		return invalid("%v", err)
	}
	if err := checkNewMember(s, c.ID, c.Key); err != nil {
		return err
	}
	if err := checkOptEndpoint(c.RaftEndpoint); err != nil {
		return invalid("consensus endpoint of %s: %v", c.ID, err)
	}
	if err := checkOptEndpoint(c.NodeEndpoint); err != nil {
		return invalid("node endpoint of %s: %v", c.ID, err)
	}
	return nil
}

// checkNewMember judges the id and key of a member not yet recorded.
func checkNewMember(s *State, id string, key []byte) error {
	if err := CheckMemberID(id); err != nil {
		return invalid("%v", err)
	}
	if other, ok := s.byRaftID[RaftID(id)]; ok && other.ID != id {
		return invalid("member id %q collides with member %q on its raft id; choose another id", id, other.ID)
	}
	if len(s.members) >= MaxMembers {
		return invalid("the cluster already has %d members, the most it records", MaxMembers)
	}
	return checkKey(s, id, key)
}

// checkKey judges a key stated for id: well formed, not revoked, not held by
// another member.
func checkKey(s *State, id string, key []byte) error {
	if err := CheckPublicKey(key); err != nil {
		return fmt.Errorf("%w: key stated for %s: %w", ErrInvalidChange, id, err)
	}
	if s.Revoked(key) {
		return invalid("key %s is revoked: a forgotten machine returns only with a new state directory and key", edkey.Text(key))
	}
	if holder, ok := s.byKey[keyBytes(key)]; ok && holder.ID != id {
		return invalid("key %s is already recorded for member %s; one key is one machine", edkey.Text(key), holder.ID)
	}
	return nil
}

func validateAdmit(s *State, c Admit) error {
	if !c.Seat.valid() {
		return invalid("seat %d is neither voter nor learner", c.Seat)
	}
	if err := CheckEndpoint(c.RaftEndpoint); err != nil {
		return invalid("consensus endpoint of %s: %v", c.ID, err)
	}
	old, exists := s.members[c.ID]
	if !exists {
		if c.Key == nil {
			return invalid("no key stated for %s and none recorded; admit it as %s=%s@<key> (pace-node --print-identity on that machine prints the line)", c.ID, c.ID, c.RaftEndpoint)
		}
		return checkNewMember(s, c.ID, c.Key)
	}
	if c.Key != nil {
		if err := checkKey(s, c.ID, c.Key); err != nil {
			return err
		}
	}
	if old.Seat == Voter && c.Seat == Learner && s.voters == 1 {
		return invalid("demoting %s would leave the cluster without a voter", c.ID)
	}
	if admitted(old, c).sameAs(old) {
		return notNeeded("%s is already recorded as %s at %s with that key", c.ID, old.Seat, old.RaftEndpoint)
	}
	return nil
}

func validateForget(s *State, c Forget) error {
	m, ok := s.members[c.ID]
	if !ok {
		return invalid("%q is not a member (a forgotten member stays forgotten)", c.ID)
	}
	if m.Seat == Voter && s.voters == 1 {
		return invalid("forgetting %s would remove the only voter", c.ID)
	}
	if len(s.revoked) >= MaxRevoked {
		return invalid("the cluster already records %d revoked keys, the most it holds", MaxRevoked)
	}
	return nil
}

func validateSet(s *State, c Set) error {
	next, err := s.settings.with(c.Name, c.Value)
	if err != nil {
		return invalid("%v", err)
	}
	if next == s.settings {
		v, _ := s.settings.Value(c.Name)
		return notNeeded("%s is already %s", c.Name, v)
	}
	return nil
}

func validateAnnounce(s *State, c Announce) error {
	old, ok := s.members[c.ID]
	if !ok {
		return invalid("%q announced itself but is not a member; a forgotten machine is not re-recorded", c.ID)
	}
	if c.RaftEndpoint == "" && c.NodeEndpoint == "" && c.SchedulerEndpoint == "" {
		return invalid("announcement from %s names no endpoint", c.ID)
	}
	for _, ep := range []string{c.RaftEndpoint, c.NodeEndpoint, c.SchedulerEndpoint} {
		if err := checkOptEndpoint(ep); err != nil {
			return invalid("announcement from %s: %v", c.ID, err)
		}
	}
	// A newer statement is recorded even when it names the endpoints on record: its sequence
	// alone then keeps an older statement, arriving later, from undoing it (a move from A to
	// B and back to A).
	if c.Seq <= old.AnnounceSeq {
		return notNeeded("announcement %d from %s is not newer than %d, already applied", c.Seq, c.ID, old.AnnounceSeq)
	}
	return nil
}
