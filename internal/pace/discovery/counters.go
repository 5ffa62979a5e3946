package discovery

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters are discovery's counts (pace-node §10.6). Read together they tell a firewall
// that passes the beacon port and drops the reply port: beacons heard and challenges sent
// climb while proofs received stay flat.
type Counters struct {
	BeaconsSent        atomic.Uint64
	BeaconsHeard       atomic.Uint64
	ChallengesSent     atomic.Uint64
	ChallengesReceived atomic.Uint64
	ProofsSent         atomic.Uint64
	ProofsReceived     atomic.Uint64
	ProofsAccepted     atomic.Uint64
	ForeignProofs      atomic.Uint64
	ProofsUnsolicited  atomic.Uint64
	RefusedUnknownKey  atomic.Uint64
	RefusedRevokedKey  atomic.Uint64
	RefusedForged      atomic.Uint64
	BeaconsOverBound   atomic.Uint64
	RepliesWithheld    atomic.Uint64
	ChecksWithheld     atomic.Uint64
	Malformed          atomic.Uint64
	OtherVersion       atomic.Uint64
	SendErrors         atomic.Uint64
}

// Metrics lists the counters under their exposition names.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "pace_discovery_beacons_sent_total", Help: "Beacons sent, one per target per round.", Value: &c.BeaconsSent},
		{Name: "pace_discovery_beacons_heard_total", Help: "Well-formed beacons heard from other nodes.", Value: &c.BeaconsHeard},
		{Name: "pace_discovery_challenges_sent_total", Help: "Challenges sent to the reply port of a node heard beaconing.", Value: &c.ChallengesSent},
		{Name: "pace_discovery_challenges_received_total", Help: "Challenges received on this node's reply port.", Value: &c.ChallengesReceived},
		{Name: "pace_discovery_proofs_sent_total", Help: "Proofs sent answering a challenge.", Value: &c.ProofsSent},
		{Name: "pace_discovery_proofs_received_total", Help: "Well-formed proofs received; flat while challenges sent climb means the peers' reply ports are blocked.", Value: &c.ProofsReceived},
		{Name: "pace_discovery_proofs_accepted_total", Help: "Proofs by a member of this cluster under the key the roster holds for it.", Value: &c.ProofsAccepted},
		{Name: "pace_discovery_foreign_proofs_total", Help: "Proofs by a node of another cluster, handed to formation.", Value: &c.ForeignProofs},
		{Name: "pace_discovery_proofs_refused_unsolicited_total", Help: "Proofs answering no challenge of this node's (a cookie not minted for that source and claim, expired, or spent).", Value: &c.ProofsUnsolicited},
		{Name: "pace_discovery_proofs_refused_unknown_key_total", Help: "Proofs by a node claiming this cluster under a key the roster does not hold for it.", Value: &c.RefusedUnknownKey},
		{Name: "pace_discovery_proofs_refused_revoked_key_total", Help: "Proofs under a key this cluster revoked.", Value: &c.RefusedRevokedKey},
		{Name: "pace_discovery_proofs_refused_forged_total", Help: "Proofs whose signature did not verify.", Value: &c.RefusedForged},
		{Name: "pace_discovery_beacons_over_bound_total", Help: "Beacons and proofs not recorded because the node table was full.", Value: &c.BeaconsOverBound},
		{Name: "pace_discovery_replies_withheld_total", Help: "Challenges and proofs not sent: the source's, its host's or the global answer budget was spent, or the reply would outgrow what triggered it.", Value: &c.RepliesWithheld},
		{Name: "pace_discovery_proof_checks_withheld_total", Help: "Proofs not checked: the host's or the global signature budget was spent, the cookie failed twice, or a bounded table was full.", Value: &c.ChecksWithheld},
		{Name: "pace_discovery_datagrams_malformed_total", Help: "Datagrams dropped: not discovery, malformed, or of a kind the socket does not take.", Value: &c.Malformed},
		{Name: "pace_discovery_datagrams_other_version_total", Help: "Datagrams of another discovery wire version, dropped silently.", Value: &c.OtherVersion},
		{Name: "pace_discovery_send_errors_total", Help: "Datagrams the kernel refused to send (no route, unreachable).", Value: &c.SendErrors},
	}
}
