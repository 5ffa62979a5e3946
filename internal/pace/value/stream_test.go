package value

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// readStream runs ReadStream over all of b, the way a FETCH reply hands it over.
func readStream(b []byte, buf []byte) (object []byte, regions []Region, err error) {
	var out bytes.Buffer
	regions, err = ReadStream(bytes.NewReader(b), uint32(len(b)), &out, buf)
	return out.Bytes(), regions, err
}

// ReadStream reads back exactly what Encode wrote, whatever the copy buffer.
func TestReadStreamRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue().Draw(t, "value")
		b, err := Encode(v)
		if err != nil {
			t.Skip(err)
		}
		buf := make([]byte, rapid.IntRange(1, 64).Draw(t, "buf"))
		obj, regions, err := readStream(b, buf)
		if err != nil {
			t.Fatalf("ReadStream of an encoded value: %v", err)
		}
		want, _ := Decode(b)
		if !bytes.Equal(obj, want.Object) || !reflect.DeepEqual(nonNil(regions), nonNil(want.Regions)) {
			t.Fatalf("ReadStream = %q %v, want %q %v", obj, regions, want.Object, want.Regions)
		}
	})
}

func nonNil(rs []Region) []Region {
	out := make([]Region, len(rs))
	for i, r := range rs {
		out[i] = Region{Grammar: r.Grammar, Text: append([]byte{}, r.Text...)}
	}
	return out
}

// Short, lying or foreign values are refused with an error, never a panic or a short object.
func TestReadStreamRefuses(t *testing.T) {
	good, err := Encode(Value{Object: []byte("object"), Regions: []Region{{Grammar: GnuDiagnostics, Text: []byte("w\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	foreign := append([]byte{Generation + 1}, good[1:]...)
	cases := []struct {
		name string
		body []byte
		n    uint32
		want error
	}{
		{"empty", nil, 0, io.EOF},
		{"header only", good[:HeaderLen], uint32(len(good)), io.ErrUnexpectedEOF},
		{"object cut short", good[:HeaderLen+3], uint32(len(good)), io.ErrUnexpectedEOF},
		{"object longer than the value", good, HeaderLen + 4, ErrNotAValue},
		{"regions cut short", good[:len(good)-1], uint32(len(good)), io.ErrUnexpectedEOF},
		{"foreign generation", foreign, uint32(len(foreign)), ErrForeignGeneration},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadStream(bytes.NewReader(tc.body), tc.n, io.Discard, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadStream = %v, want %v", err, tc.want)
			}
		})
	}
}

// On any bytes, ReadStream agrees with Decode: it succeeds exactly when Decode does, with the
// same object and regions.
func FuzzReadStream(f *testing.F) {
	good, _ := Encode(Value{Object: []byte("o"), Regions: []Region{{Grammar: GccDepfile, Text: []byte("a.o: a.c\n")}}})
	f.Add(good)
	f.Add([]byte{Generation, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, regions, err := readStream(b, make([]byte, 7))
		v, derr := Decode(b)
		if (err == nil) != (derr == nil) {
			t.Fatalf("ReadStream error %v, Decode error %v", err, derr)
		}
		if err == nil && (!bytes.Equal(obj, v.Object) || !reflect.DeepEqual(nonNil(regions), nonNil(v.Regions))) {
			t.Fatalf("ReadStream = %q %v, Decode = %q %v", obj, regions, v.Object, v.Regions)
		}
	})
}
