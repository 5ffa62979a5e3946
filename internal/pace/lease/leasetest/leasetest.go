// Package leasetest holds in-memory twins for tests of code that issues or
// verifies pace's signed objects: a Roster whose membership a test edits
// directly, and a Signer over a deterministic Ed25519 key.
package leasetest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"sync"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Roster is an in-memory lease.Roster and lease.ForgottenKeys. Safe for
// concurrent use.
type Roster struct {
	mu        sync.Mutex
	cluster   string
	voters    map[string]ed25519.PublicKey
	learners  map[string]ed25519.PublicKey
	revoked   map[string]bool // by string(key)
	forgotten map[string]ed25519.PublicKey
}

// NewRoster returns an empty roster of the named cluster.
func NewRoster(cluster string) *Roster {
	return &Roster{
		cluster:   cluster,
		voters:    map[string]ed25519.PublicKey{},
		learners:  map[string]ed25519.PublicKey{},
		revoked:   map[string]bool{},
		forgotten: map[string]ed25519.PublicKey{},
	}
}

// AddVoter records id as a live voter holding key.
func (r *Roster) AddVoter(id string, key ed25519.PublicKey) *Roster {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.learners, id)
	r.voters[id] = key
	return r
}

// AddLearner records id as a live learner holding key.
func (r *Roster) AddLearner(id string, key ed25519.PublicKey) *Roster {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.voters, id)
	r.learners[id] = key
	return r
}

// Revoke revokes key without removing whoever holds it.
func (r *Roster) Revoke(key ed25519.PublicKey) *Roster {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked[string(key)] = true
	return r
}

// Forget removes id and revokes its key, as CLUSTER-FORGET does.
func (r *Roster) Forget(id string) *Roster {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, ok := r.voters[id]
	if !ok {
		key, ok = r.learners[id]
	}
	if ok {
		r.revoked[string(key)] = true
		r.forgotten[id] = key
	}
	delete(r.voters, id)
	delete(r.learners, id)
	return r
}

// ClusterID implements lease.Roster.
func (r *Roster) ClusterID() string { return r.cluster }

// HasVoters implements lease.Roster.
func (r *Roster) HasVoters() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.voters) > 0
}

// VoterKey implements lease.Roster.
func (r *Roster) VoterKey(id string) (ed25519.PublicKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.voters[id]
	return k, ok
}

// MemberKey implements lease.Roster.
func (r *Roster) MemberKey(id string) (ed25519.PublicKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.voters[id]; ok {
		return k, true
	}
	k, ok := r.learners[id]
	return k, ok
}

// Revoked implements lease.Roster.
func (r *Roster) Revoked(key ed25519.PublicKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revoked[string(key)]
}

// ForgottenKey implements lease.ForgottenKeys.
func (r *Roster) ForgottenKey(id string) (ed25519.PublicKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.forgotten[id]
	return k, ok
}

// Signer signs labelled messages with a key derived from its name, so a
// test's keys are the same on every run.
type Signer struct {
	private ed25519.PrivateKey
}

// NewSigner derives a key from name.
func NewSigner(name string) *Signer {
	seed := sha256.Sum256([]byte("leasetest signer " + name))
	return &Signer{private: ed25519.NewKeyFromSeed(seed[:])}
}

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey {
	return s.private.Public().(ed25519.PublicKey)
}

// Sign implements lease.Signer.
func (s *Signer) Sign(label string, fields ...[]byte) []byte {
	return ed25519.Sign(s.private, wire.AppendLabelledMessage(nil, label, fields...))
}
