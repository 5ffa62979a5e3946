package peerlink

import "errors"

// What ends a handshake. Each has its own counter on the end that sees it
// (Counters.Count); the texts wrapping them name member ids only once a
// signature proved them, and never key material.
var (
	// ErrNotAProof: the acceptor read something that is not a proof of
	// this version: an old build, or not a consensus client at all.
	ErrNotAProof = errors.New("the peer sent something that is not a consensus proof")
	// ErrNoProof: the dialler closed before sending a byte, as an older
	// build does when it refuses this version's challenge. Counted nowhere:
	// nothing arrived to refuse.
	ErrNoProof = errors.New("the peer closed before sending a proof")
	// ErrHandshakeTimeout: the handshake did not finish within its bound.
	ErrHandshakeTimeout = errors.New("the consensus handshake timed out")
	// ErrUnknownKey: the acceptor holds no key for the id the proof claims.
	ErrUnknownKey = errors.New("no key is recorded for the id the proof claims")
	// ErrBadProof: the proof's signature does not verify under the key
	// recorded for the id it claims (or proves no usable session key).
	ErrBadProof = errors.New("the proof does not verify under the key recorded for the id it claims")
	// ErrDiallerKeyRevoked: the dialler's key is revoked; the acceptor says
	// so, signed.
	ErrDiallerKeyRevoked = errors.New("the dialler's key is revoked")
	// ErrWrongTarget: the dialler meant another member than the one that
	// answered (a stale address).
	ErrWrongTarget = errors.New("the dialler reached another member than it meant")
	// ErrOwnID: the dialler proved the acceptor's own id: two machines hold
	// one identity key (a copied state directory).
	ErrOwnID = errors.New("both ends prove the same member id")
	// ErrListenerFull: the acceptor's listener had no room; counted by the
	// caller's listener, which closes before any handshake.
	ErrListenerFull = errors.New("the consensus listener is full")

	// ErrNoChallenge: the dialler got no challenge of this version: an
	// old build, or not a consensus port.
	ErrNoChallenge = errors.New("the peer sent no consensus challenge of this version")
	// ErrEndedByAcceptor: the acceptor closed without a verdict (it could
	// not verify the proof).
	ErrEndedByAcceptor = errors.New("the acceptor closed without a verdict")
	// ErrAcceptorKeyUnknown: the dialler holds no key for the member the
	// verdict names.
	ErrAcceptorKeyUnknown = errors.New("no key is recorded for the member that answered")
	// ErrAcceptorProof: the verdict does not verify under the key recorded
	// for the member it names, or is no verdict at all.
	ErrAcceptorProof = errors.New("the verdict does not verify under the answering member's key")
	// ErrAcceptorKeyRevoked: the answering member signed with a revoked key.
	ErrAcceptorKeyRevoked = errors.New("the answering member's key is revoked")
)

// What ends a proven link.
var (
	// ErrKeyWithdrawn: the roster no longer holds, unrevoked, a key the
	// link proved (the peer's or this member's own).
	ErrKeyWithdrawn = errors.New("a key this link proved was withdrawn")
	// ErrFrameTag: a message frame's tag does not verify.
	ErrFrameTag = errors.New("a frame's tag does not verify")
	// ErrFrameSender: a message names a sender other than the proven member.
	ErrFrameSender = errors.New("a message names a sender other than the proven member")
	// ErrFrameUnreadable: a frame of this wire the reader cannot use:
	// another version, another kind, or a message the SenderCheck cannot
	// read.
	ErrFrameUnreadable = errors.New("an unreadable frame")
	// ErrFrameOverCap: a frame declaring more than the reader buffers.
	ErrFrameOverCap = errors.New("a frame over the size cap")
	// ErrFrameBadMagic: bytes that are not this wire at all.
	ErrFrameBadMagic = errors.New("a frame without the link's magic")
)

// A caller's mistakes: returned, never counted, and the link stays up.
var (
	// ErrOneWay: the acceptor of a VoterToVoter link sends nothing on it.
	ErrOneWay = errors.New("a voter-to-voter link carries the dialler's messages only")
	// ErrMessageTooLarge: a message longer than the link's cap.
	ErrMessageTooLarge = errors.New("the message is longer than the link carries")
	// ErrSpent: a handshake step was called twice or out of order.
	ErrSpent = errors.New("this handshake step has already run")
	// ErrBadConfig: a Member without an id, key, roster or random source,
	// or a dial without a target or a known direction.
	ErrBadConfig = errors.New("invalid consensus link configuration")
)
