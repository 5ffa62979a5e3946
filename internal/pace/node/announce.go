package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// announceEvery is how often a node with no worker states itself (pace-node §6.1), the
// heartbeat's cadence: a worker's heartbeats carry the same facts, so a worker announces on it
// only while the fleet's record of it is not what it states.
const announceEvery = heartbeatEvery

// announcer states this node to the leader's scheduler with NODE-ANNOUNCE, worker or not
// (pace-node §6.1), from which the leader records a move (pace-consensus §7.4). It announces
// at start and whenever another leader is known, at once when an endpoint moved, on the
// heartbeat's cadence on a node with no worker, and whenever the fleet's record of this node
// is not what it states; after a failure it tries again in 1 s, then 2, 4, … up to 20 s.
//
// With no leader in its own view — a voter that moved hears nobody until the leader records
// its move — it announces through the other voters it knows: their node ports answer
// not-leader naming the leader, which the link follows.
//
// Each address it finds itself at is numbered once (a statement's sequence): wall-clock
// nanoseconds, never below the previous number + 1 or the recorded one + 1, so numbers grow
// across restarts (the recorded one comes back with the applied state) and a step back of the
// clock. Repeating a statement repeats its number, so the leader records nothing for it.
type announcer struct {
	n      *Node
	link   schedLink
	load   *loadSampler
	stated string // the endpoint seq numbers
	seq    uint64
	leader string        // the leader the last announcement went to, as this node saw it
	next   time.Time     // when one is due again; zero: at once
	wait   time.Duration // the pause after the last failure; 0 after a success
}

func newAnnouncer(n *Node) *announcer {
	return &announcer{n: n, link: schedLink{n: n}, load: newLoadSampler()}
}

func (a *announcer) run(ctx context.Context) {
	t := time.NewTicker(leaderCheckEvery)
	defer t.Stop()
	for {
		if a.due() {
			a.announce(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.n.announceNow:
			a.next = time.Time{}
		}
	}
}

// due reports whether to announce now.
func (a *announcer) due() bool {
	if leader, ok := a.n.cons.Leader(); ok && leader != a.leader || a.next.IsZero() {
		return true
	}
	if a.n.now().Before(a.next) {
		return false
	}
	return a.wait > 0 || a.n.work == nil || a.recordStale()
}

// recordStale: the fleet records this node, at another node endpoint than it states.
func (a *announcer) recordStale() bool {
	m, ok := a.n.cons.State().Member(a.n.id.NodeID)
	return ok && m.NodeEndpoint != a.n.endpoint()
}

// announce sends one announcement and schedules the next.
func (a *announcer) announce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	a.leader, _ = a.n.cons.Leader() // tried once per leader; a failure waits its turn below
	if err := a.send(ctx, a.request()); err != nil {
		a.wait = min(max(2*a.wait, time.Second), announceEvery)
		a.next = a.n.now().Add(a.wait)
		a.n.log.Debug("node announcement not delivered; trying again", "in", a.wait, "err", err)
		return
	}
	a.wait, a.next = 0, a.n.now().Add(announceEvery)
}

// request is this node's statement of itself now, numbered.
func (a *announcer) request() verbs.AnnounceRequest {
	ep := a.n.endpoint()
	self, member := a.n.cons.State().Member(a.n.id.NodeID)
	if ep != a.stated || member && self.NodeEndpoint != ep && self.AnnounceSeq >= a.seq {
		// A new address, or a record newer than this statement that says otherwise (an
		// operator's re-admission cleared it): the node's own view now is the newest word.
		a.seq, a.stated = a.number(self), ep
	}
	load := a.n.load(a.load)
	load.AnnounceSeq = verbs.Some(a.seq)
	return verbs.AnnounceRequest{Endpoint: ep, Capacity: a.n.capacity(""), Load: load}
}

// number is the next statement's sequence.
func (a *announcer) number(self fleet.Member) uint64 {
	seq := max(a.seq+1, uint64(max(a.n.now().UnixNano(), 0)))
	if self.AnnounceSeq < math.MaxUint64 {
		seq = max(seq, self.AnnounceSeq+1)
	}
	return seq
}

// send delivers req to the leader's scheduler, or through the first voter that answers when
// this node knows no leader. It dials each time: announcements are rare, and the node port
// closes a connection idle for 5 s anyway.
func (a *announcer) send(ctx context.Context, req verbs.AnnounceRequest) error {
	targets := a.targets()
	if len(targets) == 0 {
		return errors.New("no leader is known and no other voter has a node endpoint recorded")
	}
	var errs []error
	for _, addr := range targets {
		err := a.link.dial(ctx, addr)
		if err == nil {
			err = a.deliver(ctx, req)
		}
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return errors.Join(errs...)
}

// deliver sends req on the link just dialled, with the history that scheduler has not
// acknowledged (a node without a worker sends no heartbeat to carry it: pace-node §6.5).
func (a *announcer) deliver(ctx context.Context, req verbs.AnnounceRequest) error {
	defer a.link.drop()
	to := a.link.server()
	req.Load.History = a.n.historyOut.Pending(to)
	_, err := a.link.do(ctx, wire.OpNodeAnnounce, req.Append(nil), nil)
	if h := req.Load.History; err == nil && len(h) > 0 && a.link.server() == to {
		a.n.historyOut.Acknowledged(to, h[len(h)-1].StartMs)
	}
	return err
}

// targets are where an announcement goes: the leader's scheduler, else every other voter's
// node port.
func (a *announcer) targets() []string {
	if addr := a.n.schedulerAddr(); addr != "" {
		return []string{addr}
	}
	var out []string
	for _, m := range a.n.cons.State().Members() {
		if m.Seat == fleet.Voter && m.ID != a.n.id.NodeID && m.NodeEndpoint != "" {
			out = append(out, m.NodeEndpoint)
		}
	}
	return out
}
