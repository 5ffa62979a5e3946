package ccargs

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var relativizeCases = map[string]string{
	"/s":               SrcRootToken,
	"/s/a.c":           SrcRootToken + "/a.c",
	"/s/build":         BuildTreeToken,
	"/s/build/gen/x.h": BuildTreeToken + "/gen/x.h",
	"/s/buildx/y":      SrcRootToken + "/buildx/y",
	"/s2/a.c":          "/s2/a.c",
	"/":                "/",
	"rel/a.c":          "rel/a.c",
	"":                 "",
	"/s//double":       SrcRootToken + "//double",
}

func TestRelativize(t *testing.T) {
	r := Roots{Source: "/s", Build: "/s/build/"}
	for in, want := range relativizeCases {
		if got := r.Relativize(in); got != want {
			t.Errorf("Relativize(%q) = %q, want %q", in, got, want)
		}
	}
	// An in-source build: the build tree wins the tie, as internal/pace/value decides.
	same := Roots{Source: "/w", Build: "/w"}
	if got := same.Relativize("/w/a.c"); got != BuildTreeToken+"/a.c" {
		t.Errorf("tie: %q", got)
	}
	root := Roots{Source: "/"}
	if got := root.Relativize("/usr/x"); got != SrcRootToken+"/usr/x" {
		t.Errorf("bare root: %q", got)
	}
	if got := root.Localize(SrcRootToken + "/usr/x"); got != "/usr/x" {
		t.Errorf("bare root localize: %q", got)
	}
	if (Roots{Source: "relative", Build: ""}).Relativize("relative/x") != "relative/x" {
		t.Error("relative roots must be ignored")
	}
	if !(Roots{Source: "rel"}).Empty() || (Roots{Build: "/b"}).Empty() {
		t.Error("Empty is wrong")
	}
	if got := (Roots{Source: "/s"}).Localize(BuildTreeToken + "/x"); got != BuildTreeToken+"/x" {
		t.Errorf("a token whose root is unset stays: %q", got)
	}
	if got := (Roots{Source: "/s"}).Localize(SrcRootToken + "x"); got != SrcRootToken+"x" {
		t.Errorf("a token without a boundary stays: %q", got)
	}
}

func genRoot(t *rapid.T, label string) string {
	segs := rapid.SliceOfN(rapid.StringMatching(`[a-z0-9._-]{1,6}`), 0, 3).Draw(t, label)
	return "/" + strings.Join(segs, "/")
}

// Relativize then Localize returns the path, on the producer's roots; and a path relativized
// by one checkout localizes into another checkout at the same tail.
func TestPropertyRelativizeLocalizeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		producer := Roots{Source: genRoot(t, "src"), Build: genRoot(t, "build")}
		consumer := Roots{Source: genRoot(t, "csrc"), Build: genRoot(t, "cbuild")}
		tail := rapid.StringMatching(`([a-z.]{1,4}/){0,3}[a-z.]{0,4}`).Draw(t, "tail")
		base := rapid.SampledFrom([]string{producer.Source, producer.Build, "/elsewhere", "rel"}).Draw(t, "base")
		p := strings.TrimSuffix(base, "/") + "/" + tail
		rel := producer.Relativize(p)
		if got := producer.Localize(rel); got != p {
			t.Fatalf("Localize(Relativize(%q)) = %q via %q", p, got, rel)
		}
		if rel == p {
			return // not under a root: the consumer sees it verbatim
		}
		token, rest, _ := strings.Cut(rel, "/")
		if !strings.HasPrefix(rel, token) || (token != SrcRootToken && token != BuildTreeToken) {
			t.Fatalf("Relativize(%q) = %q, not a token", p, rel)
		}
		croot := cleanRoot(consumer.Source)
		if token == BuildTreeToken {
			croot = cleanRoot(consumer.Build)
		}
		want := strings.TrimSuffix(croot, "/") + "/" + rest
		if rel == token {
			want = croot
		}
		if got := consumer.Localize(rel); got != want {
			t.Fatalf("consumer Localize(%q) = %q, want %q", rel, got, want)
		}
	})
}
