package wire

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestCodesAreCompleteAndNamed(t *testing.T) {
	retired := map[Code]string{0x06: "canonicalization-failed", 0x22: "enrollment-closed", 0x24: "enrollment-already-collected", 0x28: "roster-expired"}
	names := map[string]Code{}
	for b := 0x01; b <= 0x33; b++ {
		c := Code(b)
		info, ok := c.Info()
		if !ok {
			t.Fatalf("code 0x%02x is unassigned; pace-wire §1.11 assigns every byte 01..33", b)
		}
		if prev, dup := names[info.Name]; dup {
			t.Fatalf("codes 0x%02x and 0x%02x share the name %q", uint8(prev), b, info.Name)
		}
		names[info.Name] = c
		if name, isRetired := retired[c]; isRetired {
			if !c.Retired() || c.Live() || info.Name != name {
				t.Errorf("0x%02x: want retired %q, got %+v", b, name, info)
			}
			continue
		}
		if !c.Live() || c.Retired() {
			t.Errorf("0x%02x %s must be live", b, c)
		}
		if c.DefaultMessage() == "" && c != CodeNotLeader {
			t.Errorf("0x%02x %s has no default sentence", b, c)
		}
	}
	if got := len(LiveCodes()); got != 0x33-len(retired) {
		t.Errorf("LiveCodes() has %d codes, want %d", got, 0x33-len(retired))
	}
	for _, c := range []Code{0x00, 0x34, 0xFF} {
		if _, ok := c.Info(); ok || c.Live() || !strings.HasPrefix(c.String(), "code-0x") {
			t.Errorf("code 0x%02x must be unassigned, got %s", uint8(c), c)
		}
	}
}

func TestCodeNamesMatchSpec(t *testing.T) {
	want := map[Code]string{
		CodeUnsupportedVersion: "unsupported-version", CodeUnknownOpcode: "unknown-opcode",
		CodeMalformedFrame: "malformed-frame", CodePayloadTooLarge: "payload-too-large",
		CodeUnauthenticated: "unauthenticated", CodeDispatchNotPermitted: "dispatch-not-permitted",
		CodeUnsupportedCodec: "unsupported-codec", CodeNotLeader: "not-leader",
		CodeEndpointBusy: "endpoint-busy", CodeRequestDeadlineExceeded: "request-deadline-exceeded",
		CodeForeignValueGeneration: "foreign-value-generation", CodeWorkerToolchainSurveyPending: "worker-toolchain-survey-in-flight",
		CodeNotSharedCache: "not-shared-cache", CodeOperatorStandingRequired: "operator-standing-required",
	}
	for c, name := range want {
		if c.String() != name {
			t.Errorf("0x%02x is %q, want %q", uint8(c), c, name)
		}
	}
	retriable := []Code{0x07, 0x09, 0x0A, 0x0B, 0x14, 0x17, 0x1C, 0x1F, 0x23, 0x2C, 0x31, 0x32}
	count := 0
	for _, c := range LiveCodes() {
		if c.Retriable() {
			count++
		}
	}
	for _, c := range retriable {
		if !c.Retriable() {
			t.Errorf("%s must be retriable", c)
		}
	}
	if count != len(retriable) {
		t.Errorf("%d retriable codes, want exactly %d", count, len(retriable))
	}
}

func TestParseErrorPayload(t *testing.T) {
	tests := []struct {
		name       string
		in         []byte
		want       Refusal
		recognised bool
		wantErr    error
	}{
		{"empty payload is malformed", nil, Refusal{}, false, ErrMalformedFrame},
		{"code and message", []byte("\x04FETCH payload too big"), Refusal{CodePayloadTooLarge, "FETCH payload too big"}, true, nil},
		{"code only takes the default", []byte{0x08}, Refusal{CodeUnauthenticated, "authentication required"}, true, nil},
		{"not-leader during election", []byte{0x12}, Refusal{CodeNotLeader, ""}, true, nil},
		{"not-leader names the leader", []byte("\x12leader:6674"), Refusal{CodeNotLeader, "leader:6674"}, true, nil},
		{"retired code", []byte("\x06old"), Refusal{Code(0x06), "old"}, false, nil},
		{"unknown code", []byte("\x7Fnew"), Refusal{Code(0x7F), "new"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseErrorPayload(tt.in)
			if !errors.Is(err, tt.wantErr) || got != tt.want || got.Recognised() != tt.recognised {
				t.Fatalf("got %+v (recognised %v), %v; want %+v (%v), %v", got, got.Recognised(), err, tt.want, tt.recognised, tt.wantErr)
			}
		})
	}
	if (Refusal{Code: 0x7F}).Retriable() {
		t.Error("an unrecognised refusal must never be retriable")
	}
}

func TestAppendErrorPayloadSubstitutesDefault(t *testing.T) {
	got := AppendErrorPayload(nil, Refusal{Code: CodeMalformedValue})
	if string(got) != "\x05the value is not a compile-value" {
		t.Fatalf("got %q", got)
	}
	if n := ErrorPayloadLen(Refusal{Code: CodeMalformedValue}); n != len(got) {
		t.Fatalf("ErrorPayloadLen %d, AppendErrorPayload wrote %d", n, len(got))
	}
	for _, c := range []Code{0x06, 0x22, 0x24, 0x28, 0x00, 0x99} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("sending code 0x%02x must panic: it is never sent", uint8(c))
				}
			}()
			AppendErrorPayload(nil, Refusal{Code: c, Message: "x"})
		}()
	}
}

func TestErrorPayloadRoundTrip(t *testing.T) {
	live := LiveCodes()
	rapid.Check(t, func(t *rapid.T) {
		r := Refusal{Code: rapid.SampledFrom(live).Draw(t, "code"), Message: rapid.String().Draw(t, "msg")}
		got, err := ParseErrorPayload(AppendErrorPayload(nil, r))
		if err != nil {
			t.Fatal(err)
		}
		want := r
		if want.Message == "" {
			want.Message = r.Code.DefaultMessage()
		}
		if got != want || !got.Recognised() {
			t.Fatalf("round trip %+v -> %+v", r, got)
		}
		if code, ok := CodeOf(got); !ok || code != r.Code {
			t.Fatalf("CodeOf(refusal) = %v %v", code, ok)
		}
	})
}

func TestCodeOfSentinels(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{ErrMalformedFrame, CodeMalformedFrame},
		{ErrCorruptEnvelope, CodeMalformedFrame},
		{ErrInvalidUTF8, CodeMalformedFrame},
		{ErrPayloadTooLarge, CodePayloadTooLarge},
		{ErrUnsupportedCodec, CodeUnsupportedCodec},
	}
	for _, tt := range tests {
		if got, ok := CodeOf(tt.err); !ok || got != tt.want {
			t.Errorf("CodeOf(%v) = %s %v, want %s", tt.err, got, ok, tt.want)
		}
	}
	if _, ok := CodeOf(errors.New("disk on fire")); ok {
		t.Error("an unrelated error has no wire code")
	}
	if errors.Is(ErrMalformedFrame, ErrCorruptEnvelope) {
		t.Error("a plain malformed frame must not count as corrupt")
	}
}
