package tubundle

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"github.com/google/go-cmp/cmp"
)

func sample() *Bundle {
	return &Bundle{
		Locale: LocaleCUTF8,
		Source: File{Base: "m.c", Debug: "src/m.c", Macro: "./src/m.c"},
		Files: []File{
			{Base: "m.c", Debug: "src/m.c", Macro: "src/m.c", Content: []byte("int m;\n"), HasContent: true},
			{Base: "gen.y", Debug: "gen.y", Macro: "gen.y"},
		},
		Regions: []Region{{Text: []byte("#line 1 \"pace-f/000000/m.c\"\nint m;\n")}, {System: true, Text: []byte("")}},
		Forced:  []int{1},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	enc := Encode(nil, sample())
	if len(enc) != encodedSize(sample()) {
		t.Errorf("encoded %d bytes, sized %d", len(enc), encodedSize(sample()))
	}
	if !IsBundle(enc) || IsBundle([]byte("# 0 \"m.c\"\n")) {
		t.Fatal("IsBundle cannot tell a bundle from preprocessed text")
	}
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample(), got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := Encode(nil, sample())
	top := func(edit func(*Bundle)) []byte {
		b := sample()
		edit(b)
		return Encode(nil, b)
	}
	hugeCount := append([]byte(Magic), wire.AppendStringField(nil, "C")...)
	hugeCount = wire.AppendField(hugeCount, wire.AppendStringField(wire.AppendStringField(wire.AppendStringField(nil, "m.c"), ""), ""))
	files := make([]byte, 0, (MaxFiles+1)*4)
	for range MaxFiles + 1 {
		files = binary.BigEndian.AppendUint32(files, 0)
	}
	hugeCount = wire.AppendField(hugeCount, files)
	cases := map[string][]byte{
		"no magic":              good[1:],
		"truncated":             good[:len(good)-1],
		"trailing bytes":        append(append([]byte(nil), good...), 0),
		"another locale":        top(func(b *Bundle) { b.Locale = "de_DE.UTF-8" }),
		"a base with a slash":   top(func(b *Bundle) { b.Files[1].Base = "a/b" }),
		"a base of ..":          top(func(b *Bundle) { b.Files[1].Base = ".." }),
		"a name with a newline": top(func(b *Bundle) { b.Files[0].Debug = "a\nb" }),
		"content of an unread":  top(func(b *Bundle) { b.Files[1].Content = []byte("x") }),
		"no regions":            top(func(b *Bundle) { b.Regions, b.Forced = nil, nil }),
		"a system main region":  top(func(b *Bundle) { b.Regions[0].System = true }),
		"the main one forced":   top(func(b *Bundle) { b.Forced = []int{0} }),
		"a forced past the end": top(func(b *Bundle) { b.Forced = []int{2} }),
		"more files than bound": hugeCount,
	}
	for name, src := range cases {
		if b, err := Decode(src); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, %v; want ErrMalformed", name, b, err)
		}
	}
}
