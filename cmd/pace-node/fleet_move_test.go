package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
)

// TestAVoterThatMovesIsReRecorded (pace-consensus §7.4): three voters, each on auto endpoints
// derived from the address its machine routes from, form a fleet. One follower's machine is
// given a new address: the node follows it, counts both moves, ends its consensus links and
// announces itself; the leader records its consensus and node endpoints at the new host and
// dials it there; and the fleet commits over the new links, with the mover caught up — also
// once the other follower is dead, so that no commit can do without the moved voter.
func TestAVoterThatMovesIsReRecorded(t *testing.T) {
	_, hosts := netlab.ForTest(t, "v1", "v2", "v3")
	voters := make([]*machine, len(hosts))
	for i, h := range hosts {
		voters[i] = newMachine(t, h)
		voters[i].followRoute()
	}
	voters[0].start("--slots=0")
	for _, m := range voters[1:] {
		m.start("--slots=0", "--fleet-seed="+voters[0].addr())
		admit(t, voters[0], "--cluster-admit="+m.admitLine())
	}
	eventually(t, "three voters", 30*time.Second, func() (bool, string) {
		st := voters[0].status()
		v, _ := seats(st)
		return v == 3, st
	})
	leader := leaderMachine(t, voters)
	mover, other := followers(leader, voters)
	defer logOnFailure(t, leader, mover)
	// Restarted, the mover holds the links of a voter, not those it made as a learner: the
	// leader dials it at its recorded endpoint, and has to redial once that moves.
	mover.kill()
	mover.start("--slots=0")
	commitWith(t, leader, mover, "lease-lifetime=6min")
	moveAndCheck(t, leader, mover)
	commitWith(t, leader, mover, "lease-lifetime=7min")
	other.kill()
	commitWith(t, leader, mover, "lease-lifetime=8min")
}

// moveAndCheck gives the mover's machine a new address and waits for the leader to record it
// there; the mover counted the move of each endpoint.
func moveAndCheck(t *testing.T, leader, mover *machine) {
	t.Helper()
	series := []string{"pace_node_endpoint_changes_total", "pace_node_raft_endpoint_changes_total"}
	before := map[string]float64{}
	for _, s := range series {
		before[s] = mover.metric(s)
	}
	from := mover.host.Addr()
	to, err := mover.host.Readdress()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s moved from %s to %s", mover.name, from, to)
	eventually(t, "the leader to record "+mover.name+" at "+to, 30*time.Second, func() (bool, string) {
		st := leader.status()
		raft, node := endpointsOf(st, mover.name)
		return raft == to+":6680" && node == to+":6674", st
	})
	for _, s := range series {
		if n := mover.metric(s); n <= before[s] {
			t.Errorf("%s: %s stayed at %v", mover.name, s, n)
		}
	}
}

// commitWith sets a cluster setting at the leader and waits for the mover to hold the commit.
func commitWith(t *testing.T, leader, mover *machine, setting string) {
	t.Helper()
	admit(t, leader, "--cluster-set="+setting)
	want := leader.metric("pace_node_consensus_commit_index")
	eventually(t, mover.name+" to catch up with "+setting, 20*time.Second, func() (bool, string) {
		got := mover.metric("pace_node_consensus_commit_index")
		return got >= want, fmt.Sprintf("%v of %v", got, want)
	})
}

// followers are the two voters that do not lead.
func followers(leader *machine, voters []*machine) (a, b *machine) {
	var out []*machine
	for _, m := range voters {
		if m != leader {
			out = append(out, m)
		}
	}
	return out[0], out[1]
}

// endpointsOf reads a member's consensus and node endpoints from a status report.
func endpointsOf(status, member string) (raft, node string) {
	for line := range strings.Lines(status) {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == member && f[2] == "raft" && f[4] == "node" {
			return f[3], f[5]
		}
	}
	return "", ""
}

// logOnFailure prints the machines' logs when the test failed.
func logOnFailure(t *testing.T, ms ...*machine) {
	if t.Failed() {
		for _, m := range ms {
			t.Logf("%s:\n%s", m.name, m.logText())
		}
	}
}
