package raftnet

import (
	"context"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// maintainEvery paces Maintain.
const maintainEvery = 500 * time.Millisecond

// Maintain keeps the links as the fleet says until ctx ends: a node that is dialled (a voter,
// a cluster of one) listens on the consensus port, and one that dials every voter (a learner,
// or a node pending admission) does not and keeps a link to every voter, so whichever leads
// can reach it; a member this node no longer knows has its links closed; and every link asks
// the roster again, so a revoked key ends even an idle link.
func (t *Transport) Maintain(ctx context.Context) {
	tk := time.NewTicker(maintainEvery)
	defer tk.Stop()
	defer t.stopListening()
	for {
		peers := t.cfg.Peers()
		t.listenWhileDialled(!peers.DialsVoters())
		t.prune(peers)
		if peers.DialsVoters() {
			t.reachVoters(peers)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.ctx.Done():
			return
		case <-tk.C:
		}
	}
}

// listenWhileDialled opens the consensus port when this node is to be dialled and closes it
// when it is not. A port that cannot be bound is tried again at the next pass.
func (t *Transport) listenWhileDialled(dialled bool) {
	switch {
	case dialled && t.ln == nil && t.cfg.Listen != nil:
		ln, err := t.cfg.Listen()
		if err != nil {
			t.log.Warn("cannot listen on the consensus port; trying again", "err", err)
			return
		}
		t.ln = ln
		t.wg.Add(1)
		go func() { defer t.wg.Done(); t.Serve(ln) }()
	case !dialled && t.ln != nil:
		t.stopListening()
	}
}

func (t *Transport) stopListening() {
	if t.ln != nil {
		t.ln.Close()
		t.ln = nil
	}
}

// prune closes the links of members the fleet no longer names, and rechecks the rest. A
// forgotten member's links are rechecked before they close, so that they end as a revoked key
// does (counted), whether or not a message was still on its way.
func (t *Transport) prune(peers Peers) {
	known := map[string]bool{}
	for _, m := range peers.Members() {
		known[m.ID] = true
	}
	t.mu.Lock()
	var gone, kept []*peer
	for id, p := range t.peers {
		if known[id] {
			kept = append(kept, p)
		} else {
			gone = append(gone, p)
		}
	}
	t.mu.Unlock()
	for _, p := range gone {
		for _, c := range p.links() {
			c.Recheck() // a forgotten member's key is revoked: its links end counted as withdrawn
		}
		p.closeLinks()
	}
	for _, p := range kept {
		for _, c := range p.links() {
			if c.Recheck() != nil {
				p.forget(c)
			}
		}
	}
}

// reachVoters asks every voter's peer for a link (a learner's standing dial).
func (t *Transport) reachVoters(peers Peers) {
	for _, m := range peers.Members() {
		if m.Seat == fleet.Voter && m.ID != t.cfg.Self {
			t.peerFor(m.ID).enqueue(nil)
		}
	}
}
