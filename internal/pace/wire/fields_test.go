package wire

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// fl builds a field list from the given fields.
func fl(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = AppendField(b, f)
	}
	return b
}

func TestSplitFields(t *testing.T) {
	two := fl([]byte("key"), []byte("v"))
	tests := []struct {
		name    string
		payload []byte
		n       int
		want    [][]byte
		wantErr bool
	}{
		{"exact", two, 2, [][]byte{[]byte("key"), []byte("v")}, false},
		{"empty fields", fl(nil, nil, nil), 3, [][]byte{{}, {}, {}}, false},
		{"zero arity, empty payload", nil, 0, [][]byte{}, false},
		{"zero arity, one byte", []byte{0}, 0, nil, true},
		{"too few", two, 3, nil, true},
		{"too many", two, 1, nil, true},
		{"trailing byte", append(fl([]byte("key")), 0), 1, nil, true},
		{"truncated prefix", []byte{0, 0, 0}, 1, nil, true},
		{"length overruns", []byte{0, 0, 0, 5, 'a', 'b'}, 1, nil, true},
		{"length 4 GiB", []byte{0xFF, 0xFF, 0xFF, 0xFF, 'a'}, 1, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitFields(nil, tt.payload, tt.n)
			if tt.wantErr {
				if !errors.Is(err, ErrMalformedFrame) || len(got) != 0 {
					t.Fatalf("got %q, %v; want ErrMalformedFrame", got, err)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			for i := range got {
				if !bytes.Equal(got[i], tt.want[i]) {
					t.Fatalf("field %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSplitFieldsReusesDst(t *testing.T) {
	payload := fl([]byte("a"), []byte("b"))
	dst := make([][]byte, 0, 10)
	allocs := testing.AllocsPerRun(100, func() {
		dst, _ = SplitFields(dst, payload, 2)
	})
	if allocs != 0 {
		t.Fatalf("SplitFields with capacity allocated %.0f times", allocs)
	}
	// A field cannot be appended into the next one: capacity is clipped.
	if cap(dst[0]) != 1 {
		t.Fatalf("field capacity %d leaks into the rest of the payload", cap(dst[0]))
	}
}

func TestIntegerWidths(t *testing.T) {
	tests := []struct {
		name  string
		field []byte
		read  func([]byte) (uint64, error)
		want  uint64
		ok    bool
	}{
		{"u8", []byte{7}, func(f []byte) (uint64, error) { v, err := U8(f); return uint64(v), err }, 7, true},
		{"u8 of 2", []byte{0, 7}, func(f []byte) (uint64, error) { v, err := U8(f); return uint64(v), err }, 0, false},
		{"u8 empty", nil, func(f []byte) (uint64, error) { v, err := U8(f); return uint64(v), err }, 0, false},
		{"u32", []byte{0, 0, 1, 0}, func(f []byte) (uint64, error) { v, err := U32(f); return uint64(v), err }, 256, true},
		{"u32 of 3", []byte{0, 1, 0}, func(f []byte) (uint64, error) { v, err := U32(f); return uint64(v), err }, 0, false},
		{"u32 of 8", make([]byte, 8), func(f []byte) (uint64, error) { v, err := U32(f); return uint64(v), err }, 0, false},
		{"u64", []byte{1, 0, 0, 0, 0, 0, 0, 2}, U64, 1<<56 | 2, true},
		{"u64 of 4", []byte{0, 0, 0, 1}, U64, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.read(tt.field)
			if tt.ok != (err == nil) || (tt.ok && got != tt.want) {
				t.Fatalf("got %d, %v; want %d ok=%v", got, err, tt.want, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("width error %v is not ErrMalformedFrame", err)
			}
		})
	}
}

func TestAbsentIsNotZero(t *testing.T) {
	zero := AppendU32Field(nil, 0)
	absent := AppendOptU32Field(nil, 0, false)
	fields, err := SplitFields(nil, append(zero, absent...), 2)
	if err != nil {
		t.Fatal(err)
	}
	v, present, err := OptU32(fields[0])
	if err != nil || !present || v != 0 {
		t.Fatalf("zero: %d %v %v; want a present 0", v, present, err)
	}
	if _, present, err = OptU32(fields[1]); err != nil || present {
		t.Fatalf("absent: present=%v err=%v", present, err)
	}
	if _, _, err := OptU32([]byte{1, 2}); !errors.Is(err, ErrMalformedFrame) {
		t.Fatal("a 2-byte optional u32 must be malformed, not absent")
	}
	if _, present, err := OptU64(AppendOptU64Field(nil, 0, true)[4:]); !present || err != nil {
		t.Fatal("a present u64 zero must read present")
	}
	if _, present, err := OptU8(nil); present || err != nil {
		t.Fatal("an empty u8 is absent")
	}
}

func TestExactAndText(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	if _, err := Exact(key, 32); err != nil {
		t.Fatal(err)
	}
	if _, err := Exact(key[:31], 32); !errors.Is(err, ErrMalformedFrame) {
		t.Fatal("31 bytes for a 32-byte key must be malformed")
	}
	if _, present, err := OptExact(nil, 32); present || err != nil {
		t.Fatal("empty optional key is absent")
	}
	if _, _, err := OptExact(key[:5], 32); err == nil {
		t.Fatal("5-byte optional key must be refused")
	}
	if s, err := Text([]byte("gcc-14 ✓"), 64); err != nil || s != "gcc-14 ✓" {
		t.Fatalf("Text = %q, %v", s, err)
	}
	if _, err := Text([]byte{0xFF, 'a'}, 64); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8 must be refused, got %v", err)
	}
	if _, err := Text([]byte("abcdef"), 5); !errors.Is(err, ErrFieldTooLong) {
		t.Fatalf("over-long text must be refused, not truncated: %v", err)
	}
	if _, err := Bounded([]byte("abc"), 2); !errors.Is(err, ErrFieldTooLong) {
		t.Fatal("Bounded must refuse")
	}
}

func TestFieldListRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fields := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 64), 0, 12).Draw(t, "fields")
		payload := fl(fields...)
		got, err := SplitFields(nil, payload, len(fields))
		if err != nil {
			t.Fatal(err)
		}
		for i := range fields {
			if !bytes.Equal(got[i], fields[i]) {
				t.Fatalf("field %d: %q != %q", i, got[i], fields[i])
			}
		}
		if n, err := CountFields(payload); err != nil || n != len(fields) {
			t.Fatalf("CountFields = %d, %v", n, err)
		}
		// Any other arity is refused.
		other := rapid.IntRange(0, 13).Filter(func(n int) bool { return n != len(fields) }).Draw(t, "other")
		if _, err := SplitFields(nil, payload, other); !errors.Is(err, ErrMalformedFrame) {
			t.Fatalf("arity %d of a %d-field payload accepted", other, len(fields))
		}
	})
}

func TestIntegerFieldRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := rapid.Uint8().Draw(t, "a"), rapid.Uint32().Draw(t, "b"), rapid.Uint64().Draw(t, "c")
		payload := AppendU64Field(AppendU32Field(AppendU8Field(nil, a), b), c)
		f, err := SplitFields(nil, payload, 3)
		if err != nil {
			t.Fatal(err)
		}
		ga, _ := U8(f[0])
		gb, _ := U32(f[1])
		gc, _ := U64(f[2])
		if ga != a || gb != b || gc != c {
			t.Fatalf("got %d %d %d, want %d %d %d", ga, gb, gc, a, b, c)
		}
	})
}
