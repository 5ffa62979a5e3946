package verbs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// fuzzReply parses a fuzzed reply payload. A refusal must be a coded *Error naming a field; an
// accepted body must survive encode and parse again unchanged. It returns the accepted value
// and whether there was one.
func fuzzReply[T any](t *testing.T, payload []byte, parse func([]byte) (T, error), encode func(T) []byte) (T, bool) {
	got, err := parse(payload)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || !e.Code.Live() || e.Field == "" {
			t.Fatalf("refusal %v is not a coded *Error naming a field", err)
		}
		return got, false
	}
	again, err := parse(encode(got))
	if err != nil {
		t.Fatalf("re-encoding an accepted body was refused: %v", err)
	}
	if diff := cmp.Diff(got, again, diffOpts); diff != "" {
		t.Fatalf("re-encoded body differs (-first +second):\n%s", diff)
	}
	return got, true
}

// FuzzParseEnroll: ENROLL's encoding is canonical, so an accepted request re-encodes to the very
// bytes received, and the unsigned part handed to the verifier is those bytes less the signature.
func FuzzParseEnroll(f *testing.F) {
	f.Add(validEnroll.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		parse := func(fields [][]byte) (EnrollRequest, error) { r, _, err := ParseEnroll(fields); return r, err }
		fuzzBody(t, wire.OpEnroll, payload, parse)
		r, unsigned, err := ParseEnroll(splitOrNil(wire.OpEnroll, payload))
		if err != nil {
			return
		}
		if r.Role != EnrollRoleLearner || len(r.Key) != enrollKeyLen || len(r.Signature) != enrollSignatureLen ||
			(r.Challenge != nil && len(r.Challenge) != ChallengeLen) {
			t.Fatalf("accepted a request outside its grammar: %+v", r)
		}
		if !bytes.Equal(r.Append(nil), payload) {
			t.Fatalf("re-encoded %x, received %x", r.Append(nil), payload)
		}
		if !bytes.Equal(unsigned, payload[:len(payload)-wire.FieldPrefixLen-enrollSignatureLen]) {
			t.Fatalf("unsigned %x is not the received fields before the signature", unsigned)
		}
	})
}

// FuzzParseEnrollAnswer: what a joiner accepts keeps the pairings (key with signature, roster
// with approval, challenge with pending), re-encodes to the bytes received, and its signed part
// is those bytes less the key and signature.
func FuzzParseEnrollAnswer(f *testing.F) {
	f.Add(EnrollAnswer{Outcome: EnrollApproved, Roster: validAnswerRoster, Key: fill(32, 2), Signature: fill(64, 3)}.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		parse := func(b []byte) (EnrollAnswer, error) { a, _, err := ParseEnrollAnswer(b); return a, err }
		a, ok := fuzzReply(t, payload, parse, func(a EnrollAnswer) []byte { return a.Append(nil) })
		if !ok {
			return
		}
		if (a.Key == nil) != (a.Signature == nil) || (a.Outcome == EnrollApproved) != (len(a.Roster) > 0) ||
			(a.Outcome == EnrollPending) != (a.Challenge != nil) {
			t.Fatalf("accepted an answer that breaks a pairing: %+v", a)
		}
		if !bytes.Equal(a.Append(nil), payload) {
			t.Fatalf("re-encoded %x, received %x", a.Append(nil), payload)
		}
		_, signed, _ := ParseEnrollAnswer(payload)
		if tail := 2*wire.FieldPrefixLen + len(a.Key) + len(a.Signature); !bytes.Equal(signed, payload[:len(payload)-tail]) {
			t.Fatalf("signed %x is not the received fields before the key", signed)
		}
	})
}

// FuzzParseRoster: an accepted roster re-encodes to the record received, so the joiner's
// fingerprint names what the leader sent.
func FuzzParseRoster(f *testing.F) {
	f.Add(validAnswerRoster)
	f.Fuzz(func(t *testing.T, record []byte) {
		r, ok := fuzzReply(t, record, ParseRoster, func(r Roster) []byte { return AppendRoster(nil, r) })
		if !ok {
			return
		}
		if len(r.Members) > MaxRosterMembers {
			t.Fatalf("accepted %d members", len(r.Members))
		}
		for _, m := range r.Members {
			if m.ID == "" || m.Seat < 1 || m.Seat > 2 || len(m.Key) != enrollKeyLen {
				t.Fatalf("accepted member %+v", m)
			}
		}
		if !bytes.Equal(AppendRoster(nil, r), record) {
			t.Fatalf("re-encoded %x, received %x", AppendRoster(nil, r), record)
		}
	})
}

func FuzzParseEnrollControl(f *testing.F) {
	f.Add(EnrollControl{Verb: EnrollApprove, ID: "n1", Key: fill(32, 1)}.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fuzzBody(t, wire.OpEnrollControl, payload, ParseEnrollControl)
		c, err := ParseEnrollControl(splitOrNil(wire.OpEnrollControl, payload))
		if err != nil {
			return
		}
		if (c.Verb == EnrollAutoApprove) != (c.Seconds != 0) || c.Seconds > MaxAutoApproveSeconds ||
			(c.Verb == EnrollApprove) != (len(c.Key) == enrollKeyLen) ||
			(c.Verb == EnrollApprove || c.Verb == EnrollReject) != (c.ID != "") {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func FuzzParseEnrollmentList(f *testing.F) {
	f.Add(rec([]byte{EnrollStateAuto}, u64(90), list(rec(goodRow()...))))
	f.Fuzz(func(t *testing.T, payload []byte) {
		l, ok := fuzzReply(t, payload, ParseEnrollmentList, func(l EnrollmentList) []byte { return l.Append(nil) })
		if !ok {
			return
		}
		if len(l.Rows) > MaxEnrollmentRows {
			t.Fatalf("accepted %d rows", len(l.Rows))
		}
		for _, r := range l.Rows {
			if r.ID == "" || len(r.Key) != enrollKeyLen || (r.RosterFP != nil && len(r.RosterFP) != 32) {
				t.Fatalf("accepted row %+v", r)
			}
		}
	})
}
