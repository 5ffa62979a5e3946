package value

import (
	"bytes"
	"encoding/binary"
	"errors"
	"pgregory.net/rapid"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustEncode(t testing.TB, v Value) []byte {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

func TestEncodeMatchesTheLayoutOfSection2_1(t *testing.T) {
	v := Value{Object: []byte("OBJ"), Regions: []Region{
		{Grammar: ShowIncludes, Text: []byte("out")},
		{Grammar: GccDepfile, Text: []byte("a.o: a.c\n")},
	}}
	want := []byte{Generation, 0, 0, 0, 3, 'O', 'B', 'J', 0, 0, 0, 2, 0, 0, 0, 0, 3, 'o', 'u', 't', 2, 0, 0, 0, 9}
	want = append(want, "a.o: a.c\n"...)
	got := mustEncode(t, v)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode = %q, want %q", got, want)
	}
	if n := EncodedLen(v); n != len(want) {
		t.Fatalf("EncodedLen = %d, want %d", n, len(want))
	}
}

func TestDecodeRoundTripsAndAliasesItsInput(t *testing.T) {
	v := Value{Object: []byte("object bytes"), Regions: []Region{
		{Grammar: ShowIncludes, Text: []byte("stdout")},
		{Grammar: GnuDiagnostics, Text: []byte("stderr")},
		{Grammar: GccDepfile, Text: []byte{}},
	}}
	b := mustEncode(t, v)
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if diff := cmp.Diff(v, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	if &got.Object[0] != &b[5] {
		t.Fatal("Decode copied the object; it must return a sub-slice of its input")
	}
	// A caller appending to a decoded field must not overwrite the bytes after it.
	_ = append(got.Object, 'X')
	if b[5+len(v.Object)] != 0 {
		t.Fatal("appending to the decoded object overwrote the region count")
	}
}

func TestDecodeRefusals(t *testing.T) {
	valid := mustEncode(t, Value{Object: []byte("o"), Regions: []Region{{Grammar: GnuDiagnostics, Text: []byte("t")}}})
	hugeCount := []byte{Generation, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrNotAValue},
		{"generation zero", append([]byte{0}, valid[1:]...), ErrNotAValue},
		{"generation above the reserved range", append([]byte{16}, valid[1:]...), ErrNotAValue},
		{"object length past the end", []byte{Generation, 0, 0, 0, 9, 'a'}, ErrNotAValue},
		{"no region count", []byte{Generation, 0, 0, 0, 1, 'a'}, ErrNotAValue},
		{"region count larger than the bytes left allow", hugeCount, ErrNotAValue},
		{"trailing byte", append(append([]byte{}, valid...), 0), ErrNotAValue},
		{"truncated region text", valid[:len(valid)-1], ErrNotAValue},
		{"unknown grammar", append(append([]byte{}, valid[:len(valid)-6]...), 9, 0, 0, 0, 1, 't'), ErrNotAValue},
		{"foreign generation", append([]byte{7}, valid[1:]...), ErrForeignGeneration},
		{"foreign generation with a grammar we do not know", append([]byte{7}, append(append([]byte{}, valid[1:len(valid)-6]...), 9, 0, 0, 0, 1, 't')...), ErrForeignGeneration},
		{"foreign generation, malformed frame", []byte{7, 0, 0, 0, 9}, ErrNotAValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestForeignGenerationNamesBothGenerations(t *testing.T) {
	b := mustEncode(t, Value{Object: []byte("o")})
	b[0] = 7
	_, err := Decode(b)
	var ge *GenerationError
	if !errors.As(err, &ge) || ge.Got != 7 || ge.Want != Generation {
		t.Fatalf("err = %#v, want *GenerationError{Got: 7, Want: %d}", err, Generation)
	}
	if msg := err.Error(); !strings.Contains(msg, "generation 7") || !strings.Contains(msg, "generation 1") {
		t.Fatalf("message %q does not name both generations", msg)
	}
}

func TestDecodeOfAHugeRegionCountAllocatesNothing(t *testing.T) {
	frame := []byte{Generation, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Decode(frame); !errors.Is(err, ErrNotAValue) {
			t.Fatalf("err = %v", err)
		}
	})
	// The error value itself may allocate; a region table of 2^31 entries would be gigabytes.
	if allocs > 4 {
		t.Fatalf("Decode allocated %.0f times for a 9-byte frame", allocs)
	}
}

func TestRegionCountIsCappedLocally(t *testing.T) {
	b := []byte{Generation, 0, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, MaxRegions+1)
	for range MaxRegions + 1 {
		b = append(b, byte(ShowIncludes), 0, 0, 0, 0)
	}
	if _, err := Decode(b); !errors.Is(err, ErrNotAValue) {
		t.Fatalf("Decode of %d regions: err = %v, want ErrNotAValue", MaxRegions+1, err)
	}
	if _, err := Encode(Value{Regions: make([]Region, MaxRegions+1)}); err == nil {
		t.Fatal("Encode accepted more than MaxRegions regions")
	}
}

func TestEncodeRefusesAnUnknownGrammar(t *testing.T) {
	_, err := Encode(Value{Regions: []Region{{Grammar: 4}}})
	var ug *UnknownGrammarError
	if !errors.As(err, &ug) || ug.Grammar != 4 {
		t.Fatalf("err = %v, want *UnknownGrammarError{4}", err)
	}
}

func TestHasCurrentGeneration(t *testing.T) {
	ours := mustEncode(t, Value{Object: []byte("o")})
	foreign := append([]byte{3}, ours[1:]...)
	if !HasCurrentGeneration(ours) || HasCurrentGeneration(foreign) || HasCurrentGeneration(nil) {
		t.Fatal("HasCurrentGeneration does not tell our generation from others")
	}
}

func TestDepfileDependencies(t *testing.T) {
	text := "out/a.o: src/a.c /usr/include/stdio.h \\\n  inc/with\\ space.h inc/dollar$$.h src/a.c\ninc/with\\ space.h:\n"
	got := DepfileDependencies([]byte(text))
	want := []string{"src/a.c", "/usr/include/stdio.h", "inc/with space.h", "inc/dollar$.h"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if DepfileDependencies([]byte("# just a comment\n")) != nil {
		t.Fatal("dependencies from a comment")
	}
}

func TestStreamingDecodeAgreesWithDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue().Draw(t, "v")
		b, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		n, err := ParseHeader(b[:HeaderLen])
		if err != nil || int(n) != len(v.Object) {
			t.Fatalf("header: %d %v", n, err)
		}
		regions, err := DecodeRegions(b[HeaderLen+int(n):])
		whole, werr := Decode(b)
		if err != nil || werr != nil || len(regions) != len(whole.Regions) {
			t.Fatalf("regions %v %v", err, werr)
		}
		for i := range regions {
			if regions[i].Grammar != whole.Regions[i].Grammar || string(regions[i].Text) != string(whole.Regions[i].Text) {
				t.Fatalf("region %d differs", i)
			}
		}
	})
	foreign := []byte{Generation + 1, 0, 0, 0, 0}
	if _, err := ParseHeader(foreign); !errors.Is(err, ErrForeignGeneration) {
		t.Fatalf("foreign header: %v", err)
	}
}

// A listing over several sources prints one rule each; RulesDependencies reads every rule,
// DepfileDependencies only the first.
func TestRulesDependencies(t *testing.T) {
	rules := []byte("a.o: a.c inc/util.h \\\n /usr/include/stdc-predef.h\nb.o: b.c inc/util.h inc/my\\ file.h\ninc/util.h:\n")
	if got, want := RulesDependencies(rules), []string{"a.c", "inc/util.h", "/usr/include/stdc-predef.h", "b.c", "inc/my file.h"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RulesDependencies = %q, want %q", got, want)
	}
	if got, want := DepfileDependencies(rules), []string{"a.c", "inc/util.h", "/usr/include/stdc-predef.h"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("DepfileDependencies = %q, want %q", got, want)
	}
}
