package ccargs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests hold the table and the derived commands against the real GNU driver on this
// machine (gcc is a test dependency: scripts/deps.sh installs it).

func requireGcc(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc is a test dependency (scripts/deps.sh test): %v", err)
	}
	return gcc
}

// gccTakesNext reports whether gcc's driver consumed the argument after opt: with b.c
// consumed, "-o with multiple files" cannot happen.
func gccTakesNext(t *testing.T, gcc, dir, opt string) bool {
	cmd := exec.Command(gcc, "-###", "-c", "a.c", "-o", "x.o", opt, "b.c")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return !bytes.Contains(out, []byte("with multiple files"))
}

// Every gcc-visible row that takes its value as the next argument makes gcc consume the next
// argument, and every flag row does not: a wrong arity would turn a value into a source or
// swallow the source.
func TestTableAritiesMatchGcc(t *testing.T) {
	t.Parallel()
	gcc, dir := requireGcc(t), t.TempDir()
	for _, list := range gnuOptions() {
		for _, o := range list {
			if o.clang || o.arity == joined || skipArityCheck[o.name] {
				continue
			}
			want := o.arity != flagArity
			if got := gccTakesNext(t, gcc, dir, o.name); got != want {
				t.Errorf("%s: gcc consumes the next argument = %v, table says %v", o.name, got, want)
			}
		}
	}
}

// skipArityCheck are rows gcc -### cannot tell about in this harness: they stop the driver
// before it looks at the inputs, or make it read the next argument as something else.
var skipArityCheck = map[string]bool{
	"--help": true, "--target-help": true, "--version": true, "-dumpversion": true,
	"-dumpfullversion": true, "-dumpmachine": true, "-dumpspecs": true, "-###": true,
	"-M": true, "-MM": true, "--dependencies": true, "--user-dependencies": true,
	"-E": true, "--preprocess": true, "-Hd": true, "-Hf": true, "-J": true,
}

const probeSource = "#include <stdio.h>\n#include \"h.h\"\n\nint f(int a) { return a * H; }\n"

func writeTree(t *testing.T) string {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.c": probeSource, "h.h": "#define H 3\n", "sub/k.x.c": probeSource} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runGcc(t *testing.T, dir string, args []string) []byte {
	t.Helper()
	cmd := exec.Command("gcc", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gcc %q: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// The depfile path and targets the classifier derives are the ones gcc 12 writes.
func TestDepfileNamingMatchesGcc(t *testing.T) {
	t.Parallel()
	requireGcc(t)
	for _, line := range []string{
		"-c a.c -o out.o -MD", "-c a.c -o dir.x/noext -MMD", "-c a.c -o z.obj.o -MMD -MP",
		"-c sub/k.x.c -MMD -I.", "-c a.c -o a$b.o -MMD", "-c a.c -o o.o -MMD -MT x$y -MQ p$q",
		"-S a.c -MD", "-S a.c -o a.s -MD", "-c a.c -o .hidden -MD", "-c a.c -o a.o -MD -MMD -MF d1 -MF d2",
	} {
		dir := writeTree(t)
		if err := os.MkdirAll(filepath.Join(dir, "dir.x"), 0o755); err != nil {
			t.Fatal(err)
		}
		c, err := Classify(Invocation{Compiler: "gcc", Args: argv(line), Cwd: dir, ImplicitOutput: true})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		runGcc(t, dir, argv(line))
		if _, err := os.Stat(filepath.Join(dir, c.Output)); err != nil {
			t.Errorf("%s: output %q not written: %v", line, c.Output, err)
		}
		text, err := os.ReadFile(filepath.Join(dir, c.Deps.File))
		if err != nil {
			t.Errorf("%s: depfile %q not written: %v", line, c.Deps.File, err)
			continue
		}
		if want := makeTargets(c.Deps.Targets) + ":"; !strings.HasPrefix(string(text), want) {
			t.Errorf("%s: depfile starts %q, want %q", line, firstLine(text), want)
		}
		if hasStdio := bytes.Contains(text, []byte("stdio.h")); hasStdio != (c.Deps.Mode == DepAll) {
			t.Errorf("%s: mode %v but stdio.h listed = %v", line, c.Deps.Mode, hasStdio)
		}
	}
}

// makeTargets renders targets as gcc writes them: -MQ doubles '$'.
func makeTargets(ts []DepTarget) string {
	var names []string
	for _, d := range ts {
		if d.Quoted {
			names = append(names, strings.ReplaceAll(d.Name, "$", "$$"))
		} else {
			names = append(names, d.Name)
		}
	}
	return strings.Join(names, " ")
}

func firstLine(b []byte) string { return string(bytes.SplitN(b, []byte("\n"), 2)[0]) }

// The key probe runs, keeps line markers and reports the headers; the dispatched compile of
// the dispatch preprocess output gives the object a local compile gives.
func TestProbesAndDispatchAgainstGcc(t *testing.T) {
	t.Parallel()
	requireGcc(t)
	for _, line := range []string{
		"-std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c -o a.o a.c",
		"-O2 -fPIC -DH2=4 -I. -MD -MT a.o -MF a.o.d -o a.o -c a.c",
		"-x c++ -O1 -fno-exceptions -std=c++11 -c a.c -o a.o",
	} {
		dir := writeTree(t)
		c, err := Classify(Invocation{Compiler: "gcc", Args: argv(line), Cwd: dir})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		pp := runGcc(t, dir, c.KeyProbeArgs(filepath.Join(dir, "scratch.d")))
		if !bytes.Contains(pp, []byte("# 1 \"a.c\"")) || !bytes.Contains(pp, []byte("\"h.h\"")) {
			t.Errorf("%s: key probe output lacks line markers", line)
		}
		if deps, _ := os.ReadFile(filepath.Join(dir, "scratch.d")); !bytes.Contains(deps, []byte("h.h")) {
			t.Errorf("%s: key probe depfile %q lacks h.h", line, deps)
		}
		runGcc(t, dir, c.Args)
		local, _ := os.ReadFile(filepath.Join(dir, "a.o"))
		remote := compileLikeAWorker(t, c, runGcc(t, dir, c.DispatchPreprocessArgs()))
		if !bytes.Equal(local, remote) {
			t.Errorf("%s: dispatched object differs from the local one", line)
		}
	}
}

// compileLikeAWorker compiles preprocessed text in a scratch directory of its own, with the
// remote arguments and the source's base name, as a worker does.
func compileLikeAWorker(t *testing.T, c *Compile, text []byte) []byte {
	scratch := t.TempDir()
	name := filepath.Base(c.Source)
	if err := os.WriteFile(filepath.Join(scratch, name), text, 0o644); err != nil {
		t.Fatal(err)
	}
	args, err := c.RemoteCompileArgs("")
	if err != nil {
		t.Fatalf("RemoteCompileArgs: %v", err)
	}
	runGcc(t, scratch, append(args, "-c", name, "-o", "tu.o"))
	obj, err := os.ReadFile(filepath.Join(scratch, "tu.o"))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// The dependency probe writes, byte for byte, the depfile the compile itself writes.
func TestDepProbeWritesTheCompilesOwnDepfile(t *testing.T) {
	t.Parallel()
	requireGcc(t)
	for _, line := range []string{
		"-c a.c -o out.o -MD", "-c a.c -o dir.x/noext -MMD", "-c a.c -o z.obj.o -MMD -MP",
		"-c sub/k.x.c -MMD -I.", "-c a.c -o a$b.o -MMD", "-c a.c -o o.o -MMD -MT x$y -MQ p$q",
		"-c a.c -o a.o -MD -MF deps/a.d -MT custom", "-c a.c -o a.o -MD -MMD -MF d1 -MF d2", "-c a.c -o a.o",
	} {
		dir := writeTree(t)
		os.MkdirAll(filepath.Join(dir, "dir.x"), 0o755)
		os.MkdirAll(filepath.Join(dir, "deps"), 0o755)
		c, err := Classify(Invocation{Compiler: "gcc", Args: argv(line), Cwd: dir, ImplicitOutput: true})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		scratch := filepath.Join(t.TempDir(), "probe.d")
		// pace-cc probes directives-only: the depfile must not depend on it.
		runGcc(t, dir, append(c.DepProbeArgs(scratch), "-fdirectives-only", "-o", filepath.Join(t.TempDir(), "p.i")))
		probe, err := os.ReadFile(scratch)
		if err != nil {
			t.Fatalf("%s: probe wrote no depfile: %v", line, err)
		}
		if c.Deps.Mode == DepNone {
			continue // the probe still lists dependencies; the compile writes no depfile
		}
		runGcc(t, dir, argv(line))
		real, err := os.ReadFile(filepath.Join(dir, c.Deps.File))
		if err != nil || !bytes.Equal(probe, real) {
			t.Errorf("%s: probe depfile\n%q\ncompile depfile\n%q (%v)", line, probe, real, err)
		}
	}
}
