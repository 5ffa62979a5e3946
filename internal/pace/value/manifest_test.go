package value

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestMatchesTheLayoutOfSection2_4(t *testing.T) {
	m := Manifest{ToolchainStamp: []byte("tc"), ObjectKey: []byte("ok"), Entries: []ManifestEntry{
		{Path: "<SRCROOT>/b.h", ContentHash: []byte("2")},
		{Path: "<SRCROOT>/a.h", ContentHash: []byte("1")},
		{Path: "<SRCROOT>/b.h", ContentHash: []byte("2")},
	}}
	got, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	want = append(want, ManifestFormat)
	field := func(s string) { want = binary.BigEndian.AppendUint32(want, uint32(len(s))); want = append(want, s...) }
	field("tc")
	field("ok")
	want = binary.BigEndian.AppendUint32(want, 2)
	field("<SRCROOT>/a.h")
	field("1")
	field("<SRCROOT>/b.h")
	field("2")
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeManifest =\n %q\nwant\n %q", got, want)
	}
	if len(m.Entries) != 3 || m.Entries[0].Path != "<SRCROOT>/b.h" {
		t.Fatal("EncodeManifest modified its argument")
	}
	dec, err := DecodeManifest(got)
	if err != nil {
		t.Fatal(err)
	}
	wantEntries := []ManifestEntry{{Path: "<SRCROOT>/a.h", ContentHash: []byte("1")}, {Path: "<SRCROOT>/b.h", ContentHash: []byte("2")}}
	if diff := cmp.Diff(wantEntries, dec.Entries); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
}

func TestEncodeManifestRefusesConflictingHashes(t *testing.T) {
	_, err := EncodeManifest(Manifest{Entries: []ManifestEntry{{Path: "p", ContentHash: []byte("1")}, {Path: "p", ContentHash: []byte("2")}}})
	if !errors.Is(err, ErrManifestConflict) {
		t.Fatalf("err = %v, want ErrManifestConflict", err)
	}
}

func TestDecodeManifestRefusals(t *testing.T) {
	enc := func(paths ...string) []byte {
		b := []byte{ManifestFormat, 0, 0, 0, 0, 0, 0, 0, 0}
		b = binary.BigEndian.AppendUint32(b, uint32(len(paths)))
		for _, p := range paths {
			b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
			b = append(b, p...)
			b = binary.BigEndian.AppendUint32(b, 0)
		}
		return b
	}
	valid := enc("a", "b")
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformedManifest},
		{"other format", append([]byte{2}, valid[1:]...), ErrManifestFormat},
		{"stamp past the end", []byte{ManifestFormat, 0, 0, 1, 0}, ErrMalformedManifest},
		{"no count", valid[:9], ErrMalformedManifest},
		{"count larger than the bytes left allow", append(append([]byte{}, valid[:9]...), 0xff, 0xff, 0xff, 0xff), ErrMalformedManifest},
		{"unsorted", enc("b", "a"), ErrMalformedManifest},
		{"duplicate", enc("a", "a"), ErrMalformedManifest},
		{"trailing byte", append(append([]byte{}, valid...), 0), ErrMalformedManifest},
		{"truncated", valid[:len(valid)-1], ErrMalformedManifest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeManifest(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := DecodeManifest(valid); err != nil {
		t.Fatalf("the valid control case failed: %v", err)
	}
}

func TestManifestTravelsAsTheObjectOfARegionlessValue(t *testing.T) {
	mb, err := EncodeManifest(Manifest{ToolchainStamp: []byte("t"), ObjectKey: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	vb := mustEncode(t, Value{Object: mb})
	v, err := Decode(vb)
	if err != nil || len(v.Regions) != 0 {
		t.Fatalf("Decode = %+v, %v", v, err)
	}
	m, err := DecodeManifest(v.Object)
	if err != nil || string(m.ObjectKey) != "k" {
		t.Fatalf("DecodeManifest = %+v, %v", m, err)
	}
}
