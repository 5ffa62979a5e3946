package nixexec

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWildcards(t *testing.T) {
	lit := func(exclude bool, segs ...string) Pattern {
		p := Pattern{Exclude: exclude, Segments: segs, Literal: make([]bool, len(segs))}
		return p
	}
	quoted := lit(false, "packages", "x.y", "*")
	quoted.Literal = []bool{false, false, true}
	cases := []struct {
		in   []string
		want []Pattern
	}{
		{[]string{"packages.*"}, []Pattern{lit(false, "packages", "*")}},
		{[]string{"packages.*.*, checks.#.#"}, []Pattern{lit(false, "packages", "*", "*"), lit(false, "checks", "#", "#")}},
		{[]string{"packages.*", "!packages.x86_64-linux.slow"}, []Pattern{lit(false, "packages", "*"), lit(true, "packages", "x86_64-linux", "slow")}},
		{[]string{` packages."x.y"."*" ,, `}, []Pattern{quoted}},
		{[]string{"a", " ! b "}, []Pattern{lit(false, "a"), lit(true, "b")}},
	}
	for _, c := range cases {
		got, err := ParseWildcards(c.in)
		if err != nil {
			t.Errorf("ParseWildcards(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseWildcards(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}

func TestParseWildcardsRefusesBadPatterns(t *testing.T) {
	for _, in := range [][]string{nil, {""}, {"!a"}, {"a..b"}, {`a."b`}, {"a.\x01"}, {`a.""`}, {" , "}} {
		if _, err := ParseWildcards(in); !errors.Is(err, ErrBadWildcard) {
			t.Errorf("ParseWildcards(%q) err = %v, want ErrBadWildcard", in, err)
		}
	}
}

func TestPatternStringRoundTrips(t *testing.T) {
	for _, in := range []string{"packages.*", "!checks.#.x", `a."b.c"."*"`, `legacyPackages.x86_64-linux."hello-2.1"`} {
		ps, err := ParseWildcards([]string{in, "x"})
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseWildcards([]string{ps[0].String(), "x"})
		if err != nil || !cmp.Equal(ps, again) {
			t.Errorf("%q → %q → %v (%v)", in, ps[0].String(), again, err)
		}
	}
}

func TestAttrPathQuotesWhatNixQuotes(t *testing.T) {
	got := AttrPath([]string{"packages", "x86_64-linux", "hello.world", "1abc", "a'b"})
	if want := `packages.x86_64-linux."hello.world"."1abc".a'b`; got != want {
		t.Fatalf("AttrPath = %s, want %s", got, want)
	}
}

func FuzzParseWildcards(f *testing.F) {
	f.Add("packages.*.*, !checks.#.x")
	f.Add(`a."b.c".*`)
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseWildcards([]string{s})
		if err != nil {
			return
		}
		for _, p := range ps {
			again, err := ParseWildcards([]string{p.String(), "x"})
			if err != nil || !cmp.Equal(again[0], p) {
				t.Fatalf("%q: pattern %q does not re-parse to itself: %v %v", s, p.String(), again, err)
			}
		}
	})
}
