package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
)

// Depend mode (pace-wire §3.6.1): a local miss compiles once with a depfile and keys the result
// by the headers that depfile lists; no preprocessor runs.

// lastRecord is the latest invocation's statistics line.
func (e *env) lastRecord() ccstats.Record {
	e.t.Helper()
	b := read(e.t, filepath.Join(e.home, ".local", "state", "pace-cc", ccstats.LogName))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	r, err := ccstats.ParseLine([]byte(lines[len(lines)-1]))
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// dependOutputs are the files a compile writes: the object and, when the command asks for one,
// its depfile.
type dependOutputs struct{ object, depfile string }

// snapshot copies the outputs aside under a suffix and removes them, so the next compile has to
// write them afresh.
func (o dependOutputs) snapshot(t *testing.T, dir, suffix string) {
	t.Helper()
	for _, f := range []string{o.object, o.depfile} {
		if f != "" {
			if err := os.Rename(filepath.Join(dir, f), filepath.Join(dir, f+suffix)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDependMissAndHitAreByteIdentical runs each command once with gcc alone and then twice
// through pace-cc, in the same directory: the miss (keyed from the depfile, no preprocessor
// run) and the hit must each write exactly gcc's object, depfile and warnings, and nothing else.
func TestDependMissAndHitAreByteIdentical(t *testing.T) {
	depOptions := []struct {
		flags   []string
		depfile string
	}{
		{nil, ""},
		{[]string{"-MD"}, "hello.d"},
		{[]string{"-MMD"}, "hello.d"},
		{[]string{"-MD", "-MF", "deps/hello.dep"}, "deps/hello.dep"},
		{[]string{"-MMD", "-MT", "$(OBJ)/hello.o", "-MT", "other"}, "hello.d"},
		{[]string{"-MD", "-MP"}, "hello.d"},
		{[]string{"-MMD", "-MP", "-MQ", "$(OBJ)/hello.o", "-MF", "hello.dep"}, "hello.dep"},
	}
	for _, debug := range [][]string{{"-O2"}, {"-O0", "-g"}} {
		for _, d := range depOptions {
			flags := append(append(append([]string{}, debug...), "-Wall"), d.flags...)
			t.Run(strings.Join(flags, " "), func(t *testing.T) { checkDependCase(t, flags, d.depfile) })
		}
	}
}

// checkDependCase compiles hello.c with flags by gcc alone, then a miss and a hit through
// pace-cc, comparing each with gcc's outputs and checking nothing else was left behind.
func checkDependCase(t *testing.T, flags []string, depfile string) {
	e, dir := newEnv(t), project(t)
	tmp := t.TempDir()
	e.extra = append(e.extra, "TMPDIR="+tmp)
	os.MkdirAll(filepath.Join(dir, "deps"), 0o755)
	out := dependOutputs{object: "hello.o", depfile: depfile}
	args := append(append([]string{}, flags...), "-c", "hello.c", "-o", "hello.o")
	want := plain(t, dir, "gcc", args...)
	out.snapshot(t, dir, ".plain")
	before := listTree(t, dir)
	for i, wantOutcome := range []string{"miss", "hit-direct"} {
		r := e.paceCC(dir, append([]string{"gcc"}, args...)...)
		if r.status != 0 || e.lastOutcome() != wantOutcome {
			t.Fatalf("run %d: status %d outcome %s, want %s\n%s", i, r.status, e.lastOutcome(), wantOutcome, r.stderr)
		}
		if rec := e.lastRecord(); i == 0 && (rec.Via != "depend" || rec.CppMS != 0) {
			t.Fatalf("the miss was not keyed from its depfile: %+v", rec)
		}
		if r.stderr != want.stderr || r.stdout != want.stdout || !strings.Contains(r.stderr, "unused_variable") {
			t.Fatalf("run %d stderr:\n%q\nwant:\n%q", i, r.stderr, want.stderr)
		}
		sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "hello.o.plain"))
		if depfile != "" {
			sameBytes(t, filepath.Join(dir, depfile), filepath.Join(dir, depfile+".plain"))
		}
		out.remove(t, dir)
		if after := listTree(t, dir); after != before {
			t.Fatalf("run %d left files behind:\n%s\nwant:\n%s", i, after, before)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the private depfile's directory was left in TMPDIR: %v", left)
	}
}

func (o dependOutputs) remove(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{o.object, o.depfile} {
		if f != "" {
			if err := os.Remove(filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// listTree names every file under dir, one a line.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return err
	})
	return strings.Join(names, "\n")
}

// A header edited between builds (same size, same second) is a miss, and the object is the new
// one; the build after it hits again.
func TestDependHeaderEditedBetweenBuildsMisses(t *testing.T) {
	for _, flags := range [][]string{{"-O2"}, {"-O2", "-MMD"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			e, dir := newEnv(t), project(t)
			args := append(append([]string{"gcc"}, flags...), "-c", "hello.c", "-o", "hello.o")
			e.paceCC(dir, args...)
			if e.paceCC(dir, args...); e.lastOutcome() != "hit-direct" {
				t.Fatalf("no hit before the edit: %s", e.lastOutcome())
			}
			write(t, dir, map[string]string{"inc/util.h": strings.Replace(utilH, "x * 2", "x * 3", 1)})
			if r := e.paceCC(dir, args...); r.status != 0 || e.lastOutcome() != "miss" || e.lastRecord().Via != "depend" {
				t.Fatalf("after the edit: %s %+v", e.lastOutcome(), e.lastRecord())
			}
			plain(t, dir, "gcc", append(flags[:len(flags):len(flags)], "-c", "hello.c", "-o", "plain.o")...)
			sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
			if e.paceCC(dir, args...); e.lastOutcome() != "hit-direct" {
				t.Fatalf("no hit after the edited header's miss: %s", e.lastOutcome())
			}
			sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
		})
	}
}

// A header that uses __TIME__ or __DATE__ makes the object depend on when it was compiled: the
// miss is compiled, not stored, and the verbose note says why; the next build compiles again.
func TestDependTemporalHeaderIsNotStored(t *testing.T) {
	for _, macro := range []string{"__TIME__", "__DATE__"} {
		t.Run(macro, func(t *testing.T) {
			e, dir := newEnv(t), t.TempDir()
			write(t, dir, map[string]string{"t.c": "#include \"stamp.h\"\nconst char *built = STAMP;\n",
				"stamp.h": "#define STAMP " + macro + "\n"})
			e.extra = append(e.extra, "PACE_VERBOSE=1")
			for i := 0; i < 2; i++ {
				r := e.paceCC(dir, "gcc", "-c", "t.c", "-o", "t.o")
				if r.status != 0 || e.lastOutcome() != "uncacheable" {
					t.Fatalf("run %d: %d %s", i, r.status, e.lastOutcome())
				}
				if !strings.Contains(r.stderr, "not stored: __TIME__, __DATE__ or __TIMESTAMP__ in a header") ||
					!strings.Contains(r.stderr, "stamp.h") {
					t.Fatalf("run %d does not say why: %q", i, r.stderr)
				}
			}
		})
	}
}

// A header rewritten while the compile runs (after the compiler read it) cannot be keyed by
// its hash afterwards: the result is not stored, and the next build compiles the new header.
func TestDependHeaderChangedDuringTheCompileIsNotStored(t *testing.T) {
	e, dir := newEnv(t), project(t)
	real, err := findOnPath("gcc")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	// A gcc that edits the header once its compile has read it, as a concurrent editor would.
	script := "#!/bin/sh\n\"" + real + "\" \"$@\"\ns=$?\ncase \" $* \" in *\" -c \"*) echo '/* edited */' >> \"" +
		filepath.Join(dir, "inc/util.h") + "\" ;; esac\nexit $s\n"
	write(t, bin, map[string]string{"gcc": script})
	os.Chmod(filepath.Join(bin, "gcc"), 0o755)
	e.extra = append(e.extra, "PATH="+bin+":"+os.Getenv("PATH"), "PACE_VERBOSE=1")
	r := e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o")
	if r.status != 0 || !strings.Contains(r.stderr, "not stored: dependency changed during the compile") {
		t.Fatalf("status %d: %q", r.status, r.stderr)
	}
	if rec := e.lastRecord(); rec.Outcome != ccstats.Miss || rec.Reason != "dependency changed during the compile" {
		t.Fatalf("recorded %+v", rec)
	}
	e.extra = e.extra[:len(e.extra)-2]
	if e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o"); e.lastOutcome() != "miss" {
		t.Fatalf("a result keyed by a header that changed under it was stored: %s", e.lastOutcome())
	}
}

func findOnPath(name string) (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// With a fleet configured a dispatchable miss is keyed by the preprocessor (its worker needs
// the preprocessed text); one the fleet cannot take (assembly output) is compiled here in
// depend mode.
func TestDependModeWithAFleetConfigured(t *testing.T) {
	e, dir := newEnv(t), project(t)
	e.extra = append(e.extra, "PACE_SCHEDULER="+deadAddr(t), "PACE_CONNECT_TIMEOUT_MS=200")
	if r := e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o"); r.status != 0 {
		t.Fatal(r.stderr)
	}
	if rec := e.lastRecord(); rec.Via == "depend" || rec.CppMS == 0 {
		t.Fatalf("a dispatchable miss was not keyed by the preprocessor: %+v", rec)
	}
	if r := e.paceCC(dir, "gcc", "-O2", "-S", "hello.c", "-o", "hello.s"); r.status != 0 {
		t.Fatal(r.stderr)
	}
	if rec := e.lastRecord(); rec.Via != "depend" || rec.Dispatch != ccstats.CauseArguments {
		t.Fatalf("an undispatchable miss was not compiled in depend mode: %+v", rec)
	}
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
