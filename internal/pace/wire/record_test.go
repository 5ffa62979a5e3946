package wire

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestReadRecordVariableArity(t *testing.T) {
	u32 := func(v uint32) []byte { return AppendU32Field(nil, v)[4:] }
	tests := []struct {
		name      string
		record    []byte
		known     int
		wantLen   int
		wantErr   bool
		checkPos2 func(t *testing.T, r Record)
	}{
		{"fewer than known: trailing positions unsaid", fl(u32(1), u32(2)), 4, 2, false, nil},
		{"surplus ignored", fl(u32(1), u32(2), u32(3), []byte("future")), 2, 2, false, nil},
		{"empty record", nil, 3, 0, false, nil},
		{"surplus still framed", append(fl(u32(1)), 0, 0), 1, 0, true, nil},
		{"absent position", fl(u32(1), nil, u32(3)), 3, 3, false, func(t *testing.T, r Record) {
			if _, present, err := r.U32(1); present || err != nil || !r.Said(1) {
				t.Fatalf("position 1: present=%v err=%v said=%v", present, err, r.Said(1))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadRecord(tt.record, tt.known)
			if tt.wantErr != (err != nil) || (err == nil && r.Len() != tt.wantLen) {
				t.Fatalf("ReadRecord: len %d err %v; want len %d err %v", r.Len(), err, tt.wantLen, tt.wantErr)
			}
			if tt.checkPos2 != nil {
				tt.checkPos2(t, r)
			}
		})
	}
}

func TestRecordRefusesWrongWidthOfKnownField(t *testing.T) {
	r, err := ReadRecord(fl(AppendU32Field(nil, 7)[4:], []byte{1, 2, 3}), 2)
	if err != nil {
		t.Fatal(err)
	}
	if v, present, err := r.U32(0); v != 7 || !present || err != nil {
		t.Fatalf("position 0 = %d %v %v", v, present, err)
	}
	if _, _, err := r.U64(1); !errors.Is(err, ErrMalformedFrame) {
		t.Fatal("a 3-byte u64 at a known position must be refused")
	}
	if _, present, err := r.U64(5); present || err != nil || r.Said(5) {
		t.Fatal("an unsaid position is not present and not an error")
	}
}

func TestNestedRecordInRecord(t *testing.T) {
	inner := AppendRecord(nil, AppendU64Field(nil, 1<<40)[4:], nil)
	outer := fl([]byte("v1.2"), inner[4:])
	r, err := ReadRecord(outer, 2)
	if err != nil {
		t.Fatal(err)
	}
	in, err := r.Nested(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v, present, _ := in.U64(0); !present || v != 1<<40 {
		t.Fatalf("inner u64 = %d %v", v, present)
	}
	if empty, err := r.Nested(7, 3); err != nil || empty.Len() != 0 {
		t.Fatal("an unsaid nested position reads as an empty record")
	}
}

func TestSplitList(t *testing.T) {
	list := fl([]byte("a:1"), []byte("b:2"), []byte("c:3"))
	got, err := SplitList(nil, list, 16)
	if err != nil || len(got) != 3 || string(got[2]) != "c:3" {
		t.Fatalf("SplitList = %q, %v", got, err)
	}
	if _, err := SplitList(nil, list, 2); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("3 entries against a cap of 2: %v", err)
	}
	if _, err := SplitList(nil, append(list, 9), 16); !errors.Is(err, ErrMalformedFrame) {
		t.Fatal("a trailing byte in a list must be malformed")
	}
}

func TestBoundCount(t *testing.T) {
	tests := []struct {
		name                    string
		claimed                 uint64
		remaining, minSize, cap int
		wantErr                 bool
	}{
		{"fits", 10, 100, 8, 100, false},
		{"beyond remaining bytes", 1 << 32, 100, 8, 1 << 40, true},
		{"beyond local cap", 200, 1 << 20, 1, 100, true},
		{"exactly remaining/min", 12, 100, 8, 100, false},
		{"one more than remaining/min", 13, 100, 8, 100, true},
	}
	for _, tt := range tests {
		n, err := BoundCount(tt.claimed, tt.remaining, tt.minSize, tt.cap)
		if tt.wantErr != (err != nil) || (err == nil && uint64(n) != tt.claimed) {
			t.Errorf("%s: BoundCount = %d, %v", tt.name, n, err)
		}
	}
}

func TestNestedRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		positions := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 16), 0, 10).Draw(t, "positions")
		known := rapid.IntRange(0, 12).Draw(t, "known")
		field := AppendRecord(nil, positions...)
		outer, err := SplitFields(nil, field, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReadRecord(outer[0], known)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() != min(known, len(positions)) {
			t.Fatalf("Len %d, want %d", r.Len(), min(known, len(positions)))
		}
		for i := 0; i < known; i++ {
			f, present := r.Field(i)
			wantSaid := i < len(positions)
			if r.Said(i) != wantSaid || (wantSaid && !bytes.Equal(f, positions[i])) || present != (wantSaid && len(positions[i]) > 0) {
				t.Fatalf("position %d: said %v present %v %q", i, r.Said(i), present, f)
			}
		}
	})
}
