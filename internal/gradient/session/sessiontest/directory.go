package sessiontest

import (
	"crypto/subtle"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// Directory is an in-memory server state that answers the server roles' Needs. Tokens are
// kept in plaintext (a real server keeps argon2 or SHA-256 hashes); comparison is still
// constant-time.
type Directory struct {
	// Workers maps a worker ID to its facts; a missing ID answers empty facts (unknown).
	Workers map[string]session.WorkerFacts
	// Tokens maps a worker ID to the token expected from each peer (team ID for a team worker).
	Tokens map[string]map[string]string
	// Live holds the worker IDs with a claimed session.
	Live map[string]bool
}

// NewDirectory returns an empty directory.
func NewDirectory() *Directory {
	return &Directory{
		Workers: map[string]session.WorkerFacts{},
		Tokens:  map[string]map[string]string{},
		Live:    map[string]bool{},
	}
}

// Register adds a registration of workerID by reg.PeerID with the given token.
func (d *Directory) Register(workerID string, reg session.Registration, token string) {
	f := d.Workers[workerID]
	f.Registrations = append(f.Registrations, reg)
	d.Workers[workerID] = f
	d.setToken(workerID, reg.PeerID, token)
}

// RegisterTeam makes workerID the team worker of team with the given token.
func (d *Directory) RegisterTeam(workerID string, team session.TeamWorker, token string) {
	d.Workers[workerID] = session.WorkerFacts{Team: &team}
	d.setToken(workerID, team.TeamID, token)
}

func (d *Directory) setToken(workerID, peerID, token string) {
	if d.Tokens[workerID] == nil {
		d.Tokens[workerID] = map[string]string{}
	}
	d.Tokens[workerID][peerID] = token
}

// Answer answers a server role's Need: facts for LookupWorker, the verified peers for
// VerifyTokens, and an atomic claim of the live slot for ClaimSession.
func (d *Directory) Answer(n session.Need) session.Event {
	switch n := n.(type) {
	case session.LookupWorker:
		return session.FactsAnswer{Facts: d.Workers[n.WorkerID]}
	case session.VerifyTokens:
		var valid []string
		for _, t := range n.Tokens {
			want, ok := d.Tokens[n.WorkerID][t.PeerID]
			if ok && subtle.ConstantTimeCompare([]byte(want), []byte(t.Token)) == 1 {
				valid = append(valid, t.PeerID)
			}
		}
		return session.TokensAnswer{Valid: valid}
	case session.ClaimSession:
		if d.Live[n.WorkerID] {
			return session.ClaimAnswer{Claimed: false}
		}
		d.Live[n.WorkerID] = true
		return session.ClaimAnswer{Claimed: true}
	}
	return nil
}

// Release frees a worker's live slot, as a driver does when a session ends.
func (d *Directory) Release(workerID string) { delete(d.Live, workerID) }

// ServerTokens is a dialed worker's accepted server tokens file in plaintext: the token it
// accepts from each peer, "*" for any peer. AcceptAll models a worker without the file, which
// accepts every server.
type ServerTokens struct {
	ByPeer    map[string]string
	AcceptAll bool
}

// Answer answers the Dialed role's VerifyTokens.
func (s ServerTokens) Answer(n session.Need) session.Event {
	v, ok := n.(session.VerifyTokens)
	if !ok {
		return nil
	}
	var valid []string
	for _, t := range v.Tokens {
		want, ok := s.ByPeer[t.PeerID]
		if !ok {
			want, ok = s.ByPeer[session.WildcardPeer]
		}
		if s.AcceptAll || (ok && subtle.ConstantTimeCompare([]byte(want), []byte(t.Token)) == 1) {
			valid = append(valid, t.PeerID)
		}
	}
	return session.TokensAnswer{Valid: valid}
}

// Project is an active project registration with a cache and every capability enabled.
func Project(peerID string) session.Registration {
	return session.Registration{
		PeerID: peerID, Kind: session.PeerProject, Active: true, HasCache: true,
		EnableFetch: true, EnableEval: true, EnableBuild: true,
	}
}
