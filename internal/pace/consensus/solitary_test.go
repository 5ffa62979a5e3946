package consensus

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// TestFoundsClusterOfOne (pace-node §1.2): a first start mints a cluster id,
// records solitary, founds a cluster of one whose fleet state names this node
// as a voter with its key, and leads it.
func TestFoundsClusterOfOne(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir, "n1", 1))
	n.barrier(t)
	if !n.IsLeader() {
		t.Fatal("a cluster of one is not led by its only member")
	}
	st := n.State()
	key, ok := st.VoterKey("n1")
	if !ok || !bytes.Equal(key, testKey(1)) {
		t.Fatalf("founder not a voter with its key: %v", st)
	}
	form, exists, err := ReadFormation(dir)
	if err != nil || !exists || form.Mode != Solitary || form.ClusterID != st.ClusterID() {
		t.Fatalf("formation %+v (exists %v, %v) vs state cluster %s", form, exists, err, st.ClusterID())
	}
}

func TestFoundsRecordsEndpointsAndAnnounces(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t, t.TempDir(), "n1", 1)
	cfg.Now = clock.Now
	n := openNode(t, cfg)
	n.barrier(t)
	m, ok := n.State().Member("n1")
	if !ok || m.RaftEndpoint != "127.0.0.1:6680" || m.NodeEndpoint != "127.0.0.1:6674" || m.SchedulerEndpoint != "127.0.0.1:6674" {
		t.Fatalf("founder record %+v: endpoints or the leader's scheduler announcement missing", m)
	}
	if m.AnnounceSeq != uint64(clock.Now().UnixNano()) {
		t.Fatalf("announcement sequence %d, want the clock's %d", m.AnnounceSeq, clock.Now().UnixNano())
	}
	if got := n.LastLeaderContact(); !got.Equal(clock.Now()) {
		t.Fatalf("a leader's last contact is %v, want now (%v)", got, clock.Now())
	}
	st := n.Status()
	if st.Role != RoleLeader || st.LeaderID != "n1" || st.Mode != Solitary || len(st.Members) != 1 ||
		st.Members[0] != (MemberSeat{ID: "n1", Seat: fleet.Voter}) || st.Term < 2 || st.CommitIndex != st.AppliedIndex {
		t.Fatalf("status %+v", st)
	}
}

// TestLeadershipHoldsUnderTicks: a cluster of one leads after zero ticks
// and keeps leading through many election timeouts (check-quorum counts
// the leader itself; pre-vote keeps the term still).
func TestLeadershipHoldsUnderTicks(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir(), "n1", 1))
	term := n.Status().Term
	n.tick(t, 5*DefaultElectionTicks)
	if !n.IsLeader() || n.Status().Term != term {
		t.Fatalf("after 5 election timeouts: leader %v, term %d (was %d)", n.IsLeader(), n.Status().Term, term)
	}
}

// TestProposeSettingsAndRefusals (pace-node §3.2, pace-consensus §7.6): a
// setting applies and is read back; what the state refuses is refused before it
// is proposed.
func TestProposeSettingsAndRefusals(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir(), "n1", 1))
	ctx := ctxT(t)
	if err := n.Propose(ctx, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "20min"}); err != nil {
		t.Fatal(err)
	}
	if got := n.State().Settings().LeaseLifetime; got != 20*time.Minute {
		t.Fatalf("lease-lifetime %v after Propose returned", got)
	}
	n.barrier(t)
	applied := n.Status().AppliedIndex
	refusals := []struct {
		cmd    fleet.Command
		want   error
		phrase string
	}{
		{fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "20min"}, fleet.ErrNotNeeded, "already 20min"},
		{fleet.Set{Name: "upstream", Value: "kv:6379"}, fleet.ErrInvalidChange, "upstream"},
		{fleet.Set{Name: "colour", Value: "blue"}, fleet.ErrInvalidChange, "unknown setting"},
		{fleet.Forget{ID: "n1"}, fleet.ErrInvalidChange, "only voter"},
		{fleet.Forget{ID: "n9"}, fleet.ErrInvalidChange, "not a member"},
		{fleet.Found{ClusterID: n.State().ClusterID(), ID: "x", Key: testKey(9)}, fleet.ErrInvalidChange, "already founded"},
	}
	for _, r := range refusals {
		err := n.Propose(ctx, r.cmd)
		if !errors.Is(err, r.want) || !strings.Contains(err.Error(), r.phrase) {
			t.Errorf("Propose(%#v) = %v, want %v naming %q", r.cmd, err, r.want, r.phrase)
		}
	}
	n.barrier(t)
	if got := n.Status().AppliedIndex; got != applied {
		t.Fatalf("refused proposals reached the log: applied %d → %d", applied, got)
	}
}

// TestALeaderAnnouncesItsEndpointsAsTheyAreNow (pace-consensus §7.4): a node that moved since
// it was configured announces where it is now when it next leads, not where it started; a
// restart where it was announces nothing.
func TestALeaderAnnouncesItsEndpointsAsTheyAreNow(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t, t.TempDir(), "n1", 1)
	cfg.Now = clock.Now
	openNode(t, cfg).Stop()
	clock.Advance(time.Minute)
	cfg.Endpoints = func() (string, string) { return "10.0.0.9:6680", "10.0.0.9:6674" }
	moved := openNode(t, cfg)
	moved.barrier(t)
	m, _ := moved.State().Member("n1")
	if m.RaftEndpoint != "10.0.0.9:6680" || m.NodeEndpoint != "10.0.0.9:6674" || m.SchedulerEndpoint != "10.0.0.9:6674" ||
		m.AnnounceSeq != uint64(clock.Now().UnixNano()) {
		t.Fatalf("after a restart at a new address the record is %+v", m)
	}
	moved.Stop()
	clock.Advance(time.Minute)
	again := openNode(t, cfg)
	again.barrier(t)
	if m2, _ := again.State().Member("n1"); m2.AnnounceSeq != m.AnnounceSeq {
		t.Fatalf("a restart at the recorded address announced again: sequence %d, was %d", m2.AnnounceSeq, m.AnnounceSeq)
	}
}
