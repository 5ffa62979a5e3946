package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
)

// TestAFleetAcrossMachines: five machines (and an intruder), each a pace-node in a network namespace of its own
// on one segment, form a fleet the way an operator would: v1 founds it; the others start with
// --fleet-seed, ask to join and are admitted with the line they log — v2 and v3 as voters
// (learners first, promoted once caught up), l1 and client as learners. Then a Lua build on
// the client compiles on the other machines; the leader is killed in the middle of it; a voter
// is partitioned and heals; a machine is forgotten; a promotion that would lose the quorum is
// refused; a machine that claims a member's id under another key is refused its proof.
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
	t.Run("a machine claiming a member's id with another key is refused its proof", func(t *testing.T) {
		leader := leaderMachine(t, voters)
		victim := voters[0]
		if victim == leader {
			victim = voters[1]
		}
		impostor := &machine{t: t, name: victim.name, host: hosts[5], dir: t.TempDir()}
		impostor.start("--slots=0", "--fleet-seed="+leader.addr())
		defer func() {
			if t.Failed() {
				t.Log(impostor.logText())
			}
		}()
		eventually(t, "the impostor's proof refused", 30*time.Second, func() (bool, string) {
			n := leader.metric("pace_raft_peer_connections_refused_proof_total")
			return n > 0, fmt.Sprint(n)
		})
		if n := impostor.metric("pace_raft_peer_dials_ended_by_acceptor_total"); n < 1 {
			t.Errorf("the impostor's own count of closed dials: %v", n)
		}
		impostor.kill()
	})
	t.Run("a forget ends the forgotten machine's links, and its redials are refused", func(t *testing.T) {
		leader := leaderMachine(t, voters)
		admit(t, leader, "--cluster-forget=l1")
		l1 := ms["l1"]
		eventually(t, "l1 told its key is revoked", 30*time.Second, func() (bool, string) {
			n := l1.metric("pace_raft_peer_dials_refused_own_key_revoked_total") + l1.metric("pace_raft_peer_dials_ended_key_withdrawn_total")
			return n > 0, fmt.Sprint(n)
		})
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

// luaAcrossMachines builds Lua on the client, whose node has no worker, with every compile
// leased from the fleet's leader and compiled elsewhere; once compiles are flowing the leader
// is killed, and the build must still finish with every object byte-identical to plain gcc's.
func luaAcrossMachines(t *testing.T, ms map[string]*machine) {
	tarball := corpusTarball(t, "lua5.4_5.4.4.orig.tar.gz")
	plain := untarIn(t, tarball)
	cmd := exec.Command("make", "-j2", "posix")
	cmd.Dir = plain
	out, err := cmd.CombinedOutput()
	must(t, out, err, "plain build")
	src := untarIn(t, tarball)
	client := ms["client"]
	build := client.host.Command(context.Background(), "make", "-j2", "posix", "CC="+paceCC+" gcc")
	build.Dir = src
	build.Env = append(os.Environ(), "HOME="+t.TempDir(), "PACE_ADDR=127.0.0.1:6674", "PACE_SCHEDULER=127.0.0.1:6674", "LC_ALL=C")
	var buildOut strings.Builder
	build.Stdout, build.Stderr = &buildOut, &buildOut
	if err := build.Start(); err != nil {
		t.Fatal(err)
	}
	v1 := ms["v1"]
	finished := make(chan error, 1)
	go func() { finished <- build.Wait() }()
	eventually(t, "compiles leased by the founder", 2*time.Minute, func() (bool, string) {
		select {
		case err := <-finished:
			t.Fatalf("the build ended (%v) before the founder leased 4 compiles:\n%s", err, buildOut.String())
		default:
		}
		n := v1.metric("pace_dispatch_leases_granted_total")
		return n >= 4, fmt.Sprint(n)
	})
	v1.kill() // the leader, in the middle of the build
	if err := <-finished; err != nil {
		t.Fatalf("the build failed after the leader died: %v\n%s", err, buildOut.String())
	}
	compiled := 0.0
	for _, name := range []string{"v1", "v2", "v3", "l1"} {
		if name != "v1" {
			compiled += ms[name].metric("pace_worker_jobs_completed_total")
		}
	}
	if compiled == 0 {
		t.Fatalf("no compile landed on the surviving machines; build log:\n%s", buildOut.String())
	}
	objs, _ := filepath.Glob(filepath.Join(src, "src", "*.o"))
	if len(objs) < 30 {
		t.Fatalf("%d objects", len(objs))
	}
	for _, o := range objs {
		sameFile(t, o, filepath.Join(plain, "src", filepath.Base(o)))
	}
	t.Logf("%d objects byte-identical to plain gcc; %.0f compiled on v2, v3 and l1", len(objs), compiled)
}

func untarIn(t *testing.T, tarball string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("tar", "-xzf", tarball, "-C", dir, "--strip-components=1").CombinedOutput()
	must(t, out, err, "untar")
	return dir
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
