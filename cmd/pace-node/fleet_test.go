package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestAFleetAcrossMachines: five machines (and an intruder), each a pace-node in a network namespace of its own
// on one segment, form a fleet the way an operator would: v1 founds it; the others start with
// --fleet-seed, ask to join and are admitted with the line they log — v2 and v3 as voters
// (learners first, promoted once caught up), l1 and client as learners. Then a Lua build on
// the client compiles on the other machines; the leader is killed in the middle of it; a voter
// is partitioned and heals; a promotion that would lose the quorum is
// refused; hostile frames and a machine that claims a member's id under another key are
// refused; a machine is forgotten; two voters die for good and the survivor is recovered.
func TestAFleetAcrossMachines(t *testing.T) {
	_, hosts := netlab.ForTest(t, "v1", "v2", "v3", "l1", "client", "intruder")
	ms := map[string]*machine{}
	for _, h := range hosts[:5] {
		ms[h.Name()] = newMachine(t, h)
	}
	v1 := ms["v1"]
	v1.start("--slots=2")
	seed := "--fleet-seed=" + v1.addr()
	for _, name := range []string{"v2", "v3", "l1"} {
		ms[name].start("--slots=2", seed)
	}
	ms["client"].start("--slots=0", seed)
	for _, name := range []string{"v2", "v3"} {
		admit(t, v1, "--cluster-admit="+ms[name].admitLine())
	}
	for _, name := range []string{"l1", "client"} {
		admit(t, v1, "--cluster-admit-learner="+ms[name].admitLine())
	}
	eventually(t, "three voters and two learners", time.Minute, func() (bool, string) {
		st := v1.status()
		v, l := seats(st)
		return v == 3 && l == 2, st
	})

	t.Run("a Lua build on the client compiles on the other machines; the leader dies in the middle", func(t *testing.T) {
		luaAcrossMachines(t, ms)
	})
	v1.start("--slots=2") // the killed leader comes back: a voter of the fleet again
	eventually(t, "the returning voter to hear the leader", time.Minute, func() (bool, string) {
		n := v1.metric("pace_node_consensus_leader")
		return n == 1, fmt.Sprint(n)
	})
	voters := liveVoters(ms)
	t.Run("a partitioned voter misses a change and catches up once it heals", func(t *testing.T) {
		partitionAndHeal(t, voters)
	})
	t.Run("promoting a machine that never connected is refused; the quorum stays", func(t *testing.T) {
		leader := leaderMachine(t, voters)
		admit(t, leader, "--cluster-admit-learner=ghost="+ms["client"].host.Addr()+":6999@11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
		out, err := leader.tryOperator("--scheduler="+leader.addr(), "--cluster-admit=ghost="+ms["client"].host.Addr()+":6999")
		if err == nil || !strings.Contains(out, "ghost cannot become a voter yet") {
			t.Fatalf("promoting a member that never connected: %v\n%s", err, out)
		}
		admit(t, leader, "--cluster-forget=ghost")
	})
	t.Run("hostile frames at the leader are each refused under their own counter", func(t *testing.T) {
		leader := leaderMachine(t, voters)
		other := voters[0]
		if other == leader {
			other = voters[1]
		}
		attackTheLink(t, newLinkAttacker(t, hosts[5], leader, slices.Collect(maps.Values(ms))), ms["l1"], other)
	})
	t.Run("a machine claiming a member's id with another key is refused its proof", func(t *testing.T) {
		leader := leaderMachine(t, voters)
		victim := voters[0]
		if victim == leader {
			victim = voters[1]
		}
		impostor := &machine{t: t, name: victim.name, host: hosts[5], dir: t.TempDir()}
		before := leader.metric("pace_raft_peer_connections_refused_proof_total")
		impostor.start("--slots=0", "--fleet-seed="+leader.addr())
		defer func() {
			if t.Failed() {
				t.Log(impostor.logText())
			}
		}()
		eventually(t, "the impostor's proof refused", 30*time.Second, func() (bool, string) {
			n := leader.metric("pace_raft_peer_connections_refused_proof_total")
			return n > before, fmt.Sprint(n)
		})
		eventually(t, "the impostor's own count of closed dials", 10*time.Second, func() (bool, string) {
			n := impostor.metric("pace_raft_peer_dials_ended_by_acceptor_total")
			return n > 0, fmt.Sprint(n)
		})
		impostor.kill()
	})
	t.Run("a forget ends the forgotten machine's link and proven session; its worker is granted nothing", func(t *testing.T) {
		forgetAMachine(t, ms, voters, hosts[5])
	})
	t.Run("a worker stopped by SIGTERM withdraws from the leader at once", func(t *testing.T) {
		stopAWorker(t, voters)
	})
	t.Run("a quorum lost for good comes back by the offline recovery", func(t *testing.T) {
		recoverALostQuorum(t, voters)
	})
}

// admit runs a cluster verb at the leader through the operator's command line.
func admit(t *testing.T, at *machine, verb string) {
	t.Helper()
	at.operator("--scheduler="+at.addr(), verb)
}

func liveVoters(ms map[string]*machine) []*machine {
	var out []*machine
	for _, name := range []string{"v1", "v2", "v3"} {
		if m := ms[name]; m.cmd.ProcessState == nil {
			out = append(out, m)
		}
	}
	return out
}

// leaderMachine is the machine the fleet says leads.
func leaderMachine(t *testing.T, voters []*machine) *machine {
	t.Helper()
	var leader *machine
	eventually(t, "a leader", time.Minute, func() (bool, string) {
		st, err := voters[0].tryOperator("--scheduler="+voters[0].addr(), "--cluster-status")
		name := leaderOf(st)
		for _, m := range voters {
			if m.name == name {
				leader = m
			}
		}
		return err == nil && leader != nil, st
	})
	return leader
}

// partitionAndHeal cuts one follower off, commits a change without it, and checks it applies
// the change once it is back.
func partitionAndHeal(t *testing.T, voters []*machine) {
	leader := leaderMachine(t, voters)
	var cut *machine
	for _, m := range voters {
		if m != leader {
			cut = m
		}
	}
	if err := cut.host.Isolate(); err != nil {
		t.Fatal(err)
	}
	admit(t, leader, "--cluster-set=lease-lifetime=7min")
	behind := cut.metric("pace_node_consensus_commit_index")
	want := leader.metric("pace_node_consensus_commit_index")
	if behind >= want {
		t.Fatalf("the cut-off voter is at commit %v, the leader at %v", behind, want)
	}
	if err := cut.host.Rejoin(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the healed voter to catch up", time.Minute, func() (bool, string) {
		got := cut.metric("pace_node_consensus_commit_index")
		return got >= want, fmt.Sprintf("%v of %v", got, want)
	})
}

// forgetAMachine forgets l1, a learner with a worker, while it holds a consensus link to the
// leader and while a copy of its key holds a proven node-port session there: the link ends, the
// session's next request is refused as a revoked key, and a build after the forget lands no
// compile on l1.
func forgetAMachine(t *testing.T, ms map[string]*machine, voters []*machine, from *netlab.Host) {
	leader := leaderMachine(t, voters)
	l1 := ms["l1"]
	session := newLinkAttacker(t, from, leader, slices.Collect(maps.Values(ms))).provenSession(l1)
	defer session.Close()
	revokedBefore := leader.metric("pace_node_requests_refused_key_revoked_total")
	admit(t, leader, "--cluster-forget=l1")
	eventually(t, "l1 told its key is revoked", 30*time.Second, func() (bool, string) {
		n := l1.metric("pace_raft_peer_dials_refused_own_key_revoked_total") + l1.metric("pace_raft_peer_dials_ended_key_withdrawn_total")
		return n > 0, fmt.Sprint(n)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := session.Do(ctx, wire.OpClusterStatus); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("the forgotten machine's proven session, next request: %v", err)
	}
	if n := leader.metric("pace_node_requests_refused_key_revoked_total"); n <= revokedBefore {
		t.Fatalf("pace_node_requests_refused_key_revoked_total stayed at %v", n)
	}
	onL1 := jobsOn(ms, "l1")
	elsewhere := jobsOn(ms, "v1", "v2", "v3")
	startLuaBuild(t, ms["client"], "MYCFLAGS=-DPACE_AFTER_FORGET").wait(t, "a build after the forget")
	if n := jobsOn(ms, "l1"); n != onL1 {
		t.Fatalf("the forgotten machine compiled %v jobs after the forget", n-onL1)
	}
	if n := jobsOn(ms, "v1", "v2", "v3"); n <= elsewhere {
		t.Fatalf("the build after the forget compiled nothing on the voters (%v then, %v now)", elsewhere, n)
	}
}

// stopAWorker stops a follower voter with SIGTERM once the connection its registrar keeps
// between beats has likely been closed as idle by the leader (5 s): its registrations must
// leave the leader's scheduler at once, not 90 s later.
func stopAWorker(t *testing.T, voters []*machine) {
	leader := leaderMachine(t, voters)
	var follower *machine
	for _, m := range voters[1:] {
		if m != leader {
			follower = m
		}
	}
	time.Sleep(6 * time.Second)
	before := leader.metric("pace_dispatch_workers_withdrawn_total")
	follower.stop()
	eventually(t, "the leader to count the stopped worker's withdrawal", 3*time.Second, func() (bool, string) {
		n := leader.metric("pace_dispatch_workers_withdrawn_total")
		return n > before, fmt.Sprint(n)
	})
}

// recoverALostQuorum kills two of the three voters for good: the survivor commits nothing. Once
// it is stopped, pace-node --cluster-recover makes it the only voter; restarted, it leads again
// and commits.
func recoverALostQuorum(t *testing.T, voters []*machine) {
	survivor := voters[0]
	for _, m := range voters[1:] {
		m.kill()
	}
	eventually(t, "the survivor to lose its leader", 30*time.Second, func() (bool, string) {
		n := survivor.metric("pace_node_consensus_leader")
		return n == 0, fmt.Sprint(n)
	})
	if out, err := survivor.tryOperator("--scheduler="+survivor.addr(), "--cluster-set=lease-lifetime=8min"); err == nil {
		t.Fatalf("a change committed without a quorum:\n%s", out)
	}
	survivor.kill()
	out := survivor.operator("--cluster-dir="+survivor.dir, "--cluster-recover")
	t.Logf("--cluster-recover:\n%s", out)
	survivor.start("--slots=2")
	eventually(t, "the recovered voter to lead", 30*time.Second, func() (bool, string) {
		st, err := survivor.tryOperator("--scheduler="+survivor.addr(), "--cluster-status")
		v, _ := seats(st)
		return err == nil && leaderOf(st) == survivor.name && v == 1, st
	})
	admit(t, survivor, "--cluster-set=lease-lifetime=8min")
}
