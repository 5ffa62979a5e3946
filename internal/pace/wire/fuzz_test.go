package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDecodeRequest feeds a request frame through the receiver's steps:
// header, Decide under several connection states, then the exact-arity
// split for the frame's own op and for every other op in the table.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(AppendRequest(nil, OpFetch, []byte("0123456789abcdef0123456789abcdef")))
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, err := ParseRequestHeader(frame)
		if err != nil {
			return
		}
		payload := frame[RequestHeaderLen:]
		for _, st := range []ConnState{{}, {Version: 1, CredentialRequired: true}, {SessionCap: 64}} {
			d := Decide(h, st)
			if d.Action == ActionReadPayload && h.PayloadLen > d.Limit {
				t.Fatalf("read decision beyond its limit: %+v", d)
			}
			if d.Action >= ActionRefuseAndClose && !d.Refusal.Code.Live() {
				t.Fatalf("refusal with a non-live code: %+v", d)
			}
		}
		var fields [][]byte
		for _, op := range KnownOps() {
			info, _ := Lookup(op)
			fields, err = SplitFields(fields, payload, info.Arity)
			if err != nil {
				if !errors.Is(err, ErrMalformedFrame) {
					t.Fatalf("%s split error %v is not malformed-frame", op, err)
				}
				continue
			}
			if !bytes.Equal(fl(fields...), payload) {
				t.Fatalf("%s: fields do not re-encode to the payload", op)
			}
			exerciseFields(t, fields)
		}
	})
}

// exerciseFields runs every accessor over fields: none may panic, and each
// either refuses as malformed or returns what the bytes say.
func exerciseFields(t *testing.T, fields [][]byte) {
	for _, f := range fields {
		if v, present, err := OptU32(f); err == nil && present != (len(f) == 4) ||
			present && !bytes.Equal(AppendU32Field(nil, v)[4:], f) {
			t.Fatalf("OptU32(% x) = %d %v %v", f, v, present, err)
		}
		if _, _, err := OptU64(f); (err == nil) != (len(f) == 0 || len(f) == 8) {
			t.Fatalf("OptU64 accepted a %d-byte field", len(f))
		}
		_, _ = ParseCodecList(f)
		_, _ = SplitList(nil, f, 16)
		if r, err := ReadRecord(f, 24); err == nil {
			for i := range 24 {
				_, _, _ = r.U64(i)
				_, _ = r.Nested(i, 4)
			}
		}
		_, _ = CheckEnvelope(f, 1<<16, SupportedCodecs)
	}
}

// FuzzDecodeReply reads a reply stream as a client of op would.
func FuzzDecodeReply(f *testing.F) {
	f.Add(byte(OpFetch), AppendReply(nil, StatusOk, []byte("value")))
	f.Fuzz(func(t *testing.T, op byte, stream []byte) {
		info, known := Lookup(Op(op))
		status, payload, err := ReadReply(bytes.NewReader(stream), Op(op), 1<<20, func([]byte) error { return nil })
		if !known {
			if err == nil {
				t.Fatal("a reply to an unknown op was accepted")
			}
			return
		}
		var refusal Refusal
		switch {
		case err == nil:
			if !status.Terminal() || !info.Statuses.Has(status) || uint32(len(payload)) > info.ReplyLimit(1<<20) {
				t.Fatalf("accepted %s reply of %d bytes to %s", status, len(payload), info.Name)
			}
		case errors.As(err, &refusal):
			if status != StatusError || len(payload) == 0 || refusal.Code != Code(payload[0]) {
				t.Fatalf("refusal %v from payload %q", refusal, payload)
			}
			if refusal.Recognised() && len(payload) > 1 && !bytes.Equal(AppendErrorPayload(nil, refusal), payload) {
				t.Fatalf("refusal does not re-encode: %q", payload)
			}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, ErrMalformedFrame),
			errors.Is(err, ErrUnknownStatus), errors.Is(err, ErrIllegalStatus), errors.Is(err, ErrReplyTooLarge):
		default:
			t.Fatalf("unclassified reply error %v", err)
		}
	})
}

// FuzzOpenEnvelope opens arbitrary envelopes under arbitrary ceilings and
// codec sets (the ceiling is bounded so the fuzzer's own memory stays sane).
func FuzzOpenEnvelope(f *testing.F) {
	f.Add(envelope(CodecIdentity, 3, []byte("abc")), uint32(1<<20), byte(SupportedCodecs))
	f.Fuzz(func(t *testing.T, field []byte, ceiling uint32, accept byte) {
		ceiling = min(ceiling, 16<<20)
		out, err := Open(field, ceiling, CodecSet(accept))
		switch {
		case err == nil:
			env, _ := ParseEnvelope(field)
			if uint32(len(out)) != env.RawLen || env.RawLen > ceiling {
				t.Fatalf("opened %d bytes, declared %d, ceiling %d", len(out), env.RawLen, ceiling)
			}
			if env.Codec != CodecIdentity && !CodecSet(accept).Has(env.Codec) {
				t.Fatalf("opened codec %s outside the accepted set", env.Codec)
			}
			resealed, _ := Seal(nil, env.Codec, out)
			if again, err := Open(resealed, ceiling, CodecSet(accept)); err != nil || !bytes.Equal(again, out) {
				t.Fatalf("reseal round trip: %v", err)
			}
		case errors.Is(err, ErrMalformedFrame), errors.Is(err, ErrPayloadTooLarge), errors.Is(err, ErrUnsupportedCodec):
			if out != nil {
				t.Fatal("a refused envelope returned bytes")
			}
		default:
			t.Fatalf("unclassified envelope error %v", err)
		}
	})
}
