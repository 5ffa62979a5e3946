package lease

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TokenVersion is the first claim of every token this build issues and the
// only one it accepts.
const TokenVersion uint8 = 1

// Bounds on the claims (pace-wire §1.10, pace-node §13.15). A token breaking
// one is junk.
const (
	MaxEndpointLen    = 255
	MaxFingerprintLen = 64
	MaxKeyLen         = 64
	MaxIDLen          = 64
)

// claimFields is the arity of the packed claims.
const claimFields = 10

// maxPackedLen bounds the packed claims: ten prefixes, the fixed-width
// fields and every variable field at its bound.
const maxPackedLen = claimFields*wire.FieldPrefixLen + 1 + 8 + MaxEndpointLen +
	MaxFingerprintLen + MaxKeyLen + 8 + MaxIDLen + 8 + MaxIDLen + ed25519.PublicKeySize

// MaxTokenLen bounds the token text; a longer one is refused before it is
// decoded.
const MaxTokenLen = (2*wire.FieldPrefixLen + maxPackedLen + ed25519.SignatureSize + 2) / 3 * 4

// ErrMalformedToken is the cause of every token that does not decode.
var ErrMalformedToken = errors.New("malformed lease token")

// Claims is what a scheduler grants: one compile of one key, with one
// toolchain, at one worker endpoint, until an expiry.
type Claims struct {
	Serial      uint64            // the scheduler's lease number; restarts at 1 with the scheduler
	Endpoint    string            // the granted worker's advertised endpoint, host:port
	Fingerprint string            // toolchain fingerprint the worker registered
	Key         string            // object key the compile is for
	ExpiresAt   time.Time         // absolute; carried at millisecond precision
	ClusterID   string            // the issuing scheduler's cluster
	Epoch       uint64            // the scheduler's Raft term when it granted
	SignerID    string            // the issuing scheduler's node id
	WorkerKey   ed25519.PublicKey // the granted worker's identity key, or empty
}

// Validate reports the first claim outside its bounds.
func (c *Claims) Validate() error {
	texts := []struct {
		name  string
		value string
		limit int
		utf8  bool
	}{
		{"endpoint", c.Endpoint, MaxEndpointLen, true},
		{"fingerprint", c.Fingerprint, MaxFingerprintLen, false},
		{"key", c.Key, MaxKeyLen, false},
		{"cluster id", c.ClusterID, MaxIDLen, true},
		{"signer id", c.SignerID, MaxIDLen, true},
	}
	for _, t := range texts {
		if t.value == "" || len(t.value) > t.limit {
			return fmt.Errorf("%w: %s of %d bytes (1..%d allowed)", ErrMalformedToken, t.name, len(t.value), t.limit)
		}
		if t.utf8 && !utf8.ValidString(t.value) {
			return fmt.Errorf("%w: %s is not UTF-8", ErrMalformedToken, t.name)
		}
	}
	if ms := c.ExpiresAt.UnixMilli(); ms < 0 {
		return fmt.Errorf("%w: expiry before 1970", ErrMalformedToken)
	}
	if n := len(c.WorkerKey); n != 0 && n != ed25519.PublicKeySize {
		return fmt.Errorf("%w: worker key of %d bytes", ErrMalformedToken, n)
	}
	return nil
}

// appendPacked appends the packed claims; c must be valid.
func (c *Claims) appendPacked(dst []byte) []byte {
	dst = wire.AppendU8Field(dst, TokenVersion)
	dst = wire.AppendU64Field(dst, c.Serial)
	dst = wire.AppendStringField(dst, c.Endpoint)
	dst = wire.AppendStringField(dst, c.Fingerprint)
	dst = wire.AppendStringField(dst, c.Key)
	dst = wire.AppendU64Field(dst, uint64(c.ExpiresAt.UnixMilli()))
	dst = wire.AppendStringField(dst, c.ClusterID)
	dst = wire.AppendU64Field(dst, c.Epoch)
	dst = wire.AppendStringField(dst, c.SignerID)
	return wire.AppendField(dst, c.WorkerKey)
}

// parsePacked reads packed claims, refusing anything Validate would refuse,
// so that every token that parses could have been issued.
func parsePacked(packed []byte) (Claims, error) {
	var buf [claimFields][]byte
	f, err := wire.SplitFields(buf[:0], packed, claimFields)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %w", ErrMalformedToken, err)
	}
	version, err := wire.U8(f[0])
	if err != nil || version != TokenVersion {
		return Claims{}, fmt.Errorf("%w: token version field %x, want %d", ErrMalformedToken, f[0], TokenVersion)
	}
	var c Claims
	var expires, serial, epoch uint64
	for _, n := range []struct {
		dst *uint64
		f   []byte
	}{{&serial, f[1]}, {&expires, f[5]}, {&epoch, f[7]}} {
		if *n.dst, err = wire.U64(n.f); err != nil {
			return Claims{}, fmt.Errorf("%w: %w", ErrMalformedToken, err)
		}
	}
	if expires > math.MaxInt64 {
		return Claims{}, fmt.Errorf("%w: expiry beyond the representable range", ErrMalformedToken)
	}
	c.Serial, c.Epoch, c.ExpiresAt = serial, epoch, time.UnixMilli(int64(expires)).UTC()
	c.Endpoint, c.Fingerprint, c.Key = string(f[2]), string(f[3]), string(f[4])
	c.ClusterID, c.SignerID = string(f[6]), string(f[8])
	if len(f[9]) != 0 {
		c.WorkerKey = ed25519.PublicKey(append([]byte(nil), f[9]...))
	}
	if err := c.Validate(); err != nil {
		return Claims{}, err
	}
	return c, nil
}
