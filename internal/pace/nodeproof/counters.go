package nodeproof

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters are the node-proof counters of pace-node §10.6
// ("Identity/admission"), as plain atomics the node exports under the
// names Metrics gives. Server sessions count proofs; SealedFramesRefused is
// counted by whoever sees a tag fail (package sealedconn's server observer
// and its client).
type Counters struct {
	ProofsAccepted             atomic.Uint64
	ProofsRejected             atomic.Uint64
	ProofsUnchallenged         atomic.Uint64
	ProofsMalformed            atomic.Uint64
	RefusedUnknownKey          atomic.Uint64
	RefusedRevokedKey          atomic.Uint64
	RefusedRosterNotYetApplied atomic.Uint64
	SealedFramesRefused        atomic.Uint64
}

// Metric is one counter as the node registers it.
type Metric = counter.Metric

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	return []Metric{
		{Name: "pace_node_proofs_accepted_total", Help: "Node proofs accepted: a live roster key proven on a connection.", Value: &c.ProofsAccepted},
		{Name: "pace_node_proofs_rejected_total", Help: "Node proofs whose signature failed, or asked on a connection already proven.", Value: &c.ProofsRejected},
		{Name: "pace_node_proofs_unchallenged_total", Help: "PROVE-NODEs with no outstanding challenge on their connection.", Value: &c.ProofsUnchallenged},
		{Name: "pace_node_proofs_malformed_total", Help: "NODE-CHALLENGE and PROVE-NODE bodies refused as malformed.", Value: &c.ProofsMalformed},
		{Name: "pace_node_proofs_refused_unknown_key_total", Help: "Verified proofs of a key the roster does not record for that node id.", Value: &c.RefusedUnknownKey},
		{Name: "pace_node_proofs_refused_revoked_key_total", Help: "Verified proofs of a key the cluster revoked.", Value: &c.RefusedRevokedKey},
		{Name: "pace_node_proofs_refused_roster_not_yet_applied_total", Help: "Verified proofs refused because this node has not applied its roster yet.", Value: &c.RefusedRosterNotYetApplied},
		{Name: "pace_node_sealed_frames_refused_total", Help: "Sealed frames whose tag failed; the connection was closed unanswered.", Value: &c.SealedFramesRefused},
	}
}

// discard absorbs the counts of a Server configured without Counters.
var discard Counters

// countFor is the proof counter an outcome of Prove increments.
func (c *Counters) countFor(err error) *atomic.Uint64 {
	switch {
	case err == nil:
		return &c.ProofsAccepted
	case isAny(err, ErrUnchallenged):
		return &c.ProofsUnchallenged
	case isAny(err, ErrMalformed):
		return &c.ProofsMalformed
	case isAny(err, ErrRosterNotApplied):
		return &c.RefusedRosterNotYetApplied
	case isAny(err, ErrKeyRevoked):
		return &c.RefusedRevokedKey
	case isAny(err, ErrKeyUnknown):
		return &c.RefusedUnknownKey
	case isAny(err, ErrProofRejected, ErrAlreadyProven):
		return &c.ProofsRejected
	}
	return nil // no-cluster, no random: this node's state, not the prover's
}
