package discoverywire

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Version is the discovery wire version; a datagram of any other is dropped (pace-node §9.1).
const Version = 3

// Magic opens every datagram: "PDSC", pace discovery.
const Magic = "PDSC"

// Sizes of the datagrams.
const (
	HeaderLen    = len(Magic) + 1 + 1
	CookieLen    = 32
	KeyLen       = ed25519.PublicKeySize
	SignatureLen = ed25519.SignatureSize

	prefix = wire.FieldPrefixLen
	// proofTail is what a proof adds after its summary: cookie, key and signature fields.
	proofTail = 3*prefix + CookieLen + KeyLen + SignatureLen
	// BeaconPad is the zero bytes a beacon carries after its summary, so that it is exactly
	// as long as the proof of the same summary (whose tail is one field longer by the
	// pad field's own prefix).
	BeaconPad = proofTail - prefix

	// MaxSummary is the longest summary record verbs.ParseFleetSummary accepts: eleven
	// field prefixes, every text at its bound, ten members.
	MaxSummary = 11*prefix + verbs.MaxID + 1 + 8 + verbs.MaxID + verbs.MaxEndpoint + verbs.MaxID +
		verbs.MaxEndpoint + verbs.MaxSummaryMembers*(prefix+verbs.MaxID) + 8 + verbs.MaxEndpoint + KeyLen
	// MaxDatagram is the longest datagram of any kind: a proof of the longest summary. A
	// beacon is never longer than its proof, nor a challenge than its beacon.
	MaxDatagram = HeaderLen + prefix + MaxSummary + proofTail
)

// Kind says what a datagram carries.
type Kind uint8

// Datagram kinds, in the order an exchange sees them.
const (
	KindBeacon    Kind = 1
	KindChallenge Kind = 2
	KindProof     Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindBeacon:
		return "beacon"
	case KindChallenge:
		return "challenge"
	case KindProof:
		return "proof"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Errors Parse matches; every error it returns wraps exactly one.
var (
	ErrNotDiscovery = errors.New("not a discovery datagram")
	ErrOtherVersion = errors.New("another discovery wire version")
	ErrMalformed    = errors.New("malformed discovery datagram")
)

// Beacon is a node's unproven account of itself: it proves nothing until challenged.
type Beacon struct {
	Summary    verbs.FleetSummary
	SummaryRaw []byte // the summary record as sent
}

// Challenge is a stateless cookie sent to a beacon's source, naming the challenger's
// cluster, which the proof's signature covers.
type Challenge struct {
	Cookie    [CookieLen]byte
	ClusterID string
}

// Datagram is one parsed datagram: Kind says which of the others is set.
type Datagram struct {
	Kind      Kind
	Beacon    Beacon
	Challenge Challenge
	Proof     Proof
}

// AppendHeader appends a datagram header of kind k.
func AppendHeader(dst []byte, k Kind) []byte {
	return append(append(dst, Magic...), Version, byte(k))
}

// AppendBeacon appends a beacon datagram carrying s.
func AppendBeacon(dst []byte, s verbs.FleetSummary) []byte {
	dst = s.AppendField(AppendHeader(dst, KindBeacon))
	return appendPad(dst, BeaconPad)
}

// AppendChallenge appends a challenge padded to exactly size bytes, the length of the
// beacon it answers. A challenge that cannot fit in size is an error, never sent larger.
func AppendChallenge(dst []byte, c Challenge, size int) ([]byte, error) {
	bare := HeaderLen + prefix + CookieLen + prefix + len(c.ClusterID) + prefix
	if size < bare || size > MaxDatagram {
		return dst, fmt.Errorf("a challenge of %d bytes cannot be padded to %d", bare, size)
	}
	dst = AppendHeader(dst, KindChallenge)
	dst = wire.AppendField(dst, c.Cookie[:])
	dst = wire.AppendStringField(dst, c.ClusterID)
	return appendPad(dst, size-bare), nil
}

func appendPad(dst []byte, n int) []byte {
	dst, mark := wire.BeginField(dst)
	dst = append(dst, make([]byte, n)...)
	return wire.EndField(dst, mark)
}

// Parse reads one whole datagram. The header and the length are judged before anything
// is read or allocated; the returned values share no memory with b.
func Parse(b []byte) (Datagram, error) {
	k, err := parseHeader(b)
	if err != nil {
		return Datagram{}, err
	}
	var arr [4][]byte
	body := b[HeaderLen:]
	d := Datagram{Kind: k}
	switch k {
	case KindBeacon:
		d.Beacon, err = parseBeacon(arr[:0], body)
	case KindChallenge:
		d.Challenge, err = parseChallenge(arr[:0], body)
	case KindProof:
		d.Proof, err = parseProof(arr[:0], body)
	}
	if err != nil {
		return Datagram{}, err
	}
	return d, nil
}

func parseHeader(b []byte) (Kind, error) {
	n := min(len(b), len(Magic))
	switch {
	case len(b) < HeaderLen || string(b[:n]) != Magic:
		return 0, ErrNotDiscovery
	case b[len(Magic)] != Version:
		return 0, fmt.Errorf("%w: version %d, this node speaks %d", ErrOtherVersion, b[len(Magic)], Version)
	case len(b) > MaxDatagram:
		return 0, malformed("%d bytes, at most %d", len(b), MaxDatagram)
	}
	k := Kind(b[len(Magic)+1])
	if k < KindBeacon || k > KindProof {
		return 0, malformed("unknown kind %d", k)
	}
	return k, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func parseBeacon(arr [][]byte, body []byte) (Beacon, error) {
	f, err := wire.SplitFields(arr, body, 2)
	if err != nil {
		return Beacon{}, malformed("beacon: %v", err)
	}
	if err := checkPad(f[1], BeaconPad); err != nil {
		return Beacon{}, err
	}
	s, err := summary(f[0])
	if err != nil {
		return Beacon{}, err
	}
	return Beacon{Summary: s, SummaryRaw: bytes.Clone(f[0])}, nil
}

func parseChallenge(arr [][]byte, body []byte) (Challenge, error) {
	f, err := wire.SplitFields(arr, body, 3)
	if err != nil {
		return Challenge{}, malformed("challenge: %v", err)
	}
	var c Challenge
	switch {
	case len(f[0]) != CookieLen:
		return Challenge{}, malformed("a cookie of %d bytes, not %d", len(f[0]), CookieLen)
	case len(f[1]) == 0 || len(f[1]) > verbs.MaxID || !utf8.Valid(f[1]):
		return Challenge{}, malformed("a cluster id of %d bytes, 1 to %d of UTF-8", len(f[1]), verbs.MaxID)
	}
	if err := checkPad(f[2], -1); err != nil {
		return Challenge{}, err
	}
	copy(c.Cookie[:], f[0])
	c.ClusterID = string(f[1])
	return c, nil
}

// checkPad refuses padding of the wrong length (n < 0: any length) or not all zeros.
func checkPad(pad []byte, n int) error {
	if n >= 0 && len(pad) != n {
		return malformed("%d bytes of padding, not %d", len(pad), n)
	}
	for _, b := range pad {
		if b != 0 {
			return malformed("padding that is not zeros")
		}
	}
	return nil
}

func summary(f []byte) (verbs.FleetSummary, error) {
	s, err := verbs.ParseFleetSummary(f)
	if err != nil {
		return verbs.FleetSummary{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return s, nil
}
