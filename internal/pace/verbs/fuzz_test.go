package verbs

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// fuzzBody splits a fuzzed payload with op's arity and parses it. A
// refusal must be an *Error with a live code naming a field; an accepted
// body must survive Append and Parse again unchanged.
func fuzzBody[T interface{ Append([]byte) []byte }](t *testing.T, op wire.Op, payload []byte, parse func([][]byte) (T, error)) {
	info, _ := wire.Lookup(op)
	fields, err := wire.SplitFields(nil, payload, info.Arity)
	if err != nil {
		return
	}
	got, err := parse(fields)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || !e.Code.Live() || e.Field == "" {
			t.Fatalf("refusal %v is not a coded *Error naming a field", err)
		}
		return
	}
	again, err := parse(splitOrFail(t, op, got.Append(nil)))
	if err != nil {
		t.Fatalf("re-encoding an accepted body was refused: %v", err)
	}
	if diff := cmp.Diff(got, again, diffOpts); diff != "" {
		t.Fatalf("re-encoded body differs (-first +second):\n%s", diff)
	}
}

func splitOrFail(t *testing.T, op wire.Op, payload []byte) [][]byte {
	info, _ := wire.Lookup(op)
	fields, err := wire.SplitFields(nil, payload, info.Arity)
	if err != nil {
		t.Fatalf("Append produced an unsplittable payload: %v", err)
	}
	return fields
}

func FuzzParseLease(f *testing.F) {
	f.Add(validLease.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fuzzBody(t, wire.OpLease, payload, ParseLease)
		if r, err := ParseLease(splitOrNil(wire.OpLease, payload)); err == nil {
			if len(r.Fingerprint) > MaxFingerprint || len(r.Key) > MaxKey || len(r.Exclusions) > MaxExclusions {
				t.Fatalf("accepted beyond a bound: %+v", r)
			}
		}
	})
}

func FuzzParseRegister(f *testing.F) {
	f.Add(validRegister.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fuzzBody(t, wire.OpRegister, payload, ParseRegister)
		_, err := ParseRegister(splitOrNil(wire.OpRegister, payload))
		var e *Error
		if errors.As(err, &e) && e.Code != wire.CodeMalformedFrame && e.Code != wire.CodeMalformedRegistration {
			t.Fatalf("REGISTER refused with %s", e.Code)
		}
	})
}

func FuzzParseCompile(f *testing.F) {
	f.Add(validCompile.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fuzzBody(t, wire.OpCompile, payload, ParseCompile)
		if r, err := ParseCompile(splitOrNil(wire.OpCompile, payload)); err == nil {
			if (r.CompileDir == "") != (r.CompileDirReplacement == "") || (r.SourceRoot == "") != (r.SourceRootReplacement == "") {
				t.Fatalf("accepted a half-filled pair: %+v", r)
			}
		}
	})
}

// FuzzParseReplies feeds the client-side parsers: none may panic, and a
// refusal is always a coded *Error.
func FuzzParseReplies(f *testing.F) {
	f.Add(LeaseGrant{Endpoint: "10.0.0.2:6674", Token: "dG9r"}.Append(nil))
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, parse := range []func([]byte) error{
			func(b []byte) error { _, err := ParseLeaseGrant(b); return err },
			func(b []byte) error { _, err := ParseRegisterOk(b); return err },
			func(b []byte) error { _, err := ParseCompileReply(b); return err },
			func(b []byte) error { _, err := ParseMintTicketOk(b); return err },
			func(b []byte) error { _, err := ParseNodeChallengeOk(b); return err },
		} {
			var e *Error
			if err := parse(payload); err != nil && !errors.As(err, &e) {
				t.Fatalf("refusal %v is not an *Error", err)
			}
		}
	})
}

func splitOrNil(op wire.Op, payload []byte) [][]byte {
	info, _ := wire.Lookup(op)
	fields, _ := wire.SplitFields(nil, payload, info.Arity)
	return fields
}
