package ccargs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"pgregory.net/rapid"
)

// vocabulary mixes real options (with and without values), values, sources and noise, so that
// random command lines hit both the cacheable and the passthrough paths.
var vocabulary = []string{
	"-c", "-S", "-E", "-O2", "-Wall", "-g", "-g3", "-g0", "-ggdb", "-MD", "-MMD", "-MP", "-MF",
	"-MT", "-MQ", "-MG", "-M", "-o", "-x", "c", "c++", "none", "assembler", "-I", "-I/s/inc",
	"-isystem", "-include", "--sysroot", "--sysroot=/s/sr", "-D", "-DX=1", "-UX", "-fPIC",
	"-fdebug-prefix-map=/s=.", "-fmacro-prefix-map=/b=.", "-std=c99", "--std", "-pipe", "-P",
	"-Xclang", "-fcolor-diagnostics", "-arch", "x86_64", "-target", "--param", "x=1", "-L",
	"-Wl,-O1", "-Wa,--noexecstack", "-fplugin=x.so", "-B", "-save-temps", "-march=native",
	"-fdiagnostics-color=always", "a.c", "/s/b.cc", "x.S", "h.h", "z.i", "lib.a", "m.cppm",
	"-", "", "/s/inc", "/b/gen", "out.o", "/b/out.o", "dep.d", "-dA", "-d", "--", "-fsyntax-only",
}

// safeVocabulary never makes a compile-shaped line pass through on its own.
var safeVocabulary = []string{
	"-O2", "-Wall", "-g", "-g3", "-ggdb", "-fPIC", "-I/s/inc", "-DX=1", "-UX", "-std=c99", "-pipe",
	"-P", "-fdebug-prefix-map=/s=.", "-fmacro-prefix-map=/b=.", "--sysroot=/s/sr", "-Wl,-O1",
	"-fdiagnostics-color=always", "-dA", "-MD", "-MMD", "-MP", "-fno-rtti", "-march=x86-64",
}

func genArgs() *rapid.Generator[[]string] {
	return rapid.Custom(func(t *rapid.T) []string {
		compileShaped := rapid.Bool().Draw(t, "compile-shaped")
		vocab := vocabulary
		if compileShaped && rapid.Bool().Draw(t, "safe") {
			vocab = safeVocabulary
		}
		args := rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 14).Draw(t, "noise")
		if compileShaped {
			src := rapid.SampledFrom([]string{"a.c", "/s/b.cc", "x.S", "g.m"}).Draw(t, "src")
			for _, unit := range [][]string{{"-c"}, {src}, {"-o", "out.o"}} {
				at := rapid.IntRange(0, len(args)).Draw(t, "at")
				args = slices.Insert(args, at, unit...)
			}
		}
		if rapid.Bool().Draw(t, "random-arg") {
			args = append(args, rapid.String().Draw(t, "random"))
		}
		return args
	})
}

// Classification never panics, and returns exactly one of a Compile or a PassthroughError.
// For a Compile: the probes keep the source, keep every argument they do not have a reason
// to drop, and KeyArgs with no roots is a subsequence of the arguments.
func TestPropertyClassify(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		compiler := rapid.SampledFrom([]string{"gcc", "g++", "clang", "clang++-18", "cl", "ld"}).Draw(t, "compiler")
		args := genArgs().Draw(t, "args")
		c, err := Classify(Invocation{Compiler: compiler, Args: args, Cwd: "/b", ImplicitOutput: rapid.Bool().Draw(t, "implicit")})
		if (c == nil) == (err == nil) {
			t.Fatalf("Classify returned %v and %v", c, err)
		}
		if err != nil {
			if !errors.Is(err, ErrPassthrough) || ReasonOf(err) == "" {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		checkCompile(t, c)
	})
}

func checkCompile(t *rapid.T, c *Compile) {
	for _, probe := range [][]string{c.KeyProbeArgs("/tmp/scratch.d"), c.DispatchPreprocessArgs()} {
		if !slices.Contains(probe, c.Source) {
			t.Fatalf("probe %q lost the source %q", probe, c.Source)
		}
		if !keepsLineMarkers(probe, c.Driver.Flavor) {
			t.Fatalf("probe %q must preprocess with line markers", probe)
		}
	}
	if !isSubsequence(c.KeyArgs(), c.Args) {
		t.Fatalf("KeyArgs %q is not a subsequence of %q without roots", c.KeyArgs(), c.Args)
	}
	remote, err := c.RemoteCompileArgs("x86_64-pc-linux-gnu")
	if err != nil {
		if !errors.Is(err, ErrNotDispatchable) {
			t.Fatalf("untyped dispatch refusal %v", err)
		}
		return
	}
	checkRemote(t, c, remote)
}

// checkRemote: what would be sent never names the source or a path, always ends with the
// preprocessed-language spelling, and passes the client's screen.
func checkRemote(t *rapid.T, c *Compile, remote []string) {
	n := len(remote)
	if n < 2 || remote[n-2] != "-x" || remote[n-1] != c.Language.PreprocessedSpelling() {
		t.Fatalf("remote args %q do not end with -x <preprocessed>", remote)
	}
	body := remote[:n-2]
	if c.Driver.Flavor.IsClang() {
		if body[0] != "--target=x86_64-pc-linux-gnu" {
			t.Fatalf("clang remote args %q do not start with --target", remote)
		}
		body = body[1:]
	}
	if err := argvet.Prescreen(c.Driver.Flavor, body); err != nil {
		t.Fatalf("remote args %q fail the screen: %v", remote, err)
	}
	for _, a := range remote {
		if a == c.Source || strings.ContainsAny(a[1:], `/\`) {
			t.Fatalf("remote args %q carry a path", remote)
		}
	}
}

// keepsLineMarkers reads the probe as the driver would: -E present, no -P, as options (a
// directory named "-P" after -isystem is a value, not the flag).
func keepsLineMarkers(probe []string, f Flavor) bool {
	toks, pe := tokenize(probe, f)
	if pe != nil {
		return false
	}
	preprocess := false
	for _, t := range toks {
		switch {
		case t.kind != tokOption:
		case t.opt.role == roleNoLineMarks:
			return false
		case t.opt.reason == ReasonPreprocessOnly && probe[t.pos] == "-E":
			preprocess = true
		}
	}
	return preprocess
}

func isSubsequence(sub, of []string) bool {
	i := 0
	for _, a := range of {
		if i < len(sub) && sub[i] == a {
			i++
		}
	}
	return i == len(sub)
}
