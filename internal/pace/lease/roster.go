package lease

import "crypto/ed25519"

// Roster is the replicated fleet state a verifier asks, as this node's own
// consensus applied it (pace-node §5.4, step 2). It is
// asked on every verification and never cached, so a forget or a revocation
// takes effect at the next request. Implementations must be safe for
// concurrent use. The fleet package's applied state satisfies it.
type Roster interface {
	// ClusterID names the cluster whose state this is.
	ClusterID() string
	// HasVoters reports whether the applied state records any voter yet.
	HasVoters() bool
	// VoterKey returns the identity key of a live voter.
	VoterKey(id string) (ed25519.PublicKey, bool)
	// MemberKey returns the identity key of a live voter or learner.
	MemberKey(id string) (ed25519.PublicKey, bool)
	// Revoked reports whether the cluster revoked this key.
	Revoked(key ed25519.PublicKey) bool
}

// ForgottenKeys is an optional extension of Roster: the key a member held when
// the cluster forgot it (a forget removes the id and revokes its key,
// pace-consensus §7.6). A roster that offers it lets a verifier tell a grant or
// ticket really signed by a removed machine (counted as revoked) from a
// stranger using that machine's id (counted as unauthorized or unknown); one
// that does not makes both read as the stranger's case.
type ForgottenKeys interface {
	ForgottenKey(id string) (ed25519.PublicKey, bool)
}
