package consensus

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// A two-voter fleet whose second voter is gone for good cannot commit anything: its quorum is
// lost. Offline recovery on the survivor makes it the cluster's only voter again, forgets the
// lost member (revoking its key) and keeps everything else it knew.
func TestRecoveryBringsBackAClusterWhoseQuorumWasLost(t *testing.T) {
	p := newPair(t)
	joinAsLearner(t, p)
	promote(t, p)
	p.propose(t, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "3min"})
	survivor := p.n1
	p.stop()
	p.n2.Stop() // gone for good
	short, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	if err := survivor.Propose(short, fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}); err == nil {
		t.Fatal("a voter without its quorum committed a change")
	}
	cfg := survivor.cfg
	survivor.Stop()

	rep, err := Recover(ctxT(t), cfg, []string{"n2"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Forgotten, []string{"n2"}) || len(rep.Demoted) != 0 || rep.ClusterID != p.n2.State().ClusterID() {
		t.Fatalf("report %+v", rep)
	}
	back := openNode(t, cfg)
	stop := pump(back)
	defer stop()
	waitFor(t, "the recovered node to lead", back.IsLeader)
	if err := back.Propose(ctxT(t), fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}); err != nil {
		t.Fatalf("the recovered cluster does not commit: %v", err)
	}
	st := back.State()
	if st.Voters() != 1 || st.Settings().LeaseLifetime != 3*time.Minute || !st.Revoked(testKey(2)) {
		t.Fatalf("recovered state %s: want one voter, the setting kept, n2's key revoked", st)
	}
	if f, _, _ := ReadFormation(cfg.StateDir); f.Mode != Voter {
		t.Errorf("formation mode %s after recovery", f.Mode)
	}
}

// Without a forget list the other voters stay members, as learners; recovery refuses to forget
// the node it runs on, and refuses a running node (raft.db is locked).
func TestRecoveryKeepsTheOthersAsLearners(t *testing.T) {
	p := newPair(t)
	joinAsLearner(t, p)
	promote(t, p)
	p.stop()
	cfg := p.n1.cfg
	cfg.LockTimeout = 100 * time.Millisecond
	if _, err := Recover(ctxT(t), cfg, nil); err == nil {
		t.Fatal("recovery ran on a node that is running")
	}
	p.n1.Stop()
	p.n2.Stop()
	if _, err := Recover(ctxT(t), cfg, []string{"n1"}); err == nil {
		t.Fatal("recovery forgot the node it runs on")
	}
	rep, err := Recover(ctxT(t), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Demoted, []string{"n2"}) {
		t.Fatalf("demoted %v", rep.Demoted)
	}
	back := openNode(t, cfg)
	if m, ok := back.State().Member("n2"); !ok || m.Seat != fleet.Learner {
		t.Fatalf("n2 after recovery: %+v, %v", m, ok)
	}
	if errors.Is(back.Err(), ErrStopped) {
		t.Fatal(back.Err())
	}
}
