package raftnet

import (
	"net"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// fleetOfThree founds n1, and admits n2 and n3 as voters over real consensus links on
// loopback: each joins as a learner (dialling n1, which has no other way to reach it), catches
// up from the leader's snapshot, and is promoted once it has. prepare, if any, is given each
// joiner before it starts.
func fleetOfThree(t *testing.T, prepare ...func(*member)) []*member {
	t.Helper()
	n1 := newMember(t, "n1")
	n1.start(t)
	waitFor(t, "the founder to lead", n1.node.IsLeader)
	ms := []*member{n1}
	for _, id := range []string{"n2", "n3"} {
		j := joiner(t, id, n1)
		for _, f := range prepare {
			f(j)
		}
		j.start(t)
		propose(t, fleet.Admit{ID: id, Seat: fleet.Voter, RaftEndpoint: j.addr, Key: j.key.Public()}, ms...)
		ms = append(ms, j)
		waitFor(t, id+" to be promoted", func() bool {
			m, ok := n1.node.State().Member(id)
			return ok && m.Seat == fleet.Voter && j.node.State().Equal(n1.node.State())
		})
	}
	return ms
}

func TestThreeVotersFormAndSurviveTheLeadersDeath(t *testing.T) {
	ms := fleetOfThree(t)
	var leader *member
	for _, m := range ms {
		if m.node.IsLeader() {
			leader = m
		}
	}
	leader.halt()
	rest := []*member{}
	for _, m := range ms {
		if m != leader {
			rest = append(rest, m)
		}
	}
	waitFor(t, "a new leader among the two left", func() bool { return rest[0].node.IsLeader() || rest[1].node.IsLeader() })
	propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "3min"}, rest...)
	waitFor(t, "both survivors to apply it", func() bool {
		return rest[0].node.State().Settings().LeaseLifetime.Minutes() == 3 && rest[1].node.State().Settings().LeaseLifetime.Minutes() == 3
	})
}

// Learners open no consensus port, dial every voter, and follow the fleet over the links they
// made; the voters reach them on those links only.
func TestLearnersDialEveryVoterAndOpenNoPort(t *testing.T) {
	ms := fleetOfThree(t)
	n1 := ms[0]
	l := joiner(t, "l1", n1)
	l.start(t)
	propose(t, fleet.Admit{ID: "l1", Seat: fleet.Learner, RaftEndpoint: l.addr, Key: l.key.Public()}, ms...)
	propose(t, fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}, ms...)
	waitFor(t, "the learner to apply the fleet's state", func() bool { return l.node.State().Settings().FleetOpen })
	waitFor(t, "a link from the learner to every voter", func() bool { return l.net.Dials.Load() >= 3 })
	if c, err := net.DialTimeout("tcp", l.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("a learner listens on its consensus port")
	}
	if m, _ := n1.node.State().Member("l1"); m.Seat != fleet.Learner {
		t.Fatalf("l1 is %v", m.Seat)
	}
}

// A forgotten member's links end at their next message and its redials are refused as a
// revoked key, on both ends; the others go on without it.
func TestAForgetEndsTheForgottenMembersLinks(t *testing.T) {
	ms := fleetOfThree(t)
	gone := ms[2]
	propose(t, fleet.Forget{ID: gone.id}, ms[:2]...)
	// Whichever end sees the forget first ends the links, counted as a withdrawn key: the
	// voters when they apply it (or when the forgotten member redials and is refused), the
	// forgotten member when it applied its own removal first and found its key revoked.
	withdrawn := func(m *member) uint64 {
		return m.links.EndedKeyWithdrawn.Load() + m.links.DialsEndedKeyWithdrawn.Load()
	}
	waitFor(t, "the forgotten member's links to end as a revoked key", func() bool {
		return withdrawn(ms[0])+withdrawn(ms[1])+ms[0].links.RefusedRevokedKey.Load()+ms[1].links.RefusedRevokedKey.Load()+withdrawn(gone) > 0
	})
	waitFor(t, "the forgotten member to know its key is revoked", func() bool {
		return gone.links.DialsRefusedOwnKeyRevoked.Load()+withdrawn(gone) > 0
	})
	waitFor(t, "the voters to hold no link to it", func() bool {
		return len(ms[0].tr.linksTo(gone.id))+len(ms[1].tr.linksTo(gone.id)) == 0
	})
	propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "4min"}, ms[:2]...)
}

// A node whose address moved ends its links with Reconnect and dials again; a voter whose
// consensus endpoint the fleet then records somewhere else is dialled there, the link to the
// old endpoint dropped although it still works, because from another machine it may lead
// nowhere (pace-consensus §7.4).
func TestAMovedVoterIsDialledWhereTheFleetRecordsIt(t *testing.T) {
	// The joiners' ports bind every loopback address, so 127.0.0.2 reaches them too.
	ms := fleetOfThree(t, func(j *member) { j.bind = ":" + portOf(t, j.addr) })
	var moved *member
	for _, m := range ms {
		if !m.node.IsLeader() && m.bind != "" {
			moved = m
		}
	}
	// Its links so far are the ones it made as a learner; ended once it knows it is a voter, it
	// dials as one, and the others dial it where the fleet records it.
	waitFor(t, moved.id+" to know it is a voter", func() bool { return moved.node.Status().Mode == consensus.Voter })
	dials := moved.net.Dials.Load()
	moved.tr.Reconnect()
	waitFor(t, moved.id+" to dial again, and be dialled at "+moved.addr, func() bool {
		return moved.net.Dials.Load() > dials && moved.accepts.has(moved.addr)
	})
	to := net.JoinHostPort("127.0.0.2", portOf(t, moved.addr))
	propose(t, fleet.Admit{ID: moved.id, Seat: fleet.Voter, RaftEndpoint: to}, ms...)
	waitFor(t, "the leader to dial "+moved.id+" at "+to, func() bool { return moved.accepts.has(to) })
	propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "5min"}, ms...)
	waitFor(t, moved.id+" to apply a change made after its move", func() bool {
		return moved.node.State().Settings().LeaseLifetime.Minutes() == 5
	})
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
