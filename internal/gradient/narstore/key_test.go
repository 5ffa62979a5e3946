package narstore

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestPartialNamesAreSafe(t *testing.T) {
	cases := map[string]string{
		"0193a5c8-7f00-7000-8000-000000000001/0iz84xy22rpj9d46qj6dz4sbicjazq3d": "0193a5c8-7f00-7000-8000-000000000001_2f0iz84xy22rpj9d46qj6dz4sbicjazq3d.part",
		"../../etc/passwd": "_2e._2f.._2fetc_2fpasswd.part",
		"a_b":              "a_5fb.part",
		"":                 "_sha256_e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.part",
	}
	for key, want := range cases {
		if got := partialName(key); got != want {
			t.Errorf("partialName(%q) = %q, want %q", key, got, want)
		}
	}
	if got := partialName(strings.Repeat("x", 500)); !strings.HasPrefix(got, "_sha256_") || len(got) > 100 {
		t.Errorf("long key named %q", got)
	}
}

// Distinct keys never share a partial, and every name is one plain file name.
func TestPartialNamesAreInjective(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.StringN(0, 200, -1).Draw(t, "a")
		b := rapid.StringN(0, 200, -1).Draw(t, "b")
		na, nb := partialName(a), partialName(b)
		if a != b && na == nb {
			t.Fatalf("%q and %q share %q", a, b, na)
		}
		if strings.ContainsAny(na, "/\x00") || strings.HasPrefix(na, ".") || len(na) > 200 {
			t.Fatalf("unsafe name %q for %q", na, a)
		}
	})
}
