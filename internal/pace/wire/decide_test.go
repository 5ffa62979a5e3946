package wire

import (
	"testing"
)

func TestDecide(t *testing.T) {
	const session = 1 << 20
	hdr := func(op Op, n uint32) RequestHeader { return RequestHeader{Magic, Version, op, n} }
	fresh := ConnState{SessionCap: session}
	locked := ConnState{SessionCap: session, CredentialRequired: true}
	tests := []struct {
		name   string
		h      RequestHeader
		st     ConnState
		action Action
		code   Code
		msg    string
	}{
		{"bad magic", RequestHeader{'G', 'E', 'T', 0}, fresh, ActionClose, 0, ""},
		{"bad magic beats everything", RequestHeader{0x00, 99, 0x16, 1 << 31}, locked, ActionClose, 0, ""},
		{"version 0", RequestHeader{Magic, 0, OpFetch, 4}, fresh, ActionRefuseAndClose, CodeUnsupportedVersion,
			"unsupported wire version 0; this server speaks 1..1"},
		{"version 15 (upstream)", RequestHeader{Magic, 15, OpFetch, 4}, fresh, ActionRefuseAndClose, CodeUnsupportedVersion,
			"unsupported wire version 15; this server speaks 1..1"},
		{"version changed mid-connection", RequestHeader{Magic, 1, OpFetch, 4}, ConnState{Version: 2, SessionCap: session},
			ActionRefuseAndClose, CodeUnsupportedVersion, "unsupported wire version 1; this server speaks 1..1"},
		{"version beats unknown opcode", RequestHeader{Magic, 7, 0x99, 0}, fresh, ActionRefuseAndClose, CodeUnsupportedVersion,
			"unsupported wire version 7; this server speaks 1..1"},
		{"pinned version matches", hdr(OpFetch, 4), ConnState{Version: 1, SessionCap: session}, ActionReadPayload, 0, ""},
		{"unknown opcode drained", hdr(0x99, 100), fresh, ActionRefuseAndDrain, CodeUnknownOpcode, "unknown opcode 0x99"},
		{"retired opcode drained", hdr(0x16, 0), fresh, ActionRefuseAndDrain, CodeUnknownOpcode,
			"opcode 0x16 (cluster-admit-client) is retired"},
		{"unknown opcode beats the auth gate", hdr(0x1D, 0), locked, ActionRefuseAndDrain, CodeUnknownOpcode,
			"opcode 0x1d (cluster-admit-worker) is retired"},
		{"unknown opcode beyond 4x session cap ends", hdr(0x99, 4*session+1), fresh, ActionRefuseAndEnd, CodeUnknownOpcode, "unknown opcode 0x99"},
		{"at the cap reads", hdr(OpAuth, MaxAuthPayload), fresh, ActionReadPayload, 0, ""},
		{"over the cap drained", hdr(OpAuth, MaxAuthPayload+1), fresh, ActionRefuseAndDrain, CodePayloadTooLarge,
			"AUTH payload of 4097 bytes exceeds its cap of 4096 bytes"},
		{"over the cap beats the auth gate", hdr(OpFetch, session+1), locked, ActionRefuseAndDrain, CodePayloadTooLarge,
			"FETCH payload of 1048577 bytes exceeds its cap of 1048576 bytes"},
		{"exactly 4x cap still drained", hdr(OpAuth, 4*MaxAuthPayload), fresh, ActionRefuseAndDrain, CodePayloadTooLarge,
			"AUTH payload of 16384 bytes exceeds its cap of 4096 bytes"},
		{"beyond 4x cap ends", hdr(OpAuth, 4*MaxAuthPayload+1), fresh, ActionRefuseAndEnd, CodePayloadTooLarge,
			"AUTH payload of 16385 bytes exceeds its cap of 4096 bytes"},
		{"session cap below a verb cap", hdr(OpRegister, 2000), ConnState{SessionCap: 1000}, ActionRefuseAndDrain,
			CodePayloadTooLarge, "REGISTER payload of 2000 bytes exceeds its cap of 1000 bytes"},
		{"zero session cap means the default", hdr(OpStore, DefaultSessionCap), ConnState{}, ActionReadPayload, 0, ""},
		{"4 GiB store ends", hdr(OpStore, 0xFFFFFFFF), ConnState{}, ActionRefuseAndEnd, CodePayloadTooLarge,
			"STORE payload of 4294967295 bytes exceeds its cap of 268435456 bytes"},
		{"credential missing", hdr(OpFetch, 10), locked, ActionRefuseAndDrain, CodeUnauthenticated, "authentication required"},
		{"credential missing on a zero-arity verb", hdr(OpNodeStatus, 0), locked, ActionRefuseAndDrain, CodeUnauthenticated, "authentication required"},
		{"AUTH is pre-auth", hdr(OpAuth, 20), locked, ActionReadPayload, 0, ""},
		{"FLEET-SUMMARY is pre-auth", hdr(OpFleetSummary, 36), locked, ActionReadPayload, 0, ""},
		{"authenticated reads", hdr(OpStore, 10), ConnState{CredentialRequired: true, Authenticated: true}, ActionReadPayload, 0, ""},
		{"no credential required reads", hdr(OpFetch, 10), fresh, ActionReadPayload, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.h, tt.st)
			if d.Action != tt.action || d.Refusal.Code != tt.code || d.Refusal.Message != tt.msg {
				t.Fatalf("Decide = %s %s %q; want %s %s %q", d.Action, d.Refusal.Code, d.Refusal.Message, tt.action, tt.code, tt.msg)
			}
			if d.Action == ActionReadPayload && (d.Info.Op != tt.h.Op || d.Limit == 0 || tt.h.PayloadLen > d.Limit) {
				t.Fatalf("read decision without its op row or limit: %+v", d)
			}
		})
	}
}

func TestDecideNeverReadsBeyondTheLimit(t *testing.T) {
	// Exhaustive over every opcode byte and a spread of lengths: whatever is
	// read fits the limit, whatever is drained is at most 4x the limit.
	lengths := []uint32{0, 1, 63, 64, 65, 512, 513, 4096, 4097, 65536, 65537, 1 << 20, 1<<20 + 1, 4 << 20, 4<<20 + 1, 0xFFFFFFFF}
	for op := 0; op < 256; op++ {
		for _, n := range lengths {
			d := Decide(RequestHeader{Magic, Version, Op(op), n}, ConnState{SessionCap: 1 << 20})
			switch d.Action {
			case ActionReadPayload:
				if n > d.Limit {
					t.Fatalf("op 0x%02x len %d: read beyond limit %d", op, n, d.Limit)
				}
			case ActionRefuseAndDrain:
				if uint64(n) > uint64(d.Limit)*OversizeDrainFactor {
					t.Fatalf("op 0x%02x len %d: drain beyond 4x %d", op, n, d.Limit)
				}
			case ActionRefuseAndEnd:
				if uint64(n) <= uint64(d.Limit)*OversizeDrainFactor {
					t.Fatalf("op 0x%02x len %d: ended a drainable frame", op, n)
				}
			default:
				t.Fatalf("op 0x%02x: unexpected %s", op, d.Action)
			}
		}
	}
}
