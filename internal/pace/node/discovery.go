package node

import "sync"

// discoveredFleets are the other fleets discovery proved on the segment, for formation.
type discoveredFleets struct {
	mu sync.Mutex
}

// yieldCandidate is a fleet this node would yield to, by the encounter table (pace-node §9.2).
type yieldCandidate struct {
	cluster        string
	leaderEndpoint string
	leaderKey      []byte
}

func (d *discoveredFleets) yieldCandidates() []yieldCandidate { return nil }

func (n *Node) discoveryOn() bool { return false }
