package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const handOver = "handing over to pace-cc-full"

// TestFrontServesTheSecondRunByteIdentical: after a miss, the next run of the same command is
// served by the front alone — no hand-over — and reproduces plain gcc's object, depfile and
// warnings exactly, with and without debug information and with every depfile option.
func TestFrontServesTheSecondRunByteIdentical(t *testing.T) {
	for _, flags := range [][]string{
		{"-O2", "-Wall"},
		{"-O0", "-g", "-Wall"},
		{"-O2", "-g", "-Wall", "-MD", "-MF", "hello.d"},
		{"-O2", "-Wall", "-MMD", "-MP", "-MT", "custom-target"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			e, dir := newEnv(t), project(t)
			args := append(append([]string{"gcc"}, flags...), "-c", "hello.c", "-o", "hello.o")
			want := plain(t, dir, "gcc", append(flags, "-c", "hello.c", "-o", "hello.o")...)
			for _, f := range []string{"hello.o", "hello.d", "hello.o.d"} {
				os.Rename(filepath.Join(dir, f), filepath.Join(dir, "plain-"+f))
			}
			e.paceCC(dir, args...) // the miss files the memo
			os.Remove(filepath.Join(dir, "hello.o"))
			e.extra = []string{"PACE_VERBOSE=1"}
			r := e.paceCC(dir, args...)
			if r.status != 0 || strings.Contains(r.stderr, handOver) || e.lastOutcome() != "hit-direct" {
				t.Fatalf("second run: status %d, outcome %s, stderr:\n%s", r.status, e.lastOutcome(), r.stderr)
			}
			// gcc's warnings exactly, then the one line verbosity adds.
			rest, ok := strings.CutPrefix(r.stderr, want.stderr)
			if !ok || !strings.Contains(want.stderr, "unused_variable") || !strings.HasPrefix(rest, "pace-cc: HIT (direct) ") ||
				strings.Count(rest, "\n") != 1 {
				t.Fatalf("warnings not replayed exactly:\n%q\nwant:\n%q", r.stderr, want.stderr)
			}
			sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain-hello.o"))
			for _, f := range []string{"hello.d", "hello.o.d"} {
				if _, err := os.Stat(filepath.Join(dir, "plain-"+f)); err == nil {
					sameBytes(t, filepath.Join(dir, f), filepath.Join(dir, "plain-"+f))
				}
			}
		})
	}
}

// TestFrontStreamsAreExactlyGccs runs without verbosity: the front's stdout and stderr are
// gcc's, byte for byte.
func TestFrontStreamsAreExactlyGccs(t *testing.T) {
	e, dir := newEnv(t), project(t)
	want := plain(t, dir, "gcc", "-O2", "-Wall", "-c", "hello.c", "-o", "plain.o")
	for i := range 3 {
		r := e.paceCC(dir, "gcc", "-O2", "-Wall", "-c", "hello.c", "-o", "hello.o")
		if r.status != 0 || r.stderr != want.stderr || r.stdout != want.stdout {
			t.Fatalf("run %d: status %d, stderr %q, want %q", i, r.status, r.stderr, want.stderr)
		}
		sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
	}
}

// TestFrontHandsOverWhenAnInputChanged: a header edited between builds is a miss (the front
// hands over, pace-cc-full compiles), the new object is gcc's, and the run after that is the
// front's again. A header touched without a change stays a hit.
func TestFrontHandsOverWhenAnInputChanged(t *testing.T) {
	e, dir := newEnv(t), project(t)
	args := []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}
	e.paceCC(dir, args...)
	e.extra = []string{"PACE_VERBOSE=1"}
	write(t, dir, map[string]string{"inc/util.h": "static inline int twice(int x) { return x + x + 1; }\n"})
	r := e.paceCC(dir, args...)
	if !strings.Contains(r.stderr, handOver) || e.lastOutcome() != "miss" {
		t.Fatalf("after an edit: outcome %s, stderr:\n%s", e.lastOutcome(), r.stderr)
	}
	plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
	sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "inc/util.h"), later, later) // touched, same content
	if r := e.paceCC(dir, args...); strings.Contains(r.stderr, handOver) || e.lastOutcome() != "hit-direct" {
		t.Fatalf("after a touch: outcome %s, stderr:\n%s", e.lastOutcome(), r.stderr)
	}
	sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
}

// TestFrontKeysOnTheWholeCommand: another output name, another define or another compiler
// variable is another command, which the memo of the first never serves.
func TestFrontKeysOnTheWholeCommand(t *testing.T) {
	e, dir := newEnv(t), project(t)
	e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o")
	e.extra = []string{"PACE_VERBOSE=1"}
	for name, c := range map[string]struct {
		args  []string
		extra string
	}{
		"other output": {args: []string{"gcc", "-O2", "-c", "hello.c", "-o", "other.o"}},
		"other define": {args: []string{"gcc", "-O2", "-DX=1", "-c", "hello.c", "-o", "hello.o"}},
		"other locale": {args: []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}, extra: "LANG=de_DE.UTF-8"},
	} {
		e.extra = []string{"PACE_VERBOSE=1", c.extra}
		if r := e.paceCC(dir, c.args...); !strings.Contains(r.stderr, "no hit memo: "+handOver) {
			t.Errorf("%s: the first command's memo served it:\n%s", name, r.stderr)
		}
	}
}

// TestFrontWithoutFullStillCompiles: a front installed without pace-cc-full says so and runs
// the compiler uncached; the build does not fail.
func TestFrontWithoutFullStillCompiles(t *testing.T) {
	e, dir := newEnv(t), project(t)
	e.extra = []string{"PACE_CC_FULL=" + filepath.Join(dir, "no-such-pace-cc-full")}
	r := e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o")
	if r.status != 0 || !strings.Contains(r.stderr, "compiling uncached") {
		t.Fatalf("status %d, stderr:\n%s", r.status, r.stderr)
	}
	plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
	sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
	if r := e.paceCC(dir, "gcc", "-c", "missing.c", "-o", "m.o"); r.status == 0 {
		t.Fatal("a failing compile succeeded without pace-cc-full")
	}
}

// A link is not a compile: the front runs gcc in its own place, without handing over, and
// records the passthrough as pace-cc-full would. A preprocessor run may be a dependency
// listing, so it still goes to pace-cc-full.
func TestFrontPassesALinkThroughItself(t *testing.T) {
	e, dir := newEnv(t), project(t)
	plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o")
	e.extra = []string{"PACE_VERBOSE=1"}
	r := e.paceCC(dir, "gcc", "hello.o", "-o", "hello")
	// gcc takes hello.o as an input it does not compile: Classify's reason is "non-source input".
	if r.status != 0 || strings.Contains(r.stderr, handOver) || !strings.Contains(r.stderr, "passthrough (non-source input)") {
		t.Fatalf("link: status %d, stderr:\n%s", r.status, r.stderr)
	}
	if rec := e.lastRecord(); rec.Outcome != "passthrough" || rec.Reason != "non-source input" {
		t.Fatalf("recorded %+v", rec)
	}
	if out := e.run(dir, filepath.Join(dir, "hello")); out.stdout != "42\n" {
		t.Fatalf("the linked program printed %q", out.stdout)
	}
	r = e.paceCC(dir, "gcc", "no-such.o", "-o", "nothing")
	want := plain(t, dir, "gcc", "no-such.o", "-o", "nothing")
	if r.status != want.status || !strings.HasSuffix(r.stderr, want.stderr) {
		t.Fatalf("a failing link: %+v, want gcc's %+v", r, want)
	}
	r = e.paceCC(dir, "gcc", "-E", "hello.c")
	if r.status != 0 || !strings.Contains(r.stderr, handOver) || e.lastOutcome() != "passthrough" {
		t.Fatalf("-E: status %d, outcome %s, stderr:\n%s", r.status, e.lastOutcome(), r.stderr)
	}
}
