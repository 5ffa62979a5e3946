package session

import (
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// union returns a fresh slice: old in order, then the IDs of add not already present. Role
// values share slices between copies, so nothing here appends into an existing array.
func union(old, add []string) []string {
	out := slices.Clone(old)
	have := toSet(old)
	for _, id := range add {
		if !have[id] {
			have[id] = true
			out = append(out, id)
		}
	}
	return slices.Clip(out)
}

// failuresOutside drops failures of peers that are authorized: a failing token during a reauth
// never removes an earlier grant (gradient-protocol §4.3), so such a peer is reported as
// authorized only.
func failuresOutside(failed []wire.FailedPeer, authorized []string) []wire.FailedPeer {
	granted := toSet(authorized)
	var out []wire.FailedPeer
	for _, f := range failed {
		if !granted[f.PeerID] {
			out = append(out, f)
		}
	}
	return out
}

// growGrants folds a reauth decision into a running server session (gradient-protocol §4.3):
// the authorized set becomes the union of the old set and the decision's, whatever the
// decision's verdict, and the AuthUpdate that tells the worker.
func growGrants(cur Result, d Decision) (Result, *wire.AuthUpdate) {
	cur.Authorized = union(cur.Authorized, d.Authorized)
	cur.Failed = failuresOutside(d.Failed, cur.Authorized)
	return cur, &wire.AuthUpdate{
		AuthorizedPeers: slices.Clone(cur.Authorized),
		FailedPeers:     slices.Clone(cur.Failed),
	}
}

// absorbUpdate is growGrants on the worker side: the worker's view of its grants never
// shrinks either, even if a server sent a smaller set.
func absorbUpdate(cur Result, u *wire.AuthUpdate) Result {
	cur.Authorized = union(cur.Authorized, u.AuthorizedPeers)
	cur.Failed = failuresOutside(u.FailedPeers, cur.Authorized)
	return cur
}

// resultFromAck is a worker's Result from the server's InitAck.
func resultFromAck(workerID string, ack *wire.InitAck) Result {
	return Result{
		WorkerID:     workerID,
		Capabilities: ack.Capabilities,
		Authorized:   union(nil, ack.AuthorizedPeers),
		Failed:       slices.Clone(ack.FailedPeers),
	}
}

// initAck is the server's InitAck for a result, with slices of its own.
func initAck(r Result) *wire.InitAck {
	return &wire.InitAck{
		Capabilities:    r.Capabilities,
		AuthorizedPeers: slices.Clone(r.Authorized),
		FailedPeers:     slices.Clone(r.Failed),
	}
}
