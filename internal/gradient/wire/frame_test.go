package wire

import (
	"errors"
	"testing"
)

func TestAgreeFrame(t *testing.T) {
	ours := VersionRange{30, 30}
	tests := []struct {
		name   string
		frame  []byte
		agreed uint16
		reason string
	}{
		{name: "same range", frame: VersionFrame(VersionRange{30, 30}), agreed: 30},
		{name: "peer newer but overlapping", frame: VersionFrame(VersionRange{28, 33}), agreed: 30},
		{name: "peer older but overlapping", frame: VersionFrame(VersionRange{27, 30}), agreed: 30},
		{name: "no overlap above", frame: VersionFrame(VersionRange{31, 32}),
			reason: "no shared protocol version: ours 30..=30, peer 31..=32"},
		{name: "no overlap below", frame: VersionFrame(VersionRange{27, 29}),
			reason: "no shared protocol version: ours 30..=30, peer 27..=29"},
		{name: "inverted peer range", frame: VersionFrame(VersionRange{32, 31}),
			reason: "no shared protocol version: ours 30..=30, peer 32..=31"},
		{name: "pre-Proto first frame", frame: []byte{0x00, 0x01, 0x02}, reason: "peer protocol is older than 30"},
		{name: "GRAD but 9 bytes", frame: append(VersionFrame(VersionRange{30, 30}), 0),
			reason: "peer protocol is older than 30"},
		{name: "8 bytes without GRAD", frame: []byte("GRAF\x1e\x00\x1e\x00"), reason: "peer protocol is older than 30"},
		{name: "empty frame", frame: nil, reason: "peer protocol is older than 30"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			agreed, err := AgreeFrame(ours, tc.frame)
			if tc.reason == "" {
				if err != nil || agreed != tc.agreed {
					t.Fatalf("AgreeFrame = %d, %v; want %d", agreed, err, tc.agreed)
				}
				return
			}
			var ae *AgreementError
			if !errors.As(err, &ae) {
				t.Fatalf("AgreeFrame error = %v, want *AgreementError", err)
			}
			if ae.Code != 1002 || ae.Reason != tc.reason {
				t.Errorf("got close %d %q, want 1002 %q", ae.Code, ae.Reason, tc.reason)
			}
		})
	}
}

func TestAgreeIsSymmetric(t *testing.T) {
	ranges := []VersionRange{{27, 27}, {28, 31}, {30, 30}, {30, 33}, {31, 32}, {25, 40}}
	for _, a := range ranges {
		for _, b := range ranges {
			va, ea := Agree(a, b)
			vb, eb := Agree(b, a)
			if va != vb || (ea == nil) != (eb == nil) {
				t.Errorf("Agree(%v, %v) = %d, %v but Agree(%v, %v) = %d, %v", a, b, va, ea, b, a, vb, eb)
			}
			if ea == nil && (!a.Contains(va) || !b.Contains(va)) {
				t.Errorf("Agree(%v, %v) = %d lies outside a range", a, b, va)
			}
		}
	}
}

func TestParseVersionFrameRejectsNonFrames(t *testing.T) {
	for _, frame := range [][]byte{nil, []byte("GRAD"), []byte("GRAD\x1e\x00\x1e"), []byte("grad\x1e\x00\x1e\x00")} {
		if _, err := ParseVersionFrame(frame); !errors.Is(err, ErrNotVersionFrame) {
			t.Errorf("ParseVersionFrame(%q) error = %v, want ErrNotVersionFrame", frame, err)
		}
	}
}
