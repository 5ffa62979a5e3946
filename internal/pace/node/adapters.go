package node

import (
	"crypto/ed25519"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

// liveRoster answers roster questions from whatever state consensus has applied at the moment
// of each call: every surface asks on every request and nothing caches an admission decision,
// so a forget reaches every open connection at its next message.
type liveRoster struct{ cons *consensus.Node }

func (r liveRoster) ClusterID() string { return r.cons.State().ClusterID() }
func (r liveRoster) HasVoters() bool   { return r.cons.State().HasVoters() }
func (r liveRoster) VoterKey(id string) (ed25519.PublicKey, bool) {
	return r.cons.State().VoterKey(id)
}
func (r liveRoster) MemberKey(id string) (ed25519.PublicKey, bool) {
	return r.cons.State().MemberKey(id)
}
func (r liveRoster) Revoked(key ed25519.PublicKey) bool { return r.cons.State().Revoked(key) }
func (r liveRoster) ForgottenKey(id string) (ed25519.PublicKey, bool) {
	return r.cons.State().ForgottenKey(id)
}

var _ lease.Roster = liveRoster{}

// leaseState is what the worker's lease check asks: the applied roster and when a leader was
// last heard (the 65-minute isolation rule).
type leaseState struct{ cons *consensus.Node }

func (s leaseState) Roster() lease.Roster     { return liveRoster(s) }
func (s leaseState) LeaderHeardAt() time.Time { return s.cons.LastLeaderContact() }

// leaseSigner issues lease tokens with this node's identity key, adding its id as the signer.
type leaseSigner struct {
	key    *identity.Key
	nodeID string
}

func (s leaseSigner) IssueLease(c scheduler.Claims) (string, error) {
	return lease.Issue(lease.Claims{
		Serial: c.Serial, Endpoint: c.Endpoint, Fingerprint: c.Fingerprint, Key: c.Key,
		ExpiresAt: c.ExpiresAt, ClusterID: c.ClusterID, Epoch: c.Epoch, SignerID: s.nodeID, WorkerKey: c.WorkerKey,
	}, s.key)
}

// clusterVerifier tells the scheduler whether a RELEASE's unknown token was ever this cluster's.
type clusterVerifier struct{ cons *consensus.Node }

func (v clusterVerifier) SignedByCluster(token string) bool {
	return lease.SignedByCluster(token, liveRoster(v))
}
