package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// refusalCase is one body a parser must refuse: which field it names, with
// which code, and whether it is a bound (counted `…_field_too_long_total`)
// or any other fault (`…_malformed_total`).
type refusalCase struct {
	name    string
	parse   func() error
	field   string
	code    wire.Code
	tooLong bool
}

func checkRefusals(t *testing.T, cases []refusalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a refusal of %s", err, tc.field)
			}
			if e.Field != tc.field || e.Code != tc.code || e.TooLong != tc.tooLong {
				t.Fatalf("got field %q code %s tooLong %v (%v), want %q %s %v", e.Field, e.Code, e.TooLong, err, tc.field, tc.code, tc.tooLong)
			}
			if IsTooLong(err) != tc.tooLong || errors.Is(err, ErrMalformed) == tc.tooLong {
				t.Fatalf("sentinels disagree with TooLong=%v: %v", tc.tooLong, err)
			}
			if !errors.Is(err, wire.ErrMalformedFrame) {
				t.Fatalf("%v does not match wire.ErrMalformedFrame", err)
			}
			r, ok := RefusalOf(err)
			if !ok || r.Code != tc.code || !strings.HasPrefix(r.Message, tc.field+": ") {
				t.Fatalf("RefusalOf = %+v, %v", r, ok)
			}
		})
	}
}

// fieldsOf appends a request and splits it back into its fields, then lets
// mutate replace some.
func fieldsOf(op wire.Op, payload []byte, mutate func(f [][]byte) [][]byte) func() [][]byte {
	return func() [][]byte {
		info, _ := wire.Lookup(op)
		f, err := wire.SplitFields(nil, payload, info.Arity)
		if err != nil {
			panic(err)
		}
		return mutate(f)
	}
}

func set(i int, b []byte) func([][]byte) [][]byte {
	return func(f [][]byte) [][]byte { f[i] = b; return f }
}

func list(entries ...[]byte) []byte { return wire.AppendList(nil, entries...)[wire.FieldPrefixLen:] }

func repeat(n int, b []byte) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func text(n int) []byte { return []byte(strings.Repeat("a", n)) }

var notUTF8 = []byte{'g', 'c', 'c', 0xff}

var validLease = LeaseRequest{Fingerprint: "fp", Key: "0123456789abcdef0123456789abcdef", Codecs: wire.NewCodecList(wire.CodecZstd)}

func leaseWith(mutate func([][]byte) [][]byte) func() error {
	fields := fieldsOf(wire.OpLease, validLease.Append(nil), mutate)
	return func() error { _, err := ParseLease(fields()); return err }
}

func TestParseLeaseRefusals(t *testing.T) {
	mf, tl := wire.CodeMalformedFrame, true
	checkRefusals(t, []refusalCase{
		{"four fields", leaseWith(func(f [][]byte) [][]byte { return f[:4] }), "fields", mf, false},
		{"empty fingerprint", leaseWith(set(0, nil)), "fingerprint", mf, false},
		{"fingerprint 65 bytes", leaseWith(set(0, text(65))), "fingerprint", mf, tl},
		{"fingerprint not UTF-8", leaseWith(set(0, notUTF8)), "fingerprint", mf, false},
		{"empty key", leaseWith(set(1, nil)), "key", mf, false},
		{"key 65 bytes", leaseWith(set(1, text(65))), "key", mf, tl},
		{"17 codecs", leaseWith(set(2, text(17))), "codecs", mf, tl},
		{"17 exclusions", leaseWith(set(3, list(repeat(17, []byte("h:1"))...))), "exclusions", mf, tl},
		{"exclusion 262 bytes", leaseWith(set(3, list(text(262)))), "exclusions", mf, tl},
		{"empty exclusion", leaseWith(set(3, list([]byte("h:1"), nil))), "exclusions", mf, false},
		{"truncated exclusions", leaseWith(set(3, list([]byte("h:1"))[:5])), "exclusions", mf, false},
		{"label 129 bytes", leaseWith(set(4, text(129))), "toolchainLabel", mf, tl},
		{"label not UTF-8", leaseWith(set(4, notUTF8)), "toolchainLabel", mf, false},
	})
}

func TestParseLeaseAtBounds(t *testing.T) {
	r := LeaseRequest{
		Fingerprint: string(text(MaxFingerprint)), Key: string(text(MaxKey)),
		Codecs:         wire.NewCodecList(make([]wire.Codec, wire.MaxCodecList)...),
		Exclusions:     strings.Split(strings.Repeat(string(text(MaxExclusionLen))+",", MaxExclusions-1)+string(text(MaxExclusionLen)), ","),
		ToolchainLabel: string(text(MaxLabel)),
	}
	fields := fieldsOf(wire.OpLease, r.Append(nil), func(f [][]byte) [][]byte { return f })()
	got, err := ParseLease(fields)
	if err != nil {
		t.Fatalf("a request at every bound was refused: %v", err)
	}
	if len(got.Exclusions) != MaxExclusions || got.Codecs.Len() != wire.MaxCodecList {
		t.Fatalf("got %d exclusions, %d codecs", len(got.Exclusions), got.Codecs.Len())
	}
}

func TestParseReleaseRefusals(t *testing.T) {
	payload := ReleaseRequest{Token: "dG9rZW4", Key: "k"}.Append(nil)
	release := func(m func([][]byte) [][]byte) func() error {
		fields := fieldsOf(wire.OpRelease, payload, m)
		return func() error { _, err := ParseRelease(fields()); return err }
	}
	checkRefusals(t, []refusalCase{
		{"empty token", release(set(0, nil)), "leaseToken", wire.CodeMalformedFrame, false},
		{"token over its bound", release(set(0, text(MaxLeaseToken+1))), "leaseToken", wire.CodeMalformedFrame, true},
		{"key 65 bytes", release(set(1, text(65))), "key", wire.CodeMalformedFrame, true},
		{"three fields", release(func(f [][]byte) [][]byte { return append(f, nil) }), "fields", wire.CodeMalformedFrame, false},
	})
}

func TestParseLeaseGrantRefusals(t *testing.T) {
	g := LeaseGrant{Endpoint: "10.0.0.2:6674", Token: "dG9r", LifetimeMs: 600000}
	grant := func(i int, b []byte) func() error {
		f, _ := wire.SplitFields(nil, g.Append(nil), LeaseGrantArity)
		f[i] = b
		var payload []byte
		for _, x := range f {
			payload = wire.AppendField(payload, x)
		}
		return func() error { _, err := ParseLeaseGrant(payload); return err }
	}
	checkRefusals(t, []refusalCase{
		{"lifetime 3 bytes", grant(3, []byte{1, 2, 3}), "lifetimeMs", wire.CodeMalformedFrame, false},
		{"worker key 31 bytes", grant(5, make([]byte, 31)), "workerKey", wire.CodeMalformedFrame, false},
		{"empty endpoint", grant(0, nil), "endpoint", wire.CodeMalformedFrame, false},
		{"five fields", func() error { _, err := ParseLeaseGrant(g.Append(nil)[:len(g.Append(nil))-4]); return err }, "body", wire.CodeMalformedFrame, false},
	})
}
