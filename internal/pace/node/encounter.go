package node

import "github.com/buildfleet/buildfleet/internal/pace/verbs"

// verdict is what this node does about another cluster's proven summary (pace-node §9.2).
type verdict uint8

const (
	ignore         verdict = iota // the same cluster, or one that yields to this one
	yield                         // ask to join it
	foreignVisible                // two established fleets on one segment: raise a condition, nothing else
	refusedPin                    // --fleet-id pins another fleet
)

// encounter is the encounter table: a cluster of one yields to an established fleet; of two
// clusters of one the younger yields (later creation, then the higher cluster id; an unknown
// creation time counts as oldest); two established fleets only see each other. A pending node
// is a pointer to the fleet it asked, judged as that fleet (established). pin, when set, is
// the one cluster this node may yield to.
func encounter(self, other verbs.FleetSummary, pin string) verdict {
	if other.ClusterID == self.ClusterID || self.State == verbs.FleetPending {
		return ignore
	}
	pointer := other.State == verbs.FleetPending // its cluster id is not the fleet's: leaderOf checks the pin
	if pointer {
		other.State = verbs.FleetEstablished
	}
	var v verdict
	switch {
	case self.State == verbs.FleetEstablished && other.State == verbs.FleetEstablished:
		return foreignVisible
	case self.State == verbs.FleetEstablished:
		return ignore
	case other.State == verbs.FleetEstablished:
		v = yield
	case younger(self, other):
		v = yield
	default:
		return ignore
	}
	if pin != "" && !pointer && other.ClusterID != pin {
		return refusedPin
	}
	return v
}

// younger: self was created after other (0 is unknown, counted oldest); ties go by cluster id.
func younger(self, other verbs.FleetSummary) bool {
	a, b := self.CreatedAt, other.CreatedAt
	switch {
	case a == b:
		return self.ClusterID > other.ClusterID
	case a == 0:
		return false
	case b == 0:
		return true
	}
	return a > b
}
