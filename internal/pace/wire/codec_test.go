package wire

import (
	"errors"
	"testing"
)

func TestParseCodecList(t *testing.T) {
	l, err := ParseCodecList([]byte{2, 1, 9})
	if err != nil || l.Len() != 3 || l.At(0) != CodecZstd || l.At(2) != Codec(9) {
		t.Fatalf("ParseCodecList = %+v, %v", l, err)
	}
	if !l.Set().Has(CodecIdentity) || !l.Set().Has(CodecZstd) || l.Set().Has(Codec(9)) {
		t.Fatalf("Set() = %08b: identity is implicit, unknown ids are not in it", l.Set())
	}
	if _, err := ParseCodecList(make([]byte, 17)); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("17 ids: %v", err)
	}
	if l, err := ParseCodecList(nil); err != nil || l.Len() != 0 {
		t.Fatal("an empty list is valid: identity only")
	}
	field := NewCodecList(CodecLZ4, CodecZstd).AppendField(nil)
	if string(field) != "\x00\x00\x00\x02\x01\x02" {
		t.Fatalf("codec list field % x", field)
	}
}

func TestChooseCodec(t *testing.T) {
	tests := []struct {
		name       string
		receiver   CodecList
		producible CodecSet
		want       Codec
	}{
		{"receiver's first choice", NewCodecList(CodecZstd, CodecLZ4), SupportedCodecs, CodecZstd},
		{"skip what the producer lacks", NewCodecList(CodecZstd, CodecLZ4), CodecSet(0).With(CodecLZ4), CodecLZ4},
		{"skip unknown ids", NewCodecList(Codec(7), CodecLZ4), SupportedCodecs, CodecLZ4},
		{"nothing in common is identity", NewCodecList(Codec(7)), SupportedCodecs, CodecIdentity},
		{"empty list is identity", NewCodecList(), SupportedCodecs, CodecIdentity},
	}
	for _, tt := range tests {
		if got := ChooseCodec(tt.receiver, tt.producible); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}
