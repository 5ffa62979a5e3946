package nodeproof

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ErrHandshakeSpent: a ClientHandshake proves once.
var ErrHandshakeSpent = errors.New("this handshake has already produced its proof")

// Client is the dialling node's side of the proof (a worker's node
// registering with its scheduler).
type Client struct {
	// ID and Key are this node's identity; the proof is signed with Key.
	ID  string
	Key Signer
	// Roster, once it records voters, must record the server as a live
	// voter with the key it presents, not revoked. Nil or without voters
	// (a node that has applied no roster yet), the server is taken on its
	// signature alone.
	Roster lease.Roster
	// Random supplies the nonce and the ephemeral key (crypto/rand.Reader).
	Random io.Reader
}

// ClientHandshake is one proof in progress: it holds the ephemeral key
// between NODE-CHALLENGE and PROVE-NODE and is used once.
type ClientHandshake struct {
	c     *Client
	eph   *Ephemeral
	x     exchange
	spent bool
}

// ClientProof is what the client sends and keeps once the server's
// challenge reply checks out.
type ClientProof struct {
	// Request is the PROVE-NODE body to send.
	Request verbs.ProveNodeRequest
	// Server is the scheduler the reply proved.
	Server Peer
	// Sealer seals the connection from the server's Ok reply to PROVE-NODE
	// on (that reply is the first sealed frame); unused if the server
	// refuses the proof, whose Error reply is not sealed.
	Sealer *Sealer
}

// Begin draws a nonce and an ephemeral key.
func (c *Client) Begin() (*ClientHandshake, error) {
	h := &ClientHandshake{c: c}
	if _, err := io.ReadFull(c.Random, h.x.challenge.Nonce[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRandom, err)
	}
	eph, err := NewEphemeral(c.Random)
	if err != nil {
		return nil, err
	}
	h.eph = eph
	h.x.challenge.Ephemeral = eph.Public()
	return h, nil
}

// Request is the NODE-CHALLENGE body to send.
func (h *ClientHandshake) Request() verbs.NodeChallengeRequest { return h.x.challenge }

// Prove checks NODE-CHALLENGE's Ok payload — its signature under the key
// it presents first, then, with a roster, that the key is a live voter's —
// and returns the proof to send and the keys to seal with.
func (h *ClientHandshake) Prove(answer []byte) (ClientProof, error) {
	if h.spent {
		return ClientProof{}, ErrHandshakeSpent
	}
	h.spent = true
	ok, err := verbs.ParseNodeChallengeOk(answer)
	if err != nil {
		return ClientProof{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	h.x.answer = ok
	server := Peer{ID: ok.ServerID, Key: ed25519.PublicKey(bytes.Clone(ok.ServerKey[:]))}
	if err := h.c.checkServer(server, ok.Signature[:], h.x.challengeFields()); err != nil {
		return ClientProof{}, err
	}
	secret, err := h.eph.SharedSecret(ok.Ephemeral)
	if err != nil {
		return ClientProof{}, err
	}
	keys, err := DeriveSessionKeys(SealLabel, secret, h.x.transcript(h.c.ID))
	if err != nil {
		return ClientProof{}, err
	}
	req := verbs.ProveNodeRequest{NodeID: h.c.ID}
	copy(req.Key[:], h.c.Key.Public())
	copy(req.Signature[:], h.c.Key.Sign(wire.LabelNodeProof, h.x.proofFields(h.c.ID, req.Key[:])...))
	return ClientProof{Request: req, Server: server, Sealer: keys.ClientSealer()}, nil
}

// checkServer verifies the challenge signature, then the roster.
func (c *Client) checkServer(server Peer, sig []byte, signed [][]byte) error {
	if edkey.Validate(server.Key) != nil ||
		!identity.Verify(server.Key, sig, wire.LabelNodeChallenge, signed...) {
		return ErrServerSignature
	}
	r := c.Roster
	if r == nil || !r.HasVoters() {
		return nil
	}
	if r.Revoked(server.Key) {
		return fmt.Errorf("%w: node %q", ErrServerRevoked, server.ID)
	}
	if key, ok := r.VoterKey(server.ID); !ok || !bytes.Equal(key, server.Key) {
		return fmt.Errorf("%w: node %q", ErrServerNotVoter, server.ID)
	}
	return nil
}
