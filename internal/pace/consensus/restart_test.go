package consensus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/raftstore"
)

// foundEntries counts the Found commands the node's log still holds.
func foundEntries(t *testing.T, n *testNode) int {
	t.Helper()
	first, _ := n.store.FirstIndex()
	last, _ := n.store.LastIndex()
	ents, err := n.store.Entries(first, last+1, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, e := range ents {
		if _, cmd, err := decodeEnvelope(e.GetData()); err == nil && cmd.Kind() == fleet.KindFound {
			count++
		}
	}
	return count
}

// TestRestartRecovers (pace-node §1.2 "every later start resumes the recorded
// mode"): a restart keeps cluster id, members, keys and settings from raft.db
// and founds nothing again.
func TestRestartRecovers(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, "n1", 1)
	n := openNode(t, cfg)
	ctx := ctxT(t)
	for _, cmd := range []fleet.Command{
		fleet.Set{Name: fleet.SettingLeaseLifetime, Value: "20min"},
		fleet.Admit{ID: "n2", Seat: fleet.Learner, RaftEndpoint: "10.0.0.2:6680", Key: testKey(2)},
		fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"},
		fleet.Admit{ID: "n3", Seat: fleet.Learner, RaftEndpoint: "10.0.0.3:6680", Key: testKey(3)},
		fleet.Forget{ID: "n3"},
	} {
		if err := n.Propose(ctx, cmd); err != nil {
			t.Fatalf("Propose(%#v): %v", cmd, err)
		}
	}
	before, term := n.State(), n.Status().Term
	n.Stop()

	again := openNode(t, cfg)
	if !again.State().Equal(before) {
		t.Fatalf("restart changed the fleet state:\n%v\n%v", before, again.State())
	}
	if again.State().Settings().LeaseLifetime != 20*time.Minute || !again.State().Revoked(testKey(3)) {
		t.Fatal("settings or revocations lost")
	}
	if !again.IsLeader() || again.Status().Term <= term {
		t.Fatalf("restarted node: leader %v, term %d (was %d)", again.IsLeader(), again.Status().Term, term)
	}
	if c := foundEntries(t, again); c != 1 {
		t.Fatalf("the log holds %d Found entries after a restart, want the one from founding", c)
	}
	if form, _, _ := ReadFormation(dir); form.Mode != Voter || form.ClusterID != before.ClusterID() {
		t.Fatalf("formation %+v: a founder whose cluster grew is a voter", form)
	}
}

// TestRestartFromSnapshot: snapshots and compaction happen every
// SnapshotEvery entries; a restart restores the snapshot and replays the
// rest.
func TestRestartFromSnapshot(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), "n1", 1)
	cfg.SnapshotEvery, cfg.SnapshotCatchUp = 4, 2
	n := openNode(t, cfg)
	ctx := ctxT(t)
	for i := range 11 {
		value := []string{"20min", "30min"}[i%2]
		if err := n.Propose(ctx, fleet.Set{Name: fleet.SettingLeaseLifetime, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Propose(ctx, fleet.Admit{ID: "n2", Seat: fleet.Learner, RaftEndpoint: "10.0.0.2:6680", Key: testKey(2)}); err != nil {
		t.Fatal(err)
	}
	n.barrier(t)
	snap, _ := n.store.Snapshot()
	first, _ := n.store.FirstIndex()
	if snap.GetMetadata().GetIndex() <= foundingEntryIndex || first <= foundingEntryIndex {
		t.Fatalf("no snapshot or compaction: snapshot at %d, first index %d", snap.GetMetadata().GetIndex(), first)
	}
	before := n.State()
	n.Stop()

	again := openNode(t, cfg)
	if !again.State().Equal(before) {
		t.Fatalf("restore from snapshot changed the state:\n%v\n%v", before, again.State())
	}
	if c := foundEntries(t, again); c != 0 {
		t.Fatalf("compacted log still holds %d Found entries", c)
	}
	if err := again.Propose(ctx, fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}); err != nil {
		t.Fatalf("propose after restoring a snapshot: %v", err)
	}
}

// TestInterruptedFoundingCompletes: a crash after the formation record was
// written and before raft.db was founded leaves an empty store; the next
// start founds the cluster the record names.
func TestInterruptedFoundingCompletes(t *testing.T) {
	dir := t.TempDir()
	const id = "00112233445566778899aabbccddeeff"
	if err := WriteFormation(dir, Formation{Mode: Solitary, ClusterID: id}); err != nil {
		t.Fatal(err)
	}
	n := openNode(t, testConfig(t, dir, "n1", 1))
	if n.State().ClusterID() != id || !n.IsLeader() {
		t.Fatalf("founded %q (leader %v), want the recorded %s", n.State().ClusterID(), n.IsLeader(), id)
	}
}

// TestStateDirDisagreementRefused: a Raft log without a formation record,
// or a record naming another cluster than the log, refuses the start.
func TestStateDirDisagreementRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, "n1", 1)
	n := openNode(t, cfg)
	cluster := n.State().ClusterID()
	n.Stop()

	if err := WriteFormation(dir, Formation{Mode: Solitary, ClusterID: strings.Repeat("ab", 16)}); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctxT(t), cfg)
	if !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), cluster) {
		t.Fatalf("formation naming another cluster: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, FormationFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctxT(t), cfg)
	if !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), filepath.Join(dir, raftstore.FileName)) {
		t.Fatalf("raft.db without a formation record: %v", err)
	}
	if _, exists, _ := ReadFormation(dir); exists {
		t.Fatal("a refused start minted a formation record")
	}
}

// TestSecondOpenRefused: a second node on the same state directory is
// refused, naming raft.db (raftstore's own test shows the same from a
// second process).
func TestSecondOpenRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, "n1", 1)
	openNode(t, cfg)
	_, err := Open(ctxT(t), cfg)
	if !errors.Is(err, raftstore.ErrLocked) || !strings.Contains(err.Error(), filepath.Join(dir, raftstore.FileName)) {
		t.Fatalf("second Open = %v", err)
	}
}

// TestStoppedNode: a stopped node refuses cleanly and stops only once.
func TestStoppedNode(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir(), "n1", 1))
	n.Stop()
	n.Stop()
	if err := n.Propose(ctxT(t), fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Propose on a stopped node: %v", err)
	}
	if err := n.Step(ctxT(t), heartbeatTo(n.id)); !errors.Is(err, ErrStopped) {
		t.Fatalf("Step on a stopped node: %v", err)
	}
	if n.Err() != nil {
		t.Fatalf("a clean stop reports a failure: %v", n.Err())
	}
}
