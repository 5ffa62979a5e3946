package nodeproof

import "sync/atomic"

// Counters are the node-proof counters of spec pace-node-and-kv.md §10.6
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

// Metric names one counter for export.
type Metric struct {
	Name  string
	Help  string
	Value *atomic.Uint64
}

// Metrics lists every counter with its exact Prometheus name.
func (c *Counters) Metrics() []Metric {
	return []Metric{
		{"pace_node_proofs_accepted_total", "Node proofs accepted: a live roster key proven on a connection.", &c.ProofsAccepted},
		{"pace_node_proofs_rejected_total", "Node proofs whose signature failed, or asked on a connection already proven.", &c.ProofsRejected},
		{"pace_node_proofs_unchallenged_total", "PROVE-NODEs with no outstanding challenge on their connection.", &c.ProofsUnchallenged},
		{"pace_node_proofs_malformed_total", "NODE-CHALLENGE and PROVE-NODE bodies refused as malformed.", &c.ProofsMalformed},
		{"pace_node_proofs_refused_unknown_key_total", "Verified proofs of a key the roster does not record for that node id.", &c.RefusedUnknownKey},
		{"pace_node_proofs_refused_revoked_key_total", "Verified proofs of a key the cluster revoked.", &c.RefusedRevokedKey},
		{"pace_node_proofs_refused_roster_not_yet_applied_total", "Verified proofs refused because this node has not applied its roster yet.", &c.RefusedRosterNotYetApplied},
		{"pace_node_sealed_frames_refused_total", "Sealed frames whose tag failed; the connection was closed unanswered.", &c.SealedFramesRefused},
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
