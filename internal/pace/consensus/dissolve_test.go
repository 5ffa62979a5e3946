package consensus

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/raftstore"
)

// A node that founded its own cluster of one, admitted by a fleet, dissolves its cluster
// (archived, not deleted), becomes the fleet's learner and applies the fleet's state from the
// leader's snapshot. A node of a fleet joins no other.
func TestASolitaryNodeDissolvesItsClusterToJoinAFleet(t *testing.T) {
	net := newMemNet()
	t.Cleanup(net.close)
	clock := newFakeClock()
	config := func(id string, key byte) Config {
		cfg := testConfig(t, t.TempDir(), id, key)
		cfg.Transport, cfg.Now, cfg.ElectionTicks = net.transport(fleet.RaftID(id)), clock.Now, 50
		return cfg
	}
	n1, n2 := openNode(t, config("n1", 1)), openNode(t, config("n2", 2))
	net.attach(n1.Node)
	net.attach(n2.Node)
	stop := pump(n1, n2)
	t.Cleanup(stop)
	own := n2.State().ClusterID()
	if err := n1.Propose(ctxT(t), fleet.Admit{ID: "n2", Seat: fleet.Learner, RaftEndpoint: "127.0.0.2:6680", Key: testKey(2)}); err != nil {
		t.Fatal(err)
	}
	if err := n2.Join(ctxT(t), n1.State().ClusterID()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the joiner to apply the fleet's state", func() bool { return n2.State().Equal(n1.State()) })
	if f, _, _ := ReadFormation(n2.cfg.StateDir); f.Mode != Learner || f.ClusterID != n1.State().ClusterID() {
		t.Fatalf("formation after the join: %+v", f)
	}
	if _, err := os.Stat(filepath.Join(n2.cfg.StateDir, ArchiveDir, own, raftstore.FileName)); err != nil {
		t.Fatalf("the dissolved cluster's store was not archived: %v", err)
	}
	if err := n2.Join(ctxT(t), "another"); !errors.Is(err, ErrNotJoinable) {
		t.Fatalf("a learner joining another fleet: %v", err)
	}
}
