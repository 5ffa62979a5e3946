package consensus

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// pump ticks the nodes every couple of milliseconds until stopped.
func pump(nodes ...*testNode) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := time.NewTicker(2 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-tk.C:
					select {
					case n.ticks <- now:
					case <-ctx.Done():
						return
					case <-n.done:
						return
					}
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// waitFor polls cond until it holds; the deadline only bounds a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func seatOf(n *testNode, id string) fleet.Seat {
	m, ok := n.State().Member(id)
	if !ok {
		return 0
	}
	return m.Seat
}

// pair is a founder and a joiner on an in-memory network.
type pair struct {
	net    *memNet
	clock  *clocktest.Clock
	n1, n2 *testNode
	stop   func() // stops the tick pump
}

func newPair(t *testing.T) *pair {
	p := &pair{net: newMemNet(), clock: newFakeClock()}
	t.Cleanup(p.net.close) // runs after the nodes stop
	config := func(dir, id string, key byte) Config {
		cfg := testConfig(t, dir, id, key)
		cfg.Transport, cfg.Now = p.net.transport(fleet.RaftID(id)), p.clock.Now
		cfg.ElectionTicks = 50 // a loaded test machine must not depose the leader by accident
		return cfg
	}
	p.n1 = openNode(t, config(t.TempDir(), "n1", 1))
	p.net.attach(p.n1.Node)
	dir2 := t.TempDir()
	if err := WriteFormation(dir2, Formation{Mode: Learner, ClusterID: p.n1.State().ClusterID()}); err != nil {
		t.Fatal(err)
	}
	cfg2 := config(dir2, "n2", 2)
	cfg2.RaftEndpoint, cfg2.NodeEndpoint = "127.0.0.2:6680", "127.0.0.2:6674"
	p.n2 = openNode(t, cfg2)
	p.net.attach(p.n2.Node)
	p.stop = pump(p.n1, p.n2)
	t.Cleanup(func() { p.stop() })
	return p
}

// leader returns whichever node leads, waiting out an election.
func (p *pair) leader(t *testing.T) (leader, follower *testNode) {
	t.Helper()
	waitFor(t, "a leader", func() bool { return p.n1.IsLeader() || p.n2.IsLeader() })
	if p.n1.IsLeader() {
		return p.n1, p.n2
	}
	return p.n2, p.n1
}

// propose proposes on the leader, again if leadership moved meanwhile.
func (p *pair) propose(t *testing.T, cmd fleet.Command) {
	t.Helper()
	for {
		l, _ := p.leader(t)
		err := l.Propose(ctxT(t), cmd)
		switch {
		case err == nil:
			return
		case errors.Is(err, ErrNotLeader), errors.Is(err, ErrProposalLost), errors.Is(err, ErrProposalDropped):
			continue
		}
		t.Fatalf("Propose(%#v): %v", cmd, err)
	}
}

// TestSecondNodeJoinsAsLearnerThenVoter proves the seams the multi-machine
// work plugs into: a second node with a learner formation record and an
// empty store is admitted as a learner by a conf change, catches up from a
// snapshot and the log, follows its leader (contact time, not-leader
// answers), is promoted to voter and counts toward commits; membership
// changes go one at a time; a forget removes a voter from Raft.
func TestSecondNodeJoinsAsLearnerThenVoter(t *testing.T) {
	p := newPair(t)
	if n2 := p.n2; n2.State().Founded() || n2.IsLeader() || !n2.LastLeaderContact().IsZero() || n2.State().HasVoters() {
		t.Fatal("a joining node founded something or claims a leader before hearing one")
	}
	joinAsLearner(t, p)
	promote(t, p)
	oneChangeAtATime(t, p)
	leader, follower := p.leader(t)
	p.propose(t, fleet.Forget{ID: follower.cfg.NodeID})
	if voters := raftVoters(t, leader); !slices.Equal(voters, []uint64{leader.id}) || !leader.State().Revoked(follower.cfg.PublicKey) {
		t.Fatalf("after forgetting %s: voters %x, key revoked %v", follower.cfg.NodeID, voters, leader.State().Revoked(follower.cfg.PublicKey))
	}
}

func joinAsLearner(t *testing.T, p *pair) {
	n1, n2 := p.n1, p.n2
	if err := n1.Propose(ctxT(t), fleet.Admit{ID: "n2", Seat: fleet.Learner, RaftEndpoint: n2.cfg.RaftEndpoint, Key: testKey(2)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the learner to apply the founder's state", func() bool { return n2.State().Equal(n1.State()) })
	if seatOf(n2, "n2") != fleet.Learner {
		t.Fatal("n2 does not see itself as a learner")
	}
	if id, ok := n2.Leader(); !ok || id != "n1" {
		t.Fatalf("learner's leader = %q, %v", id, ok)
	}
	p.clock.Advance(time.Minute)
	waitFor(t, "a heartbeat to refresh leader contact", func() bool { return n2.LastLeaderContact().Equal(p.clock.Now()) })
	var nl *NotLeaderError
	err := n2.Propose(ctxT(t), fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"})
	if !errors.As(err, &nl) || !errors.Is(err, ErrNotLeader) || nl.LeaderID != "n1" || nl.SchedulerEndpoint != n1.cfg.NodeEndpoint {
		t.Fatalf("proposal on a learner: %v", err)
	}
	checkModes(t, n1.cfg.StateDir, Voter, n2.cfg.StateDir, Learner)
}

func promote(t *testing.T, p *pair) {
	if err := p.n1.Propose(ctxT(t), fleet.Admit{ID: "n2", Seat: fleet.Voter, RaftEndpoint: p.n2.cfg.RaftEndpoint}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to apply its promotion", func() bool { return seatOf(p.n2, "n2") == fleet.Voter })
	p.propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "45s"}) // commits only with n2's vote now
	waitFor(t, "n2 to apply the setting", func() bool { return p.n2.State().Settings().LeaseLifetime == 45*time.Second })
	checkModes(t, p.n1.cfg.StateDir, Voter, p.n2.cfg.StateDir, Voter)
	leader, _ := p.leader(t)
	if voters := raftVoters(t, leader); !slices.Equal(voters, sorted(p.n1.id, p.n2.id)) {
		t.Fatalf("raft voters %x, want both nodes", voters)
	}
}

// oneChangeAtATime cuts the follower off (and stops ticks, so nobody
// campaigns): a change cannot commit, and a second one is refused while it
// is pending; once quorum returns the first one commits.
func oneChangeAtATime(t *testing.T, p *pair) {
	leader, follower := p.leader(t)
	p.stop()
	p.net.setCut(follower.id, true)
	short, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	if err := leader.Propose(short, fleet.Admit{ID: "n3", Seat: fleet.Learner, RaftEndpoint: "10.0.0.3:6680", Key: testKey(3)}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a change without quorum returned %v", err)
	}
	if err := leader.Propose(ctxT(t), fleet.Admit{ID: "n4", Seat: fleet.Learner, RaftEndpoint: "10.0.0.4:6680", Key: testKey(4)}); !errors.Is(err, ErrMembershipBusy) {
		t.Fatalf("a second change while one is pending: %v", err)
	}
	// Cut off, the follower's last contact ages while the leader's is now:
	// the input of the lease verifier's 65-minute isolation rule.
	p.clock.Advance(2 * time.Hour)
	if age := p.clock.Now().Sub(follower.LastLeaderContact()); age < 2*time.Hour {
		t.Fatalf("an isolated follower's leader contact is only %v old", age)
	}
	if !leader.LastLeaderContact().Equal(p.clock.Now()) {
		t.Fatal("a leader has not heard itself now")
	}
	p.net.setCut(follower.id, false)
	p.stop = pump(p.n1, p.n2)
	waitFor(t, "the pending change to commit once quorum returns", func() bool { return seatOf(follower, "n3") == fleet.Learner })
}

func checkModes(t *testing.T, dir1 string, want1 Mode, dir2 string, want2 Mode) {
	t.Helper()
	for dir, want := range map[string]Mode{dir1: want1, dir2: want2} {
		if f, _, err := ReadFormation(dir); err != nil || f.Mode != want {
			t.Fatalf("formation in %s: %+v, %v; want mode %s", dir, f, err, want)
		}
	}
}

func raftVoters(t *testing.T, n *testNode) []uint64 {
	t.Helper()
	var voters []uint64
	if err := n.call(ctxT(t), func() { voters = slices.Clone(n.loop.conf.GetVoters()) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(voters)
	return voters
}

func sorted(ids ...uint64) []uint64 {
	slices.Sort(ids)
	return ids
}
