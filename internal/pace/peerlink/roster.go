package peerlink

import (
	"crypto/ed25519"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
)

// Roster is where each end looks up the keys of the members it proves. It
// is asked during every handshake and again for every message, so it must
// answer from the state applied now and be safe for concurrent use.
type Roster interface {
	// Key returns the identity key recorded for memberID and whether the
	// cluster revoked it; ok is false when nothing is recorded. A
	// forgotten member's last key should come back with revoked true, so
	// that the removed machine is told, signed, that its key is revoked
	// rather than being closed on as a stranger (pace-consensus §7.6).
	Key(memberID string) (key ed25519.PublicKey, revoked bool, ok bool)
}

// FromLease adapts the roster the rest of pace reads (the applied fleet
// state, or a bootstrap roster) to Roster: a live voter's or learner's key,
// revoked if the cluster revoked it, else a forgotten member's last key as
// revoked when r also offers lease.ForgottenKeys.
func FromLease(r lease.Roster) Roster { return leaseRoster{r} }

type leaseRoster struct{ r lease.Roster }

func (l leaseRoster) Key(id string) (ed25519.PublicKey, bool, bool) {
	if key, ok := l.r.MemberKey(id); ok {
		return key, l.r.Revoked(key), true
	}
	if f, ok := l.r.(lease.ForgottenKeys); ok {
		if key, ok := f.ForgottenKey(id); ok {
			return key, true, true
		}
	}
	return nil, false, false
}

// Signer is an identity key: *identity.Key in a node.
type Signer = nodeproof.Signer

// Peer is a proven member: its id and the key it proved.
type Peer = nodeproof.Peer

// Direction is the session a dialler asks for, one byte of its proof.
type Direction uint8

// Directions a proof may ask for.
const (
	// VoterToVoter carries the dialler's messages only: each voter dials
	// every other voter and sends on its own link.
	VoterToVoter Direction = 1
	// LearnerToVoter carries messages both ways: a learner opens no port,
	// so the voter answers it on the learner's link.
	LearnerToVoter Direction = 2
)

// Valid reports whether d is a direction of this version.
func (d Direction) Valid() bool { return d == VoterToVoter || d == LearnerToVoter }

// TwoWay reports whether the acceptor may send on the link too.
func (d Direction) TwoWay() bool { return d == LearnerToVoter }

func (d Direction) String() string {
	switch d {
	case VoterToVoter:
		return "voter-to-voter"
	case LearnerToVoter:
		return "learner-to-voter"
	}
	return fmt.Sprintf("direction(%d)", uint8(d))
}

// Outcome is the verdict's answer, one byte.
type Outcome uint8

// Verdict outcomes.
const (
	Accepted    Outcome = 1
	WrongTarget Outcome = 2
	OwnID       Outcome = 3
	Revoked     Outcome = 4
)

func (o Outcome) valid() bool { return o >= Accepted && o <= Revoked }

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case WrongTarget:
		return "wrong-target"
	case OwnID:
		return "own-id"
	case Revoked:
		return "revoked"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Role is which end of a link this member is.
type Role uint8

// Roles.
const (
	RoleAcceptor Role = 1
	RoleDialler  Role = 2
)

func (r Role) String() string {
	if r == RoleAcceptor {
		return "acceptor"
	}
	return "dialler"
}
