package fleet

import (
	"bytes"
	"slices"
)

// Apply applies c to s. It validates first, so the outcome depends on s and
// c alone: every replica refuses the same entries with the same error and
// leaves its state unchanged. On success it returns a new State; s is never
// modified.
func Apply(s *State, c Command) (*State, error) {
	if err := Validate(s, c); err != nil {
		return s, err
	}
	next := s.clone()
	switch c := c.(type) {
	case Found:
		next.clusterID = c.ClusterID
		next.putMember(&Member{
			ID:           c.ID,
			Seat:         Voter,
			RaftEndpoint: c.RaftEndpoint,
			NodeEndpoint: c.NodeEndpoint,
			Endpoints:    endpointStateFor(c.NodeEndpoint, "", NeverAnnounced),
			Key:          slices.Clone(c.Key),
		})
	case Admit:
		next.putMember(admitted(s.members[c.ID], c))
	case Forget:
		old := s.members[c.ID]
		next.dropMember(c.ID)
		next.revoke(old.ID, keyBytes(old.Key))
	case Set:
		next.settings, _ = s.settings.with(c.Name, c.Value)
	case Announce:
		next.putMember(announced(s.members[c.ID], c))
	}
	return next, nil
}

// admitted is the record an Admit leaves: a new member enters as a learner
// (pending promotion when admitted as a voter); an existing one changes
// seat, and a new consensus endpoint clears the announced ones until the
// member announces again (pace-consensus §7.5).
func admitted(old *Member, c Admit) *Member {
	if old == nil {
		return &Member{
			ID:               c.ID,
			Seat:             Learner,
			PromotionPending: c.Seat == Voter,
			RaftEndpoint:     c.RaftEndpoint,
			Key:              slices.Clone(c.Key),
		}
	}
	m := old.copyOut()
	m.Seat, m.PromotionPending = c.Seat, false
	if c.RaftEndpoint != old.RaftEndpoint {
		m.RaftEndpoint = c.RaftEndpoint
		m.NodeEndpoint, m.SchedulerEndpoint = "", ""
		if old.Endpoints != NeverAnnounced {
			m.Endpoints = Cleared
		}
	}
	if c.Key != nil {
		m.Key = slices.Clone(c.Key)
	}
	return &m
}

// announced is the record an Announce leaves.
func announced(old *Member, c Announce) *Member {
	m := old.copyOut()
	m.AnnounceSeq = c.Seq
	if c.RaftEndpoint != "" {
		m.RaftEndpoint = c.RaftEndpoint
	}
	if c.NodeEndpoint != "" {
		m.NodeEndpoint = c.NodeEndpoint
	}
	if c.SchedulerEndpoint != "" {
		m.SchedulerEndpoint = c.SchedulerEndpoint
	}
	m.Endpoints = endpointStateFor(m.NodeEndpoint, m.SchedulerEndpoint, old.Endpoints)
	return &m
}

func endpointStateFor(node, scheduler string, otherwise EndpointState) EndpointState {
	if node != "" || scheduler != "" {
		return Announced
	}
	return otherwise
}

// sameAs compares every field but AnnounceSeq, which an admission leaves as
// it is.
func (m *Member) sameAs(o *Member) bool {
	return m.ID == o.ID && m.Seat == o.Seat && m.PromotionPending == o.PromotionPending &&
		m.RaftEndpoint == o.RaftEndpoint && m.NodeEndpoint == o.NodeEndpoint &&
		m.SchedulerEndpoint == o.SchedulerEndpoint && m.Endpoints == o.Endpoints &&
		bytes.Equal(m.Key, o.Key)
}
