package ccargs

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// Which commands depend mode takes (pace-wire §3.6.1), what it runs and which depfile it reads.
func TestDependPlan(t *testing.T) {
	const priv = "/tmp/pace-cc-x/dep.d"
	cases := []struct {
		name    string
		line    string
		refusal string
		args    string // "" = the command's own arguments, unchanged
		depfile string
	}{
		{"no depfile: a private one is added", "gcc -O2 -c a.c -o a.o", "",
			"-O2 -c a.c -o a.o -MD -MF " + priv, priv},
		{"-g without a depfile", "gcc -O0 -g -Wall -c a.c -o a.o", "",
			"-O0 -g -Wall -c a.c -o a.o -MD -MF " + priv, priv},
		{"gcc records switches without the -M options", "gcc -g -frecord-gcc-switches -c a.c -o a.o", "",
			"-g -frecord-gcc-switches -c a.c -o a.o -MD -MF " + priv, priv},
		{"-MD: gcc's own name from -o", "gcc -MD -c a.c -o obj/a.o", "", "", "obj/a.d"},
		{"-MMD with -MP", "gcc -MMD -MP -c a.c -o a.o", "", "", "a.d"},
		{"-MD -MF", "gcc -MD -MF deps/a.d -c a.c -o a.o", "", "", "deps/a.d"},
		{"-MD -MT -MF", "gcc -MD -MT $(OBJ)/a.o -MF a.dep -c a.c -o a.o", "", "", "a.dep"},
		{"-MMD -MQ joined -MF", "gcc -MMD -MQx.o -MFa.dep -c a.c -o a.o", "", "", "a.dep"},
		{"-S with a depfile", "gcc -S -MD a.c -o a.s", "", "", "a.d"},
		{"depfile to /dev/null", "gcc -MD -MF /dev/null -c a.c -o a.o", NoDependDiscarded, "", ""},
		{"clang recording the command line", "clang -g -grecord-command-line -c a.c -o a.o", NoDependRecordsCommand, "", ""},
		{"clang's gcc-switches spelling records it too", "clang -frecord-gcc-switches -c a.c -o a.o", NoDependRecordsCommand, "", ""},
		{"clang: the last spelling wins", "clang -frecord-command-line -fno-record-command-line -c a.c -o a.o", "",
			"-frecord-command-line -fno-record-command-line -c a.c -o a.o -MD -MF " + priv, priv},
		{"clang recording its own -MD line changes nothing", "clang -frecord-command-line -MD -c a.c -o a.o", "", "", "a.d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustClassify(t, argv(tc.line), Roots{})
			if got := c.DependRefusal(); got != tc.refusal {
				t.Fatalf("refusal %q, want %q", got, tc.refusal)
			}
			if tc.refusal != "" {
				return
			}
			want := argv(tc.args)
			if tc.args == "" {
				want = c.Args
			}
			if diff := cmp.Diff(want, c.DependArgs(priv)); diff != "" {
				t.Errorf("DependArgs (-want +got):\n%s", diff)
			}
			if got := c.DependFile(priv); got != tc.depfile {
				t.Errorf("DependFile %q, want %q", got, tc.depfile)
			}
		})
	}
}

// The commands depend mode must never see are refused before it: they pass through.
func TestDependNeverSeesPreprocessOnlyOrMG(t *testing.T) {
	for _, line := range []string{"gcc -E a.c -o a.i", "gcc -M -c a.c -o a.o", "gcc -MM -c a.c -o a.o",
		"gcc -MD -MG -c a.c -o a.o", "gcc -MT x -c a.c -o a.o"} {
		if _, err := Classify(Invocation{Compiler: "gcc", Args: argv(line)[1:], Cwd: "/b"}); err == nil {
			t.Errorf("%s: classified cacheable", line)
		}
	}
}

// DependArgs never aliases the command's own argument slice.
func TestDependArgsCopies(t *testing.T) {
	c := mustClassify(t, argv("gcc -MD -c a.c -o a.o"), Roots{})
	got := c.DependArgs("p.d")
	got[0] = "changed"
	if c.Args[0] != "-MD" {
		t.Fatal("DependArgs wrote into the command's arguments")
	}
}

// Without -o (Lua's and Redis's makefiles) gcc names the depfile after the source's basename.
func TestDependFileOfAnImplicitOutput(t *testing.T) {
	c, err := Classify(Invocation{Compiler: "gcc", Args: argv("-MMD -c src/a.c"), Cwd: "/b", ImplicitOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.DependRefusal() != "" || c.DependFile("p.d") != "a.d" {
		t.Fatalf("refusal %q, depfile %q", c.DependRefusal(), c.DependFile("p.d"))
	}
}

// For every cacheable line: depend mode runs the arguments as given, with exactly
// "-MD -MF <private>" after them when the line writes no depfile of its own, and reads back the
// private depfile exactly then; a refusal leaves the command's own depfile untouched.
func TestPropertyDependArgs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		compiler := rapid.SampledFrom([]string{"gcc", "g++", "clang", "clang++-18"}).Draw(t, "compiler")
		args := genArgs().Draw(t, "args")
		c, err := Classify(Invocation{Compiler: compiler, Args: args, Cwd: "/b"})
		if err != nil {
			return
		}
		const priv = "/tmp/p/dep.d"
		got := c.DependArgs(priv)
		if !slices.Equal(got[:len(args)], args) {
			t.Fatalf("DependArgs changed the command: %q → %q", args, got)
		}
		extra := got[len(args):]
		if c.PrivateDepfile() != slices.Equal(extra, []string{"-MD", "-MF", priv}) || (!c.PrivateDepfile() && len(extra) != 0) {
			t.Fatalf("private %v, added %q", c.PrivateDepfile(), extra)
		}
		if (c.DependFile(priv) == priv) != c.PrivateDepfile() {
			t.Fatalf("reads %q back, private %v", c.DependFile(priv), c.PrivateDepfile())
		}
		if r := c.DependRefusal(); r == NoDependRecordsCommand && !c.PrivateDepfile() {
			t.Fatalf("refused %q though the command writes its own depfile", r)
		}
	})
}
