package health

import (
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestSetThenParseRoundTrips(t *testing.T) {
	u := Unavailable{Build: "nix cannot build: the group 'nixbld' specified in 'build-users-group' does not exist", Eval: "store not writable"}
	h := http.Header{}
	u.Set(h)
	if got := h.Values(Header); len(got) != 2 || !strings.HasPrefix(got[0], "eval: ") || !strings.HasPrefix(got[1], "build: ") {
		t.Fatalf("header lines = %q, want eval then build", got)
	}
	back := Parse(h)
	if back.String() != u.String() {
		t.Errorf("Parse(Set(u)) = %q, want %q", back, u)
	}
}

func TestStringNamesCapabilitiesThatShareAReasonTogether(t *testing.T) {
	u := Unavailable{Fetch: "nix does not run", Eval: "nix does not run", Build: "nix does not run"}
	if got, want := u.String(), "fetch, eval, build: nix does not run"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	u = Unavailable{Build: "no build users", Eval: "store not writable", Fetch: "store not writable"}
	if got, want := u.String(), "fetch, eval: store not writable; build: no build users"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"build: no build users"}, "build: no build users"},
		{"unknown capability ignored", []string{"core: x", "cache: y", "build: z"}, "build: z"},
		{"no colon ignored", []string{"build no reason"}, ""},
		{"empty reason ignored", []string{"build:   "}, ""},
		{"control bytes and spaces squeezed", []string{"eval:  a\x00\tb   c "}, "eval: a b c"},
		{"non-ASCII dropped", []string{"fetch: git \u00e9chou\u00e9"}, "fetch: git chou"},
		{"later line wins", []string{"build: a", "build: b"}, "build: b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, l := range tc.lines {
				h.Add(Header, l)
			}
			if got := Parse(h).String(); got != tc.want {
				t.Errorf("Parse(%q) = %q, want %q", tc.lines, got, tc.want)
			}
		})
	}
}

// Whatever a worker sends, what the server keeps is bounded, printable and one line.
func TestParseBoundsAnyInput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := http.Header{}
		for _, l := range rapid.SliceOfN(rapid.String(), 0, 5).Draw(t, "lines") {
			h.Add(Header, rapid.SampledFrom([]string{"build", "eval", "fetch", "x"}).Draw(t, "cap")+":"+l)
		}
		for c, reason := range Parse(h) {
			if len(reason) > MaxReason || reason == "" || strings.TrimSpace(reason) != reason {
				t.Fatalf("%s reason %q: empty, untrimmed or over %d bytes", c, reason, MaxReason)
			}
			for _, r := range reason {
				if r < 0x20 || r > 0x7e {
					t.Fatalf("%s reason %q holds %q", c, reason, r)
				}
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("build: nix cannot build")
	f.Add("eval:\x00\xff")
	f.Fuzz(func(t *testing.T, line string) {
		h := http.Header{Header: {line}}
		for _, reason := range Parse(h) {
			if len(reason) > MaxReason {
				t.Fatalf("reason of %d bytes", len(reason))
			}
		}
	})
}
