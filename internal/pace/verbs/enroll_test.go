package verbs

import (
	"bytes"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func fill(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

var validEnroll = EnrollRequest{NodeID: "build-7", NodeEndpoint: "10.0.0.7:6674", RaftEndpoint: "10.0.0.7:6680",
	Role: EnrollRoleLearner, Key: fill(32, 1), Nonce: [EnrollNonceLen]byte{2, 2, 2}, Signature: fill(64, 3)}

func enrollWith(mutate func([][]byte) [][]byte) func() error {
	fields := fieldsOf(wire.OpEnroll, validEnroll.Append(nil), mutate)
	return func() error { _, _, err := ParseEnroll(fields()); return err }
}

func TestParseEnrollRefusals(t *testing.T) {
	mf, tl := wire.CodeMalformedFrame, true
	checkRefusals(t, []refusalCase{
		{"seven fields", enrollWith(func(f [][]byte) [][]byte { return f[:7] }), "fields", mf, false},
		{"nine fields", enrollWith(func(f [][]byte) [][]byte { return append(f, nil) }), "fields", mf, false},
		{"empty node id", enrollWith(set(0, nil)), "nodeId", mf, false},
		{"node id 65 bytes", enrollWith(set(0, text(65))), "nodeId", mf, tl},
		{"node id not UTF-8", enrollWith(set(0, notUTF8)), "nodeId", mf, false},
		{"empty node endpoint", enrollWith(set(1, nil)), "nodeEndpoint", mf, false},
		{"node endpoint 261 bytes", enrollWith(set(1, text(MaxEndpoint+1))), "nodeEndpoint", mf, tl},
		{"empty raft endpoint", enrollWith(set(2, nil)), "raftEndpoint", mf, false},
		{"raft endpoint not UTF-8", enrollWith(set(2, notUTF8)), "raftEndpoint", mf, false},
		{"role 01 (retired)", enrollWith(set(3, []byte{1})), "role", mf, false},
		{"role 02 (retired)", enrollWith(set(3, []byte{2})), "role", mf, false},
		{"role 04", enrollWith(set(3, []byte{4})), "role", mf, false},
		{"role empty", enrollWith(set(3, nil)), "role", mf, false},
		{"role two bytes", enrollWith(set(3, []byte{0, 3})), "role", mf, false},
		{"key 31 bytes", enrollWith(set(4, fill(31, 1))), "publicKey", mf, false},
		{"key 33 bytes", enrollWith(set(4, fill(33, 1))), "publicKey", mf, false},
		{"key empty", enrollWith(set(4, nil)), "publicKey", mf, false},
		{"nonce 31 bytes", enrollWith(set(5, fill(31, 2))), "nonce", mf, false},
		{"nonce empty", enrollWith(set(5, nil)), "nonce", mf, false},
		{"challenge 31 bytes", enrollWith(set(6, fill(31, 4))), "challenge", mf, false},
		{"challenge 33 bytes", enrollWith(set(6, fill(33, 4))), "challenge", mf, false},
		{"signature 63 bytes", enrollWith(set(7, fill(63, 3))), "signature", mf, false},
		{"signature empty", enrollWith(set(7, nil)), "signature", mf, false},
	})
}

// TestParseEnrollAtBounds: a request with every text at its bound is read, and still fits the
// verb's pre-auth cap, so no bound here is unreachable on the wire.
func TestParseEnrollAtBounds(t *testing.T) {
	r := validEnroll
	endpoint := string(text(MaxEndpoint-6)) + ":65535"
	r.NodeID, r.NodeEndpoint, r.RaftEndpoint = string(text(MaxID)), endpoint, endpoint
	r.Challenge = fill(ChallengeLen, 9)
	payload := r.Append(nil)
	if info, _ := wire.Lookup(wire.OpEnroll); uint32(len(payload)) > info.Cap {
		t.Fatalf("%d bytes at every bound, the verb's cap is %d", len(payload), info.Cap)
	}
	got, unsigned, err := ParseEnroll(fieldsOf(wire.OpEnroll, payload, func(f [][]byte) [][]byte { return f })())
	if err != nil {
		t.Fatalf("a request at every bound was refused: %v", err)
	}
	if got.NodeID != r.NodeID || !bytes.Equal(got.Challenge, r.Challenge) {
		t.Fatalf("got %+v", got)
	}
	if want := payload[:len(payload)-wire.FieldPrefixLen-enrollSignatureLen]; !bytes.Equal(unsigned, want) {
		t.Fatalf("unsigned is not the payload without its signature field")
	}
}

func genEnroll(t *rapid.T) EnrollRequest {
	r := EnrollRequest{
		NodeID:       genText(1, MaxID).Draw(t, "node"),
		NodeEndpoint: genEndpoint().Draw(t, "nodeEndpoint"),
		RaftEndpoint: genEndpoint().Draw(t, "raftEndpoint"),
		Role:         EnrollRoleLearner,
		Key:          rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key"),
		Signature:    rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(t, "sig"),
	}
	copy(r.Nonce[:], rapid.SliceOfN(rapid.Byte(), EnrollNonceLen, EnrollNonceLen).Draw(t, "nonce"))
	if rapid.Bool().Draw(t, "challenge?") {
		r.Challenge = rapid.SliceOfN(rapid.Byte(), ChallengeLen, ChallengeLen).Draw(t, "challenge")
	}
	return r
}

// TestRoundTripEnroll: the request comes back, and what ParseEnroll hands the verifier is
// exactly what the asker signed.
func TestRoundTripEnroll(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genEnroll(t)
		got, unsigned, err := ParseEnroll(splitRequest(t, wire.OpEnroll, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
		if !bytes.Equal(unsigned, r.AppendUnsigned(nil)) {
			t.Fatalf("unsigned %x, want %x", unsigned, r.AppendUnsigned(nil))
		}
	})
}

var validAnswerRoster = AppendRoster(nil, Roster{ClusterID: "c1", Members: []RosterMember{
	{ID: "n1", Seat: 1, RaftEndpoint: "10.0.0.1:6680", NodeEndpoint: "10.0.0.1:6674", Key: fill(32, 5)}}})

// answer builds an ENROLL Ok body from its five fields.
func answer(outcome, roster, challenge, key, sig []byte) func() error {
	payload := rec(outcome, roster, challenge, key, sig)
	return func() error { _, _, err := ParseEnrollAnswer(payload); return err }
}

func TestParseEnrollAnswerRefusals(t *testing.T) {
	mf := wire.CodeMalformedFrame
	pending, approved, rejected := []byte{EnrollPending}, []byte{EnrollApproved}, []byte{EnrollRejected}
	ch, key, sig := fill(32, 6), fill(32, 7), fill(64, 8)
	checkRefusals(t, []refusalCase{
		{"four fields", func() error { _, _, err := ParseEnrollAnswer(rec(pending, nil, ch, nil)); return err }, "body", mf, false},
		{"six fields", func() error { _, _, err := ParseEnrollAnswer(rec(pending, nil, ch, nil, nil, nil)); return err }, "body", mf, false},
		{"truncated", func() error { _, _, err := ParseEnrollAnswer(rec(pending, nil, ch, key, sig)[:50]); return err }, "body", mf, false},
		{"outcome 00", answer([]byte{0}, nil, nil, nil, nil), "outcome", mf, false},
		{"outcome 04", answer([]byte{4}, nil, nil, nil, nil), "outcome", mf, false},
		{"outcome empty", answer(nil, nil, ch, nil, nil), "outcome", mf, false},
		{"outcome two bytes", answer([]byte{0, 1}, nil, ch, nil, nil), "outcome", mf, false},
		{"challenge 31 bytes", answer(pending, nil, fill(31, 6), nil, nil), "challenge", mf, false},
		{"key 31 bytes", answer(pending, nil, ch, fill(31, 7), sig), "key", mf, false},
		{"signature 63 bytes", answer(pending, nil, ch, key, fill(63, 8)), "signature", mf, false},
		{"key without signature", answer(pending, nil, ch, key, nil), "signature", mf, false},
		{"signature without key", answer(rejected, nil, nil, nil, sig), "signature", mf, false},
		{"approved without roster", answer(approved, nil, nil, key, sig), "roster", mf, false},
		{"pending with a roster", answer(pending, validAnswerRoster, ch, key, sig), "roster", mf, false},
		{"rejected with a roster", answer(rejected, validAnswerRoster, nil, key, sig), "roster", mf, false},
		{"pending without challenge", answer(pending, nil, nil, key, sig), "challenge", mf, false},
		{"approved with a challenge", answer(approved, validAnswerRoster, ch, key, sig), "challenge", mf, false},
		{"rejected with a challenge", answer(rejected, nil, ch, nil, nil), "challenge", mf, false},
	})
}

func TestParseEnrollAnswerAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    EnrollAnswer
	}{
		{"pending, signed", EnrollAnswer{Outcome: EnrollPending, Challenge: fill(32, 1), Key: fill(32, 2), Signature: fill(64, 3)}},
		{"pending, unsigned", EnrollAnswer{Outcome: EnrollPending, Challenge: fill(32, 1)}},
		{"approved", EnrollAnswer{Outcome: EnrollApproved, Roster: validAnswerRoster, Key: fill(32, 2), Signature: fill(64, 3)}},
		{"rejected, unsigned", EnrollAnswer{Outcome: EnrollRejected}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := tc.a.Append(nil)
			got, signed, err := ParseEnrollAnswer(payload)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Append(nil), payload) {
				t.Fatalf("re-encoded %x, received %x", got.Append(nil), payload)
			}
			if !bytes.HasPrefix(payload, signed) || len(payload)-len(signed) != 8+len(tc.a.Key)+len(tc.a.Signature) {
				t.Fatalf("signed part %x is not the first three fields of %x", signed, payload)
			}
		})
	}
}

func genEnrollAnswer(t *rapid.T) EnrollAnswer {
	a := EnrollAnswer{Outcome: rapid.SampledFrom([]uint8{EnrollPending, EnrollApproved, EnrollRejected}).Draw(t, "outcome")}
	switch a.Outcome {
	case EnrollApproved:
		a.Roster = AppendRoster(nil, genRoster(t))
	case EnrollPending:
		a.Challenge = rapid.SliceOfN(rapid.Byte(), ChallengeLen, ChallengeLen).Draw(t, "challenge")
	}
	if rapid.Bool().Draw(t, "signed") {
		a.Key = rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key")
		a.Signature = rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(t, "sig")
	}
	return a
}

// TestRoundTripEnrollAnswer: the answer comes back, its signed part is AppendSigned, and an
// approval's roster parses to the roster sent.
func TestRoundTripEnrollAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genEnrollAnswer(t)
		got, signed, err := ParseEnrollAnswer(a.Append(nil))
		checkRoundTrip(t, a, got, err)
		if !bytes.Equal(signed, a.AppendSigned(nil)) {
			t.Fatalf("signed %x, want %x", signed, a.AppendSigned(nil))
		}
		if a.Outcome == EnrollApproved {
			if _, err := ParseRoster(got.Roster); err != nil {
				t.Fatalf("the approval's roster: %v", err)
			}
		}
	})
}

func TestParseEnrollRefusesAnEndpointThatIsNotHostPort(t *testing.T) {
	for _, bad := range []string{"10.0.0.7", ":6674", "10.0.0.7:0", "10.0.0.7:70000"} {
		r := validEnroll
		r.RaftEndpoint = bad
		f, _ := wire.SplitFields(nil, r.Append(nil), EnrollArity)
		if _, _, err := ParseEnroll(f); err == nil || !strings.Contains(err.Error(), "raftEndpoint") {
			t.Errorf("raft endpoint %q: %v", bad, err)
		}
	}
}
