package discoverywire

import (
	"bytes"
	"crypto/ed25519"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Signer is an identity key: *identity.Key in a node.
type Signer interface {
	Public() ed25519.PublicKey
	Sign(label string, fields ...[]byte) []byte
}

// Proof answers a challenge: the prover's summary, the challenger's cookie, and the
// prover's key and signature over both and the challenger's cluster.
type Proof struct {
	Summary    verbs.FleetSummary
	SummaryRaw []byte // the summary record as sent: what the signature covers
	Cookie     [CookieLen]byte
	Key        ed25519.PublicKey
	Signature  []byte
}

// SignProof answers challenge c with summary s under key k.
func SignProof(k Signer, c Challenge, s verbs.FleetSummary) Proof {
	raw := s.AppendField(nil)[prefix:]
	key := k.Public()
	return Proof{Summary: s, SummaryRaw: raw, Cookie: c.Cookie, Key: key,
		Signature: k.Sign(wire.LabelDiscoveryProof, []byte(c.ClusterID), c.Cookie[:], raw, key)}
}

// Verify reports whether p's signature is its key's over challengerCluster, its cookie,
// its summary bytes and the key, and the key is one a cluster could record.
func (p Proof) Verify(challengerCluster string) bool {
	if len(p.Key) != KeyLen || len(p.Signature) != SignatureLen {
		return false
	}
	msg := wire.AppendLabelledMessage(nil, wire.LabelDiscoveryProof,
		[]byte(challengerCluster), p.Cookie[:], p.SummaryRaw, p.Key)
	return ed25519.Verify(p.Key, msg, p.Signature) && edkey.Validate(p.Key) == nil
}

// ProofLen is the length of the proof datagram whose summary record is n bytes, which is
// also the length of the beacon carrying it.
func ProofLen(n int) int { return HeaderLen + prefix + n + proofTail }

// AppendProof appends a proof datagram.
func AppendProof(dst []byte, p Proof) []byte {
	dst = AppendHeader(dst, KindProof)
	dst = wire.AppendField(dst, p.SummaryRaw)
	dst = wire.AppendField(dst, p.Cookie[:])
	dst = wire.AppendField(dst, p.Key)
	return wire.AppendField(dst, p.Signature)
}

func parseProof(arr [][]byte, body []byte) (Proof, error) {
	f, err := wire.SplitFields(arr, body, 4)
	if err != nil {
		return Proof{}, malformed("proof: %v", err)
	}
	switch {
	case len(f[1]) != CookieLen:
		return Proof{}, malformed("a cookie of %d bytes, not %d", len(f[1]), CookieLen)
	case len(f[2]) != KeyLen:
		return Proof{}, malformed("a key of %d bytes, not %d", len(f[2]), KeyLen)
	case len(f[3]) != SignatureLen:
		return Proof{}, malformed("a signature of %d bytes, not %d", len(f[3]), SignatureLen)
	}
	s, err := summary(f[0])
	if err != nil {
		return Proof{}, err
	}
	p := Proof{Summary: s, SummaryRaw: bytes.Clone(f[0]), Key: bytes.Clone(f[2]), Signature: bytes.Clone(f[3])}
	copy(p.Cookie[:], f[1])
	return p, nil
}
