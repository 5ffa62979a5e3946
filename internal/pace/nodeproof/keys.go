package nodeproof

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Sizes of the handshake and of a sealed frame.
const (
	// NonceLen is each side's challenge nonce.
	NonceLen = verbs.NonceLen
	// EphemeralLen is an X25519 public key.
	EphemeralLen = verbs.KeyLen
	// SessionKeyLen is one direction's HMAC-SHA256 key.
	SessionKeyLen = 32
	// SeqLen is the big-endian sequence number a tag covers first.
	SeqLen = 8
	// TagLen is the tag that follows every sealed frame, not counted in
	// the frame's payload length.
	TagLen = wire.SealTagLen
	// SealedRequestOverhead is what sealing adds to a request frame.
	SealedRequestOverhead = TagLen
	// ProveNodeOkPayloadLen is PROVE-NODE's Ok payload: empty (the reply
	// exists to be the first sealed frame, confirming the server's keys).
	ProveNodeOkPayloadLen = 0
)

// SealLabel is the HKDF info label of node-port session keys. It is not a
// signature label (those are wire.Label*): it names a key derivation, and
// a consensus transport derives under its own.
const SealLabel = "pace-node-seal-v1"

// Direction names which way a key seals.
type Direction uint8

// Directions, as the byte that ends the HKDF info.
const (
	ClientToServer Direction = 1
	ServerToClient Direction = 2
)

// Ephemeral is one side's X25519 key for one handshake; it is never reused.
type Ephemeral struct {
	private *ecdh.PrivateKey
	public  [EphemeralLen]byte
}

// NewEphemeral draws an X25519 key from random. crypto/ecdh's GenerateKey
// ignores its reader since Go 1.26, so the scalar is drawn here and the
// caller's reader really is the only source.
func NewEphemeral(random io.Reader) (*Ephemeral, error) {
	var scalar [32]byte
	if _, err := io.ReadFull(random, scalar[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRandom, err)
	}
	private, err := ecdh.X25519().NewPrivateKey(scalar[:])
	if err != nil {
		return nil, fmt.Errorf("x25519 key: %w", err)
	}
	e := &Ephemeral{private: private}
	copy(e.public[:], private.PublicKey().Bytes())
	return e, nil
}

// Public is the key to send.
func (e *Ephemeral) Public() [EphemeralLen]byte { return e.public }

// SharedSecret is the X25519 secret with the peer's ephemeral key. A
// low-order peer key (all-zero secret) is ErrLowOrderEphemeral.
func (e *Ephemeral) SharedSecret(peer [EphemeralLen]byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLowOrderEphemeral, err)
	}
	secret, err := e.private.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLowOrderEphemeral, err)
	}
	return secret, nil
}

// Transcript is what session keys are bound to besides the secret: both
// nonces, both ephemeral keys and both ids.
type Transcript struct {
	ClientNonce, ServerNonce         [NonceLen]byte
	ClientEphemeral, ServerEphemeral [EphemeralLen]byte
	ClientID, ServerID               string
}

// SessionKeys are the two directions' keys. They format and log redacted.
type SessionKeys struct {
	ClientToServer [SessionKeyLen]byte
	ServerToClient [SessionKeyLen]byte
}

// DeriveSessionKeys derives both directions' keys from the X25519 secret
// as the package comment lays out, under label.
func DeriveSessionKeys(label string, secret []byte, t Transcript) (SessionKeys, error) {
	salt := make([]byte, 0, 2*NonceLen)
	salt = append(append(salt, t.ClientNonce[:]...), t.ServerNonce[:]...)
	var keys SessionKeys
	for _, d := range []Direction{ClientToServer, ServerToClient} {
		key, err := hkdf.Key(sha256.New, secret, salt, string(sealInfo(label, t, d)), SessionKeyLen)
		if err != nil {
			return SessionKeys{}, fmt.Errorf("hkdf %d: %w", d, err)
		}
		if d == ClientToServer {
			copy(keys.ClientToServer[:], key)
		} else {
			copy(keys.ServerToClient[:], key)
		}
	}
	return keys, nil
}

// sealInfo is fieldlist[label, ephC, ephS, clientId, serverId, u8 d].
func sealInfo(label string, t Transcript, d Direction) []byte {
	return wire.AppendLabelledMessage(nil, label, t.ClientEphemeral[:], t.ServerEphemeral[:],
		[]byte(t.ClientID), []byte(t.ServerID), []byte{byte(d)})
}

// ServerSealer seals what the server writes and checks what it reads.
func (k SessionKeys) ServerSealer() *Sealer { return NewSealer(k.ClientToServer, k.ServerToClient) }

// ClientSealer seals what the client writes and checks what it reads.
func (k SessionKeys) ClientSealer() *Sealer { return NewSealer(k.ServerToClient, k.ClientToServer) }

// String never shows key material.
func (SessionKeys) String() string { return "nodeproof.SessionKeys{redacted}" }

// Format never shows key material, whatever the verb (%x included).
func (k SessionKeys) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// LogValue never logs key material.
func (k SessionKeys) LogValue() slog.Value { return slog.StringValue(k.String()) }
