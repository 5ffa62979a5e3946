package discoverywire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestGenuineExchangeParses(t *testing.T) {
	x := genuineExchange(t)
	b, err := Parse(x.beacon)
	if err != nil || b.Kind != KindBeacon || !reflect.DeepEqual(b.Beacon.Summary, sampleSummary()) {
		t.Fatalf("beacon: %+v, %v", b, err)
	}
	c, err := Parse(x.challenge)
	if err != nil || c.Kind != KindChallenge || c.Challenge != sampleChallenge() {
		t.Fatalf("challenge: %+v, %v", c, err)
	}
	p, err := Parse(x.proof)
	if err != nil || p.Kind != KindProof || !reflect.DeepEqual(p.Proof.Summary, sampleSummary()) {
		t.Fatalf("proof: %+v, %v", p, err)
	}
	if !p.Proof.Verify("c-red") {
		t.Error("the genuine proof does not verify")
	}
	if !bytes.Equal(p.Proof.Key, testKey(t, 1).Public()) || p.Proof.Cookie != sampleChallenge().Cookie {
		t.Error("the proof's key or cookie is not what was signed")
	}
}

// A reply is never larger than what triggered it: the three datagrams of an exchange are
// the same length.
func TestExchangeIsSymmetricInSize(t *testing.T) {
	x := genuineExchange(t)
	if len(x.beacon) != len(x.proof) || len(x.challenge) != len(x.beacon) {
		t.Errorf("beacon %d, challenge %d, proof %d bytes", len(x.beacon), len(x.challenge), len(x.proof))
	}
	p, _ := Parse(x.proof)
	if ProofLen(len(p.Proof.SummaryRaw)) != len(x.proof) {
		t.Errorf("ProofLen says %d for a %d-byte proof", ProofLen(len(p.Proof.SummaryRaw)), len(x.proof))
	}
}

func TestLongestSummaryFitsMaxDatagram(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	s := verbs.FleetSummary{ClusterID: long(verbs.MaxID), State: verbs.FleetSolitary, LeaderID: long(verbs.MaxID),
		LeaderNodeEndpoint: long(verbs.MaxEndpoint), NodeID: long(verbs.MaxID), RaftEndpoint: long(verbs.MaxEndpoint),
		MemberTotal: verbs.MaxSummaryMembers, NodeEndpoint: long(verbs.MaxEndpoint), LeaderKey: make([]byte, 32)}
	for range verbs.MaxSummaryMembers {
		s.Members = append(s.Members, long(verbs.MaxID))
	}
	b := AppendBeacon(nil, s)
	if len(b) != MaxDatagram {
		t.Errorf("the longest beacon is %d bytes, MaxDatagram %d", len(b), MaxDatagram)
	}
	if _, err := Parse(b); err != nil {
		t.Errorf("the longest beacon: %v", err)
	}
	if _, err := Parse(append(b, 0)); !errors.Is(err, ErrMalformed) {
		t.Errorf("one byte more: %v", err)
	}
}

func with(b []byte, at int, v byte) []byte {
	c := bytes.Clone(b)
	c[at] = v
	return c
}

func TestParseRefuses(t *testing.T) {
	x := genuineExchange(t)
	beaconPadAt := len(x.beacon) - BeaconPad
	challengeClusterLenAt := HeaderLen + prefix + CookieLen
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrNotDiscovery},
		{"magic alone", []byte(Magic), ErrNotDiscovery},
		{"another protocol", []byte("GET / HTTP/1.1\r\n"), ErrNotDiscovery},
		{"version 2", with(x.beacon, 4, 2), ErrOtherVersion},
		{"version 4 of any length", append(AppendHeader(nil, KindBeacon)[:4], 4, 1, 0, 0), ErrOtherVersion},
		{"unknown kind", with(x.beacon, 5, 9), ErrMalformed},
		{"kind zero", with(x.beacon, 5, 0), ErrMalformed},
		{"header alone", AppendHeader(nil, KindBeacon), ErrMalformed},
		{"longer than any datagram", append(AppendHeader(nil, KindBeacon), make([]byte, MaxDatagram)...), ErrMalformed},
		{"beacon pad not zeros", with(x.beacon, beaconPadAt, 1), ErrMalformed},
		{"beacon pad short", shortenLastField(x.beacon), ErrMalformed},
		{"beacon trailing byte", append(bytes.Clone(x.beacon), 0), ErrMalformed},
		{"beacon as a challenge", with(x.beacon, 5, byte(KindChallenge)), ErrMalformed},
		{"beacon as a proof", with(x.beacon, 5, byte(KindProof)), ErrMalformed},
		{"beacon of a bad summary", badSummaryBeacon(), ErrMalformed},
		{"challenge pad not zeros", with(x.challenge, len(x.challenge)-1, 1), ErrMalformed},
		{"challenge with an empty cluster", emptyClusterChallenge(), ErrMalformed},
		{"challenge cluster length overruns", with(x.challenge, challengeClusterLenAt, 0xff), ErrMalformed},
		{"challenge truncated", x.challenge[:len(x.challenge)-1], ErrMalformed},
		{"proof truncated", x.proof[:len(x.proof)-1], ErrMalformed},
		{"proof trailing byte", append(bytes.Clone(x.proof), 0), ErrMalformed},
		{"proof as a beacon", with(x.proof, 5, byte(KindBeacon)), ErrMalformed},
	}
	for _, c := range cases {
		d, err := Parse(c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err != nil && !reflect.DeepEqual(d, Datagram{}) {
			t.Errorf("%s: a refusal returned %+v", c.name, d)
		}
	}
}

// shortenLastField drops the last byte of a datagram whose last field is its padding,
// patching the field's length so only the padding's length is wrong.
func shortenLastField(b []byte) []byte {
	c := bytes.Clone(b[:len(b)-1])
	at := len(c) - (BeaconPad - 1) - prefix
	binary.BigEndian.PutUint32(c[at:], BeaconPad-1)
	return c
}

func badSummaryBeacon() []byte {
	s := sampleSummary()
	s.State = 9
	return AppendBeacon(nil, s)
}

func emptyClusterChallenge() []byte {
	b := AppendHeader(nil, KindChallenge)
	b = wire.AppendField(b, make([]byte, CookieLen))
	b = wire.AppendField(b, nil)
	return wire.AppendField(b, make([]byte, 200))
}

func TestChallengeIsPaddedToTheBeacon(t *testing.T) {
	c := sampleChallenge()
	bare := HeaderLen + 3*prefix + CookieLen + len(c.ClusterID)
	for _, size := range []int{bare, bare + 1, 300, MaxDatagram} {
		b, err := AppendChallenge(nil, c, size)
		if err != nil || len(b) != size {
			t.Errorf("size %d: %d bytes, %v", size, len(b), err)
			continue
		}
		if d, err := Parse(b); err != nil || d.Challenge != c {
			t.Errorf("size %d: parsed %+v, %v", size, d, err)
		}
	}
	for _, size := range []int{bare - 1, 0, MaxDatagram + 1} {
		if b, err := AppendChallenge([]byte("x"), c, size); err == nil || string(b) != "x" {
			t.Errorf("size %d: %d bytes, %v; a challenge is never sent larger than its beacon", size, len(b), err)
		}
	}
}

func TestProofVerifiesOnlyWhatWasSigned(t *testing.T) {
	x := genuineExchange(t)
	genuine, _ := Parse(x.proof)
	other := testKey(t, 2)
	cases := map[string]func(p *Proof) string{
		"another challenger cluster": func(*Proof) string { return "c-green" },
		"another cookie":             func(p *Proof) string { p.Cookie[0] ^= 1; return "c-red" },
		"another summary byte":       func(p *Proof) string { p.SummaryRaw[len(p.SummaryRaw)-1] ^= 1; return "c-red" },
		"another key":                func(p *Proof) string { p.Key = other.Public(); return "c-red" },
		"a flipped signature":        func(p *Proof) string { p.Signature[10] ^= 1; return "c-red" },
		"a short signature":          func(p *Proof) string { p.Signature = p.Signature[:63]; return "c-red" },
		"no key":                     func(p *Proof) string { p.Key = nil; return "c-red" },
		"a small-order key": func(p *Proof) string {
			// The identity point: R = identity, S = 0 verifies under it for every message,
			// so only the key check refuses it.
			p.Key = make([]byte, 32)
			p.Key[0] = 1
			p.Signature = make([]byte, 64)
			p.Signature[0] = 1
			if !ed25519.Verify(p.Key, []byte("any message"), p.Signature) {
				panic("the small-order forgery does not verify: the case tests nothing")
			}
			return "c-red"
		},
	}
	for name, tamper := range cases {
		p := genuine.Proof
		p.SummaryRaw, p.Key, p.Signature = bytes.Clone(p.SummaryRaw), bytes.Clone(p.Key), bytes.Clone(p.Signature)
		if cluster := tamper(&p); p.Verify(cluster) {
			t.Errorf("%s: verified", name)
		}
	}
	if !genuine.Proof.Verify("c-red") {
		t.Error("the genuine proof")
	}
}

func TestParseSharesNoMemoryWithItsInput(t *testing.T) {
	x := genuineExchange(t)
	b := bytes.Clone(x.proof)
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0xee
	}
	if !p.Proof.Verify("c-red") {
		t.Error("overwriting the read buffer changed the parsed proof")
	}
}

func TestKindNames(t *testing.T) {
	for k, want := range map[Kind]string{KindBeacon: "beacon", KindChallenge: "challenge", KindProof: "proof", 7: "kind 7"} {
		if k.String() != want {
			t.Errorf("%d: %q", k, k.String())
		}
	}
}
