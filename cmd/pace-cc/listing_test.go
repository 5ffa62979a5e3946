package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Dependency listings (pace-wire §3.6.2): `gcc -M`/`-MM` runs once, traced, and later runs are
// served from the cache while every file the preprocessor read is unchanged.

const listA = `#include <stdio.h>
#include <cfg.h>
#include "inc/util.h"
#ifdef USE_EXTRA
#include "inc/extra.h"
#endif
int a(void) { return twice(1); }
`

const listB = `#include "inc/util.h"
int b(void) { return twice(2); }
`

// listingProject is a tree whose listing depends on a system header: sys/cfg.h, found through
// -isystem, decides whether a.c includes inc/extra.h, yet -MM never names it.
func listingProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeAged(t, dir, map[string]string{"a.c": listA, "b.c": listB, "inc/util.h": utilH,
		"inc/extra.h": "#define EXTRA 1\n", "sys/cfg.h": "#define CFG 1\n"}, 20*time.Second)
	os.MkdirAll(filepath.Join(dir, "deps"), 0o755)
	return dir
}

// writeAged writes files stamped age ago, as a tree edited before the build starts.
func writeAged(t *testing.T, dir string, files map[string]string, age time.Duration) {
	t.Helper()
	write(t, dir, files)
	old := time.Now().Add(-age)
	for name := range files {
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// Each listing shape, run by gcc alone and then twice through pace-cc: the miss and the hit
// each print (or write) exactly gcc's rules and nothing on standard error.
func TestDependencyListingMissAndHitAreByteIdentical(t *testing.T) {
	cases := []struct {
		args []string
		dest string // "" = standard output
	}{
		{[]string{"-isystem", "sys", "-MM", "a.c", "b.c"}, ""},
		{[]string{"-isystem", "sys", "-M", "a.c"}, ""},
		{[]string{"-isystem", "sys", "-O2", "-MM", "-MT", "obj/a.o", "-MP", "-MF", "deps/a.d", "a.c"}, "deps/a.d"},
		{[]string{"-isystem", "sys", "-MM", "b.c", "-o", "b.dep"}, "b.dep"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			e, dir := newEnv(t), listingProject(t)
			want := listingOf(t, dir, tc.dest, plain(t, dir, "gcc", tc.args...))
			for i, outcome := range []string{"miss", "hit"} {
				got := listingOf(t, dir, tc.dest, e.paceCC(dir, append([]string{"gcc"}, tc.args...)...))
				if rec := e.lastRecord(); string(rec.Outcome) != outcome || rec.Via != "listing" {
					t.Fatalf("run %d: %+v, want a %s via listing", i, rec, outcome)
				}
				if got != want {
					t.Fatalf("run %d printed\n%s\nwant\n%s", i, got, want)
				}
			}
		})
	}
}

// listingOf is what a listing produced: its status, its rules (from dest, which it removes, or
// standard output) and its standard error.
func listingOf(t *testing.T, dir, dest string, r result) string {
	t.Helper()
	rules := r.stdout
	if dest != "" {
		rules = string(read(t, filepath.Join(dir, dest)))
		if err := os.Remove(filepath.Join(dir, dest)); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(rules, "util.h") {
		t.Fatalf("no rules naming util.h: status %d\n%s\n%s", r.status, rules, r.stderr)
	}
	return "status " + string(rune('0'+r.status)) + "\nrules:\n" + rules + "stderr:\n" + r.stderr
}

// A system header the rules never name still decides them: editing it, or a listed header,
// is a miss whose rules are the new ones, and the run after it hits again.
func TestDependencyListingSeesEveryFileItRead(t *testing.T) {
	e, dir := newEnv(t), listingProject(t)
	args := []string{"-isystem", "sys", "-MM", "a.c", "b.c"}
	edits := []struct {
		files map[string]string
		extra bool // whether the rules then name inc/extra.h
	}{
		{map[string]string{"sys/cfg.h": "#define CFG 1\n#define USE_EXTRA 1\n"}, true}, // not in the -MM rules
		{map[string]string{"sys/cfg.h": "#define CFG 2\n"}, false},
		{map[string]string{"inc/util.h": utilH + "#include \"extra.h\"\n"}, true}, // in them
	}
	e.paceCC(dir, append([]string{"gcc"}, args...)...)
	for i, edit := range edits {
		writeAged(t, dir, edit.files, time.Duration(10-i)*time.Second)
		want := plain(t, dir, "gcc", args...)
		if strings.Contains(want.stdout, "extra.h") != edit.extra {
			t.Fatalf("edit %d: gcc's rules are not what the test expects:\n%s", i, want.stdout)
		}
		for _, outcome := range []string{"miss", "hit"} {
			got := e.paceCC(dir, append([]string{"gcc"}, args...)...)
			if rec := e.lastRecord(); string(rec.Outcome) != outcome || rec.Via != "listing" {
				t.Fatalf("edit %d: %+v, want a %s", i, rec, outcome)
			}
			if got != want {
				t.Fatalf("edit %d, %s: %+v, want %+v", i, outcome, got, want)
			}
		}
	}
}

// A listing that fails (a header is missing) prints gcc's own error, without the trace, exits
// with gcc's status and is not stored: the next run fails the same way, from the compiler.
func TestFailedDependencyListingIsExactAndNotStored(t *testing.T) {
	e, dir := newEnv(t), listingProject(t)
	writeAged(t, dir, map[string]string{"c.c": "#include \"missing.h\"\n"}, 20*time.Second)
	args := []string{"-isystem", "sys", "-MM", "a.c", "c.c"}
	want := plain(t, dir, "gcc", args...)
	if want.status == 0 || !strings.Contains(want.stderr, "missing.h") {
		t.Fatalf("gcc did not fail: %+v", want)
	}
	for i := 0; i < 2; i++ {
		got := e.paceCC(dir, append([]string{"gcc"}, args...)...)
		if got != want {
			t.Fatalf("run %d: %+v, want %+v", i, got, want)
		}
		if rec := e.lastRecord(); rec.Outcome != "failed" {
			t.Fatalf("run %d: %+v, want failed", i, rec)
		}
	}
}

// Listings pace-cc cannot reproduce exactly run as given, uncached.
func TestDependencyListingShapesItDoesNotCache(t *testing.T) {
	e, dir := newEnv(t), listingProject(t)
	for _, args := range [][]string{
		{"-MM", "-MG", "a.c"},
		{"-MM", "a.c", "b.c", "-MF", "deps/all.d"},
		{"-MM", "-H", "b.c"},
		{"-MM", "-include", "inc/util.h", "b.c"}, // -H does not trace a forced include
	} {
		want := plain(t, dir, "gcc", args...)
		got := e.paceCC(dir, append([]string{"gcc"}, args...)...)
		if got != want || e.lastOutcome() != "passthrough" {
			t.Fatalf("%q: %s %+v, want a passthrough printing %+v", args, e.lastOutcome(), got, want)
		}
	}
}
