package ccargs

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// Dependency listings pace-cc caches (pace-wire §3.6.2), with where their rules go.
func TestClassifyListingAccepts(t *testing.T) {
	cases := []struct {
		line    string
		kind    Listed
		sources []string
		dest    string
	}{
		{"gcc -MM a.c", ListUser, []string{"a.c"}, ""},
		{"gcc -M a.c", ListAll, []string{"a.c"}, ""},
		{"gcc -O2 -Iinc -MM a.c b.c c.c", ListUser, []string{"a.c", "b.c", "c.c"}, ""},
		{"gcc -MM -MT obj/a.o -MP a.c -MF a.d", ListUser, []string{"a.c"}, "a.d"},
		{"gcc -M a.c -o a.d", ListAll, []string{"a.c"}, "a.d"},
		{"gcc -MM a.c b.c -o -", ListUser, []string{"a.c", "b.c"}, ""},
		{"gcc -MM a.c b.c -MF-", ListUser, []string{"a.c", "b.c"}, ""},
		{"g++ --user-dependencies a.cc", ListUser, []string{"a.cc"}, ""},
		{"gcc -MM -M a.c", ListAll, []string{"a.c"}, ""}, // the last one wins, as in gcc
	}
	for _, tc := range cases {
		l, err := ClassifyListing(Invocation{Compiler: argv(tc.line)[0], Args: argv(tc.line)[1:], Cwd: "/b"})
		if err != nil {
			t.Errorf("ClassifyListing(%q): %v", tc.line, err)
			continue
		}
		if l.Kind != tc.kind || !reflect.DeepEqual(l.Sources, tc.sources) || l.Dest != tc.dest {
			t.Errorf("ClassifyListing(%q) = kind %d sources %q dest %q", tc.line, l.Kind, l.Sources, l.Dest)
		}
		if _, err := Classify(Invocation{Compiler: argv(tc.line)[0], Args: argv(tc.line)[1:], Cwd: "/b"}); ReasonOf(err) != ReasonPreprocessOnly {
			t.Errorf("Classify(%q) = %v: a listing is not a compile", tc.line, err)
		}
	}
}

// Listings that run uncached, each with its reason.
var listingRefusals = []struct {
	line   []string
	reason Reason
}{
	{argv("gcc -c a.c -o a.o"), ReasonNotListing},
	{argv("gcc -MM -c a.c -o a.o"), ReasonListingShape},
	{argv("gcc -M -S a.c"), ReasonListingShape},
	{argv("gcc -MM -MD a.c"), ReasonListingShape},
	{argv("gcc -MM -MF a.d a.c -o b.d"), ReasonListingShape},
	{argv("gcc -MM a.c b.c -MF all.d"), ReasonListingShape},
	{argv("gcc -MM a.c b.c -o all.d"), ReasonListingShape},
	{argv("gcc -MM"), ReasonNoSource},
	{argv("gcc -MM a.c -o x -o y"), ReasonMultipleOutputs},
	{argv("gcc -MM -MG a.c"), ReasonDepMissingHeaders},
	{argv("gcc -MM -H a.c"), ReasonHeaderTrace},
	{argv("gcc -E -MM a.c"), ReasonPreprocessOnly},
	{argv("gcc -MM -"), ReasonStdinSource},
	{argv("gcc -MM a.o"), ReasonNonSourceInput},
	{argv("gcc -MM -include config.h a.c"), ReasonListingShape},
	{argv("gcc -MM --imacros=defs.h a.c"), ReasonListingShape},
}

func TestClassifyListingRefuses(t *testing.T) {
	for _, tc := range listingRefusals {
		_, err := ClassifyListing(Invocation{Compiler: tc.line[0], Args: tc.line[1:], Cwd: "/b"})
		if got := ReasonOf(err); got != tc.reason {
			t.Errorf("ClassifyListing(%q) = %v, want passthrough %q", tc.line, err, tc.reason)
		}
	}
}

// TraceArgs keeps every argument as given, in order, and only adds -H: the rules the compiler
// prints must be the user's own.
func TestTraceArgsOnlyAddH(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := []string{"-MM", "-M", "-O2", "-Iinc", "-DX=1", "-MT", "t", "-MP", "a.c", "b.c", "-std=c11"}
		args := rapid.SliceOfN(rapid.SampledFrom(pool), 1, 12).Draw(t, "args")
		l, err := ClassifyListing(Invocation{Compiler: "gcc", Args: args, Cwd: "/b"})
		if err != nil {
			return
		}
		tr := l.TraceArgs()
		if !reflect.DeepEqual(tr[:len(args)], args) || len(tr) != len(args)+1 || tr[len(args)] != "-H" {
			t.Fatalf("TraceArgs(%q) = %q", args, tr)
		}
	})
}
