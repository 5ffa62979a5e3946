package wire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every decode error of gradient-protocol §2.2, on real messages at v30.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		server bool
		frame  []byte
		want   error
	}{
		{name: "empty frame", frame: nil, want: TruncatedError{}},
		{name: "string cut short", frame: []byte{18, 3, 'a'}, want: TruncatedError{}},
		{name: "missing trailing fields", frame: []byte{27}, want: TruncatedError{}},
		{name: "f32 cut short", frame: []byte{5, 0, 0, 0xc0}, want: TruncatedError{}},
		{name: "hostile seq count refused before allocating", frame: []byte{16, 1, 'j', 0xff, 0xff, 0xff, 0xff, 0x0f},
			want: TruncatedError{}},
		{name: "bytes length beyond frame", frame: []byte{15, 1, 'j', 0, 0x80, 0x80, 0x04, 1, 2}, want: TruncatedError{}},
		{name: "varint cut short", frame: []byte{27, 0x80}, want: TruncatedError{}},
		{name: "trailing bytes", frame: []byte{2, 0, 0}, want: TrailingBytesError{N: 2}},
		{name: "varint of 11 bytes", frame: append([]byte{27}, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00),
			want: VarintOverflowError{}},
		{name: "10th varint byte above 1", frame: append([]byte{27}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02),
			want: VarintOverflowError{}},
		{name: "overlong varint", frame: []byte{27, 0x81, 0x00}, want: NonCanonicalVarintError{}},
		{name: "u16 out of range", frame: []byte{3, 0x80, 0x80, 0x04, 0}, want: OutOfRangeError{Type: "u16"}},
		{name: "u32 out of range", frame: []byte{15, 1, 'j', 0x80, 0x80, 0x80, 0x80, 0x10, 0},
			want: OutOfRangeError{Type: "u32"}},
		{name: "bool byte 2", frame: []byte{8, 1, 'j', 2, 0}, want: InvalidBoolError{Byte: 2}},
		{name: "option tag 2", frame: []byte{8, 1, 'j', 1, 2}, want: InvalidBoolError{Byte: 2}},
		{name: "invalid UTF-8", frame: []byte{18, 1, 0xff, 0}, want: InvalidUTF8Error{}},
		{name: "top-level variant past the end", frame: []byte{29}, want: UnknownVariantError{"ClientMessage", 29, 30}},
		{name: "nested unit enum index", frame: []byte{19, 2}, want: UnknownVariantError{"JobKind", 2, 30}},
		{name: "nested data enum index", frame: []byte{24, 1, 'j', 7, 9, 0}, want: UnknownVariantError{"UploadObject", 9, 30}},
		{name: "server variant past the end", server: true, frame: []byte{27}, want: UnknownVariantError{"ServerMessage", 27, 30}},
		{name: "huge variant index", server: true, frame: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
			want: UnknownVariantError{"ServerMessage", 1<<64 - 1, 30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.server {
				_, err = DecodeServerMessage(tc.frame, 30)
			} else {
				_, err = DecodeClientMessage(tc.frame, 30)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want *DecodeError", err, err)
			}
			if diff := cmp.Diff(tc.want, de.Err); diff != "" {
				t.Errorf("wrapped error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("errors.Is(%v, %#v) = false", err, tc.want)
			}
		})
	}
}

func TestDecodeErrorIsInspectableWithAs(t *testing.T) {
	_, err := DecodeClientMessage([]byte{3, 0x80, 0x80, 0x04, 0}, 30)
	var oor OutOfRangeError
	if !errors.As(err, &oor) || oor.Type != "u16" {
		t.Fatalf("errors.As OutOfRangeError: %v", err)
	}
	var de *DecodeError
	if !errors.As(err, &de) || de.Message != "ClientMessage" || de.Offset != 4 {
		t.Errorf("DecodeError = %+v, want ClientMessage stopped at byte 4", de)
	}
}

func TestEncodeRefusesMalformedValues(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"nil nested enum", &JobUpdate{JobID: "j"}},
		{"typed nil nested variant", &AssignJob{Job: (*FlakeJob)(nil)}},
		{"typed nil message", (*NarPush)(nil)},
		{"unit enum value past the end", &RequestJob{Kind: JobKind(7)}},
		{"string not UTF-8", &AbortJob{JobID: "\xff"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := Append(dst, tc.msg, 30)
			var ee *EncodeError
			if !errors.As(err, &ee) || ee.Reason == "" {
				t.Fatalf("Append error = %v, want *EncodeError with a reason", err)
			}
			if string(out) != "prefix" {
				t.Errorf("Append returned %q after a failure, want dst unchanged", out)
			}
		})
	}
	if _, err := Encode(nil, 30); err == nil {
		t.Error("Encode(nil) succeeded")
	}
}
