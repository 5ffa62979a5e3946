package consensus

import (
	"errors"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// TestApplyRefusesMismatchedConfChange: a conf change entry whose change
// is not the one its command needs (here: a voter seat for a command that
// admits a learner) is applied as no change to Raft and to the fleet, and
// its proposer hears why.
func TestApplyRefusesMismatchedConfChange(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir(), "n1", 1))
	before := n.State()
	admit := fleet.Admit{ID: "n5", Seat: fleet.Learner, RaftEndpoint: "10.0.0.5:6680", Key: testKey(5)}
	p := &proposal{id: 7, cmd: admit, done: make(chan error, 1)}
	if err := n.call(ctxT(t), func() {
		cc := &pb.ConfChange{Type: pb.ConfChangeAddNode.Enum(), NodeId: new(fleet.RaftID("n5")), Context: encodeEnvelope(p.id, admit)}
		if err := n.loop.rn.ProposeConfChange(cc); err != nil {
			t.Error(err)
		}
		n.loop.pending[p.id] = p
		n.loop.unappended = append(n.loop.unappended, p)
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if !errors.Is(err, fleet.ErrInvalidChange) {
			t.Fatalf("mismatched conf change: %v", err)
		}
	case <-ctxT(t).Done():
		t.Fatal("the proposer never heard")
	}
	if voters := raftVoters(t, n); len(voters) != 1 || !n.State().Equal(before) {
		t.Fatalf("a refused conf change changed raft voters %x or the fleet", voters)
	}
	var learners []uint64
	n.call(ctxT(t), func() { learners = n.loop.conf.GetLearners() })
	if len(learners) != 0 {
		t.Fatalf("a refused conf change added learners %x", learners)
	}
	if err := n.Propose(ctxT(t), admit); err != nil {
		t.Fatalf("the proper proposal after a refused one: %v", err)
	}
}

// TestApplyRefusesGarbageEntry: a committed entry that is no command is
// refused by every replica alike; the node keeps running.
func TestApplyRefusesGarbageEntry(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir(), "n1", 1))
	n.barrier(t)
	before, applied := n.State(), n.Status().AppliedIndex
	if err := n.call(ctxT(t), func() {
		if err := n.loop.rn.Propose([]byte{envelopeVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0xff}); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	n.barrier(t)
	if n.Status().AppliedIndex != applied+1 {
		t.Fatalf("applied index %d, want the garbage entry applied at %d", n.Status().AppliedIndex, applied+1)
	}
	if !n.State().Equal(before) || n.Err() != nil {
		t.Fatalf("garbage entry changed the state or stopped the loop: %v", n.Err())
	}
	if err := n.Propose(ctxT(t), fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	cmd := fleet.Set{Name: fleet.SettingFleetOpen, Value: "1"}
	id, got, err := decodeEnvelope(encodeEnvelope(42, cmd))
	if err != nil || id != 42 || got != cmd {
		t.Fatalf("envelope round trip: %d, %#v, %v", id, got, err)
	}
	for _, b := range [][]byte{nil, {envelopeVersion}, {9, 0, 0, 0, 0, 0, 0, 0, 1}} {
		if _, _, err := decodeEnvelope(b); !errors.Is(err, fleet.ErrMalformed) {
			t.Errorf("decodeEnvelope(%x) = %v", b, err)
		}
	}
}
