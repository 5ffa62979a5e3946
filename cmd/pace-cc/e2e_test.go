package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const helloC = `#include <stdio.h>
#include "inc/util.h"

int main(void) {
	int unused_variable;
	printf("%d\n", twice(21));
	return 0;
}
`

const utilH = `static inline int twice(int x) { return x * 2; }
`

func project(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, map[string]string{"hello.c": helloC, "inc/util.h": utilH})
	// Sources as a user's tree has them: older than the build. A file modified in the same
	// clock tick a compile starts is not cached (pace-wire §3.6.1), which is not what these
	// tests are about.
	old := time.Now().Add(-10 * time.Second)
	for _, f := range []string{"hello.c", "inc/util.h"} {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestMissThenHitIsByteIdentical compiles through pace-cc twice per flag set and checks the
// miss and the hit each produce exactly what gcc alone produces, warnings included.
func TestMissThenHitIsByteIdentical(t *testing.T) {
	for _, flags := range [][]string{
		{"-O2", "-Wall"},
		{"-O0", "-g", "-Wall"},
		{"-O2", "-g", "-Wall", "-MD", "-MF", "hello.d"},
		{"-O2", "-Wall", "-MMD", "-MP", "-MT", "custom-target"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			e, dir := newEnv(t), project(t)
			args := append(append([]string{"gcc"}, flags...), "-c", "hello.c", "-o", "hello.o")
			want := plain(t, dir, "gcc", append(flags, "-c", "hello.c", "-o", "plain.o")...)
			os.Rename(filepath.Join(dir, "hello.d"), filepath.Join(dir, "plain.d"))
			os.Rename(filepath.Join(dir, "hello.o.d"), filepath.Join(dir, "plain.d"))
			for i, wantOutcome := range []string{"miss", "hit-direct"} {
				r := e.paceCC(dir, args...)
				if r.status != 0 || e.lastOutcome() != wantOutcome {
					t.Fatalf("run %d: status %d outcome %s, want %s\n%s", i, r.status, e.lastOutcome(), wantOutcome, r.stderr)
				}
				sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
				if r.stderr != want.stderr {
					t.Fatalf("run %d stderr:\n%q\nwant:\n%q", i, r.stderr, want.stderr)
				}
				if !strings.Contains(r.stderr, "unused_variable") {
					t.Fatalf("warning missing: %q", r.stderr)
				}
				os.Remove(filepath.Join(dir, "hello.o"))
			}
		})
	}
}

func TestDepfileReplayedWithTargetsUntouched(t *testing.T) {
	e, dir := newEnv(t), project(t)
	args := []string{"gcc", "-O2", "-MD", "-MF", "deps/hello.d", "-MT", "$(OBJ)/hello.o", "-c", "hello.c", "-o", "hello.o"}
	os.MkdirAll(filepath.Join(dir, "deps"), 0o755)
	e.paceCC(dir, args...)
	first := string(read(t, filepath.Join(dir, "deps/hello.d")))
	os.Remove(filepath.Join(dir, "deps/hello.d"))
	if r := e.paceCC(dir, args...); r.status != 0 || !strings.HasPrefix(e.lastOutcome(), "hit") {
		t.Fatalf("second run: %d %s", r.status, e.lastOutcome())
	}
	if got := string(read(t, filepath.Join(dir, "deps/hello.d"))); got != first || !strings.HasPrefix(got, "$(OBJ)/hello.o:") {
		t.Fatalf("replayed depfile %q, want %q", got, first)
	}
}

func TestHeaderEditInvalidates(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			e, dir := newEnv(t), project(t)
			if !direct {
				e.extra = append(e.extra, "PACE_NO_DIRECT=1")
			}
			args := []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}
			e.paceCC(dir, args...)
			e.paceCC(dir, args...)
			if !strings.HasPrefix(e.lastOutcome(), "hit") {
				t.Fatalf("no hit before the edit: %s", e.lastOutcome())
			}
			// Same size, same second: a stat-based check would miss this edit.
			write(t, dir, map[string]string{"inc/util.h": strings.Replace(utilH, "x * 2", "x * 3", 1)})
			if r := e.paceCC(dir, args...); r.status != 0 || e.lastOutcome() != "miss" {
				t.Fatalf("after the edit: %s", e.lastOutcome())
			}
			plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
			sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
		})
	}
}

func TestMovedHeaderGetsADepfileNamingItsNewPath(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	write(t, dir, map[string]string{"a.c": "#include \"h.h\"\nint f(void) { return H; }\n", "old/h.h": "#define H 1\n"})
	os.MkdirAll(filepath.Join(dir, "new"), 0o755)
	args := []string{"gcc", "-Iold", "-Inew", "-MD", "-c", "a.c", "-o", "a.o"}
	e.paceCC(dir, args...)
	os.Rename(filepath.Join(dir, "old/h.h"), filepath.Join(dir, "new/h.h"))
	if r := e.paceCC(dir, args...); r.status != 0 {
		t.Fatalf("after the move: %d %s", r.status, r.stderr)
	}
	dep := string(read(t, filepath.Join(dir, "a.d")))
	if !strings.Contains(dep, "new/h.h") || strings.Contains(dep, "old/h.h") {
		t.Fatalf("depfile after the header moved: %q", dep)
	}
}

func TestLineShiftingEditGivesCorrectObjectAndWarningLines(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	src := "int f(int x) {\n\tint unused;\n\treturn x;\n}\n"
	write(t, dir, map[string]string{"a.c": src})
	args := []string{"gcc", "-O2", "-g", "-Wall", "-c", "a.c", "-o", "a.o"}
	e.paceCC(dir, args...)
	write(t, dir, map[string]string{"a.c": "/* one */\n/* two */\n" + src})
	r := e.paceCC(dir, args...)
	want := plain(t, dir, "gcc", "-O2", "-g", "-Wall", "-c", "a.c", "-o", "plain.o")
	if r.stderr != want.stderr || !strings.Contains(r.stderr, "a.c:4:") {
		t.Fatalf("stderr %q, want %q", r.stderr, want.stderr)
	}
	sameBytes(t, filepath.Join(dir, "a.o"), filepath.Join(dir, "plain.o"))
}
