// Package fleet is pace's replicated state machine: the cluster id, the members
// (id, seat, consensus and node endpoints, Ed25519 key), the keys the cluster
// revoked, and the replicated settings (pace-node §1.2, pace-node §3.2,
// pace-consensus §7.1, pace-consensus §7.5, pace-consensus §7.6).
//
// The package is pure. A Command is validated against a State (Validate,
// whose refusals wrap ErrInvalidChange or ErrNotNeeded and read as sentences
// an operator can act on) and applied deterministically (Apply returns a new
// State; the old one is never modified). Every State is immutable once
// built, so readers on any goroutine may hold one without locks: the
// consensus loop publishes each applied State behind an atomic pointer and
// every request on every surface asks the current one.
//
// Commands and snapshots are versioned binary records in the 0xFC field
// grammar of package wire, so every length is checked against the bytes
// present and a local cap before anything is allocated for it.
//
// Raft membership follows the fleet: Membership says which conf change (add
// learner, add voter, remove) a command needs, and RaftID derives the Raft
// node id from a member id.
package fleet
