package value

import (
	"bytes"
	"errors"
	"testing"
)

// Seed corpora live in testdata/fuzz/<target>/ and run as unit tests under plain `go test`.

func FuzzDecodeValue(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		switch {
		case err == nil:
			again, encErr := Encode(v)
			if encErr != nil || !bytes.Equal(again, b) {
				t.Fatalf("Encode(Decode(b)) = %q, %v; want b", again, encErr)
			}
			// Canonicalizing what decodes must never fail or panic.
			if _, err := CanonicalizeEncoded(b, Roots{SrcRoot: "/s", BuildTree: `C:\b`}); err != nil {
				t.Fatalf("CanonicalizeEncoded of a valid value: %v", err)
			}
		case errors.Is(err, ErrForeignGeneration):
			if b[0] == Generation || b[0] < MinGeneration || b[0] > MaxGeneration {
				t.Fatalf("generation %d reported foreign", b[0])
			}
		case !errors.Is(err, ErrNotAValue):
			t.Fatalf("Decode error %v is neither ErrNotAValue nor ErrForeignGeneration", err)
		}
	})
}

func FuzzCanonicalizeDepfile(f *testing.F) {
	f.Fuzz(func(t *testing.T, text []byte, srcRoot, buildTree string) {
		roots := Roots{SrcRoot: srcRoot, BuildTree: buildTree}
		once := CanonicalizeText(GccDepfile, text, roots)
		if want, got := depfileShape(text), depfileShape(once); want != got {
			t.Fatalf("rule structure changed: %s -> %s\n in:  %q\n out: %q", want, got, text, once)
		}
		if !rootsStartLikeTokens(roots) {
			if twice := CanonicalizeText(GccDepfile, once, roots); !bytes.Equal(once, twice) {
				t.Fatalf("not idempotent\n once:  %q\n twice: %q", once, twice)
			}
		}
		if out := CanonicalizeText(GccDepfile, text, Roots{}); !bytes.Equal(out, text) {
			t.Fatal("empty roots changed the text")
		}
		LocalizeText(GccDepfile, once, roots)
	})
}

// rootsStartLikeTokens excludes roots such as "<" that canonical text itself lies under, for
// which idempotence is not promised (real roots are absolute paths).
func rootsStartLikeTokens(r Roots) bool {
	return (r.SrcRoot != "" && r.SrcRoot[0] == '<') || (r.BuildTree != "" && r.BuildTree[0] == '<')
}

func FuzzDecodeManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedManifest) && !errors.Is(err, ErrManifestFormat) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		again, err := EncodeManifest(m)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("EncodeManifest(DecodeManifest(b)) = %q, %v; want b", again, err)
		}
	})
}
