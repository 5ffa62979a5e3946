package tubundle

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: Decode never panics, refuses with ErrMalformed, and what it accepts encodes
// back to bytes that decode to the same bundle.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, sample()))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := Decode(Encode(nil, b))
		if err != nil || !bytes.Equal(Encode(nil, again), Encode(nil, b)) {
			t.Fatalf("re-encoding changes the bundle (%v)", err)
		}
	})
}

// FuzzScreen: any region text is judged without panic, the same way twice, and a rejection
// is typed.
func FuzzScreen(f *testing.F) {
	for _, s := range append(append([]string(nil), safeLines...), disguises...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		b := bundleOf(string(text))
		err := Screen(b)
		if err != nil && !errors.Is(err, ErrRejected) {
			t.Fatalf("untyped error %v", err)
		}
		if again := Screen(bundleOf(string(text))); (again == nil) != (err == nil) {
			t.Fatalf("Screen judged %q twice differently", text)
		}
	})
}

// FuzzBuild: any text is bundled or refused without panic, and a bundle encodes and decodes.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(gccText(basicMain)))
	f.Add([]byte(gccText("# 1 \"h.h\" 1\n#define H 2\n# 5 \"m.c\" 2\n# 3 \"gen.y\"\nx\n")))
	f.Fuzz(func(t *testing.T, text []byte) {
		built, err := Build(basic.source(string(text)))
		if err != nil {
			if !errors.Is(err, ErrUnbuildable) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if _, err := Decode(Encode(nil, built.Bundle)); err != nil {
			t.Fatalf("a built bundle does not decode: %v", err)
		}
	})
}
