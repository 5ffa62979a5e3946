package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
)

// exactProject: macros on the lines that make code (which moved DWARF columns when workers
// compiled fully preprocessed text), tabs and doubled spaces, a header in a subdirectory with
// a macro spread over lines, and code that warns in the main file, in the header and inside
// a macro expansion.
var exactProject = map[string]string{
	"src/main.c": "#include <stdio.h>\n#include \"../inc/util.h\"\n#define ADD(a, b)   ((a) + (b))\n" +
		"int f(int x) {\n\tint unused;\n\treturn ADD(x, SQUARE(x))  +  helper(x);\n}\n" +
		"int g(unsigned u, int i) { return  LESS(u,\ti); }\n" +
		"int main(void) { printf(\"%d %d\\n\", f(3), g(1, 2)); return 0; }\n",
	"inc/util.h": "#ifndef UTIL_H\n#define UTIL_H\n#define SQUARE(v)\t((v) * (v)) \\\n\t\t/* squared */\n" +
		"static int helper(int y) { int s = y; { int s = 2; return s + y; } }\n" +
		"#define LESS(a, b)  ((a)  <  (b))\n#endif\n",
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plainGCC runs gcc as pace-cc's cc helper runs pace-cc (LC_ALL=C unless env says otherwise)
// and returns its stderr.
func plainGCC(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("gcc", args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, stderr.String())
	}
	return stderr.String()
}

// dispatchNode is a node whose worker takes this test's compiles (startNode leaves the shared
// CPU figure out, so the worker is never withdrawn).
func dispatchNode(t *testing.T) *nodeProc {
	t.Helper()
	_, kvAddr := startKV(t, "")
	n := startNode(t, t.TempDir(), "--upstream="+kvAddr)
	waitFor(t, "the worker's registration", registered(n))
	return n
}

// compilerOutput is pace-cc's stderr without its own verbose lines.
func compilerOutput(stderr string) string {
	var out []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "pace-cc: ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestDispatchedDebugBuildsAreByteIdentical: ordinary -g compiles are dispatched to the
// node's worker and land the object plain gcc writes in the same directory, with the
// directory, file names, line tables and columns a local build records: DWARF 5 by default
// and asked for, -ggdb, -g1, -gcolumn-info after -gno-column-info, a user's prefix maps, an
// absolute source path, a depfile. -g3, DWARF 4 and split DWARF are compiled here, and say why.
func TestDispatchedDebugBuildsAreByteIdentical(t *testing.T) {
	n := dispatchNode(t)
	dir := writeTree(t, exactProject)
	env := []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + n.addr, "PACE_SCHEDULER=" + n.addr}
	src := "src/main.c"
	dispatched := [][]string{
		{"-g", "-O2"},
		{"-g", "-O0", "-gdwarf-5"},
		{"-ggdb", "-O2", "-fPIC"},
		{"-g1", "-O1"},
		{"-gno-column-info", "-g", "-gcolumn-info", "-O2"},
		{"-g", "-O2", "-fdebug-prefix-map=" + dir + "=/src"},
		{"-g", "-Og", "-ffile-prefix-map=" + dir + "/=", "-fmacro-prefix-map=src/=s/"},
		{"-g", "-O2", "-MD", "-MF", "main.d", "-MT", "main.o"},
	}
	for i, flags := range dispatched {
		for _, source := range []string{src, filepath.Join(dir, src)} {
			args := append(append([]string(nil), flags...), "-c", source, "-o", "remote.o")
			r := cc(t, dir, env, append([]string{"gcc"}, args...)...)
			if r.status != 0 || !strings.Contains(r.stderr, "DISPATCHED") {
				t.Fatalf("variant %d %v from %s: not dispatched (%d):\n%s\nnode log:\n%s", i, flags, source, r.status, r.stderr, n.log)
			}
			remoteDep, _ := os.ReadFile(filepath.Join(dir, "main.d"))
			plainGCC(t, dir, nil, append(append([]string(nil), flags...), "-c", source, "-o", "local.o")...)
			sameFile(t, filepath.Join(dir, "remote.o"), filepath.Join(dir, "local.o"))
			if localDep, _ := os.ReadFile(filepath.Join(dir, "main.d")); !bytes.Equal(remoteDep, localDep) {
				t.Errorf("variant %d: the depfile differs:\n%s\nwant:\n%s", i, remoteDep, localDep)
			}
		}
	}
	for flags, why := range map[string]string{
		"-g3 -O2":        "debug macro information",
		"-g -gdwarf-4":   "older than DWARF 5",
		"-ggdb3 -gdwarf": "debug macro information",
	} {
		args := append(strings.Fields(flags), "-c", src, "-o", "here.o")
		r := cc(t, dir, env, append([]string{"gcc"}, args...)...)
		if r.status != 0 || strings.Contains(r.stderr, "DISPATCHED") || !strings.Contains(r.stderr, why) {
			t.Errorf("%s: want a local compile that says %q:\n%s", flags, why, r.stderr)
		}
		plainGCC(t, dir, nil, append(strings.Fields(flags), "-c", src, "-o", "local.o")...)
		sameFile(t, filepath.Join(dir, "here.o"), filepath.Join(dir, "local.o"))
	}
	// Split DWARF writes a .dwo beside the object: neither cached nor dispatched.
	r := cc(t, dir, env, "gcc", "-g", "-gsplit-dwarf", "-c", src, "-o", "split.o")
	if _, err := os.Stat(filepath.Join(dir, "split.dwo")); r.status != 0 || !strings.Contains(r.stderr, "split dwarf") || err != nil {
		t.Errorf("-gsplit-dwarf: want it run as given, .dwo and all (%v):\n%s", err, r.stderr)
	}
}

// TestRemoteWarningsAreReplayedExactly: a dispatched compile that warns — in the main file,
// in a header (with its include stack), inside a macro expansion (with its notes) — prints
// byte for byte what plain gcc prints, in the C and the C.UTF-8 locale, and is compiled once:
// the worker counts one job and pace-cc records the miss as dispatched with its diagnostics
// replayed. The next build is a hit that prints them again.
func TestRemoteWarningsAreReplayedExactly(t *testing.T) {
	n := dispatchNode(t)
	dir := writeTree(t, exactProject)
	flags := []string{"-O2", "-g", "-Wall", "-Wextra", "-Wshadow", "-c", "src/main.c"}
	for i, locale := range []string{"C", "C.UTF-8"} {
		home := t.TempDir()
		env := []string{"HOME=" + home, "PACE_ADDR=" + n.addr, "PACE_SCHEDULER=" + n.addr, "LC_ALL=" + locale}
		want := plainGCC(t, dir, []string{"LC_ALL=" + locale}, append(flags, "-o", "local.o")...)
		if !strings.Contains(want, "in expansion of macro") || !strings.Contains(want, "In file included from") {
			t.Fatalf("the sample no longer warns as it should:\n%s", want)
		}
		jobs := n.metric("pace_worker_jobs_completed_total")
		r := cc(t, dir, env, append([]string{"gcc"}, append(flags, "-o", "remote.o")...)...)
		if got := compilerOutput(r.stderr); r.status != 0 || got != want {
			t.Fatalf("LC_ALL=%s: pace-cc printed:\n%s\nplain gcc:\n%s\n(verbose: %s)", locale, got, want, r.stderr)
		}
		sameFile(t, filepath.Join(dir, "remote.o"), filepath.Join(dir, "local.o"))
		if n.metric("pace_worker_jobs_completed_total") != jobs+1 {
			t.Errorf("LC_ALL=%s: the worker ran %v compiles, want 1", locale, n.metric("pace_worker_jobs_completed_total")-jobs)
		}
		s, err := ccstats.Read(filepath.Join(home, ".local", "state", "pace-cc"))
		if err != nil || s.Misses != 1 || s.Dispatch[ccstats.CauseDiagnosticsReplayed] != 1 || len(s.Dispatch) != 1 {
			t.Errorf("LC_ALL=%s: statistics %v %+v, want one miss dispatched with its diagnostics replayed", locale, err, s.Dispatch)
		}
		r = cc(t, dir, env, append([]string{"gcc"}, append(flags, "-o", "remote.o")...)...)
		if got := compilerOutput(r.stderr); !strings.Contains(r.stderr, "HIT") || got != want {
			t.Errorf("build %d: the hit printed:\n%s\nwant:\n%s", i, got, want)
		}
	}
}

// TestUnreplayableWarningsCompileHereAndSaySo: colours recoloured by GCC_COLORS cannot be
// matched by a worker, so the compile runs here once more, prints what gcc prints, and is
// counted remote-diagnostics-compiled-here with the reason in PACE_VERBOSE.
func TestUnreplayableWarningsCompileHereAndSaySo(t *testing.T) {
	n := dispatchNode(t)
	dir := writeTree(t, exactProject)
	home := t.TempDir()
	colors := "GCC_COLORS=error=01;35:warning=01;36"
	env := []string{"HOME=" + home, "PACE_ADDR=" + n.addr, "PACE_SCHEDULER=" + n.addr, colors}
	args := []string{"-O2", "-Wall", "-fdiagnostics-color=always", "-c", "src/main.c", "-o", "x.o"}
	want := plainGCC(t, dir, []string{colors}, args...)
	r := cc(t, dir, env, append([]string{"gcc"}, args...)...)
	if got := compilerOutput(r.stderr); got != want || !strings.Contains(r.stderr, "GCC_COLORS recolours") {
		t.Fatalf("pace-cc printed:\n%q\nwant:\n%q\n(verbose: %s)", got, want, r.stderr)
	}
	s, _ := ccstats.Read(filepath.Join(home, ".local", "state", "pace-cc"))
	if s.Dispatch[ccstats.CauseRemoteDiagnostics] != 1 {
		t.Errorf("statistics %+v, want one remote-diagnostics-compiled-here", s.Dispatch)
	}
}
