package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// copyTree copies a project to a second checkout location.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

func TestCheckoutCopiedElsewhereHitsWithRootsAndStaysCorrectWithout(t *testing.T) {
	addr := startKV(t)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	write(t, a, map[string]string{"src/hello.c": helloC, "src/inc/util.h": utilH})
	copyTree(t, a, b)
	compile := func(root string, roots bool, flags ...string) (*env, result) {
		e := &env{t: t, addr: addr, home: t.TempDir()}
		if roots {
			e.extra = []string{"PACE_SOURCE_DIR=" + root + "/src", "PACE_BINARY_DIR=" + root + "/build"}
		}
		os.MkdirAll(filepath.Join(root, "build"), 0o755)
		args := append(append([]string{"gcc"}, flags...), "-Wall", "-MD", "-c", root+"/src/hello.c", "-o", "hello.o")
		return e, e.paceCC(filepath.Join(root, "build"), args...)
	}
	plainAt := func(root string, flags ...string) result {
		return plain(t, filepath.Join(root, "build"), "gcc", append(flags, "-Wall", "-MD", "-c", root+"/src/hello.c", "-o", "plain.o")...)
	}
	// With roots: the second checkout hits, and everything it replays names its own paths.
	compile(a, true, "-O2")
	e, r := compile(b, true, "-O2")
	want := plainAt(b, "-O2")
	if !strings.HasPrefix(e.lastOutcome(), "hit") || r.stderr != want.stderr || !strings.Contains(r.stderr, b+"/src/hello.c") {
		t.Fatalf("with roots: %s\n%q\nwant %q", e.lastOutcome(), r.stderr, want.stderr)
	}
	sameBytes(t, filepath.Join(b, "build/hello.o"), filepath.Join(b, "build/plain.o"))
	if dep := string(read(t, filepath.Join(b, "build/hello.d"))); strings.Contains(dep, a) || !strings.Contains(dep, b+"/src/inc/util.h") {
		t.Fatalf("depfile names the other checkout: %q", dep)
	}
	// Without roots, and with -g (the object records its directory): correct, whatever the cache says.
	for _, tc := range []struct {
		roots bool
		flags []string
	}{{false, []string{"-O2"}}, {true, []string{"-O2", "-g"}}, {false, []string{"-O0", "-g"}}} {
		compile(a, tc.roots, tc.flags...)
		_, r := compile(b, tc.roots, tc.flags...)
		want := plainAt(b, tc.flags...)
		if r.stderr != want.stderr {
			t.Fatalf("roots=%v %v: stderr %q want %q", tc.roots, tc.flags, r.stderr, want.stderr)
		}
		sameBytes(t, filepath.Join(b, "build/hello.o"), filepath.Join(b, "build/plain.o"))
	}
}

func TestNonCompilesPassThroughWithTheCompilersStatus(t *testing.T) {
	e, dir := newEnv(t), project(t)
	write(t, dir, map[string]string{"other.c": "int other(void) { return 1; }\n", "broken.c": "int f( {\n"})
	cases := []struct {
		args       []string
		wantStatus int
	}{
		{[]string{"gcc", "hello.c", "-o", "hello"}, 0},           // compile and link
		{[]string{"gcc", "-E", "hello.c"}, 0},                    // preprocess only
		{[]string{"gcc", "-c", "hello.c", "other.c"}, 0},         // several sources
		{[]string{"gcc", "hello.o.missing", "-o", "x"}, 1},       // a failing link
		{[]string{"gcc", "-c", "broken.c", "-o", "broken.o"}, 1}, // a failing compile
		{[]string{"gcc", "--version"}, 0},                        // not a compile
	}
	for _, c := range cases {
		r := e.paceCC(dir, c.args...)
		want := plain(t, dir, c.args[0], c.args[1:]...)
		if r.status != c.wantStatus || r.status != want.status || r.stdout != want.stdout {
			t.Errorf("%v: status %d (gcc alone %d, want %d)", c.args, r.status, want.status, c.wantStatus)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hello")); err != nil {
		t.Error("link through pace-cc produced no executable")
	}
	// The failed compile was not stored: a second attempt is not a hit.
	e.paceCC(dir, "gcc", "-c", "broken.c", "-o", "broken.o")
	if out := e.lastOutcome(); out != "failed" {
		t.Errorf("second failing compile outcome %s", out)
	}
}

// garbageServer answers every connection with bytes that are not a reply, or nothing at all.
func garbageServer(t *testing.T, answer []byte, hold time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				bufio.NewReader(c).Peek(1)
				c.Write(answer)
				time.Sleep(hold)
			}()
		}
	}()
	return l.Addr().String()
}

func TestADeadSlowOrGarbledCacheNeverFailsACompile(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	for name, addr := range map[string]string{
		"dead":    deadAddr,
		"slow":    garbageServer(t, nil, 30*time.Second),
		"garbage": garbageServer(t, []byte("HTTP/1.1 200 OK\r\n\r\nhello"), 0),
		"huge":    garbageServer(t, []byte{1, 0xff, 0xff, 0xff, 0xff}, time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			e := &env{t: t, addr: addr, home: t.TempDir(), extra: []string{"PACE_TIMEOUT_MS=300"}}
			dir := project(t)
			start := time.Now()
			r := e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o")
			if r.status != 0 {
				t.Fatalf("status %d: %s", r.status, r.stderr)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatal("the timeout did not bound the wait")
			}
			plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
			sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
			if out := e.lastOutcome(); out != "unavailable" {
				t.Fatalf("outcome %s, want unavailable", out)
			}
		})
	}
}

func TestThirtyTwoConcurrentProcessesOnOneCache(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	for i := 0; i < 8; i++ {
		write(t, dir, map[string]string{fmt.Sprintf("f%d.c", i): fmt.Sprintf("#include <stdio.h>\nint f%d(void) { return printf(\"%d\"); }\n", i, i)})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for p := 0; p < 32; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			i := p % 8
			out := fmt.Sprintf("p%d.o", p)
			if r := e.paceCC(dir, "gcc", "-O2", "-c", fmt.Sprintf("f%d.c", i), "-o", out); r.status != 0 {
				errs <- fmt.Sprintf("process %d: %d %s", p, r.status, r.stderr)
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for p := 0; p < 32; p++ {
		i := p % 8
		plain(t, dir, "gcc", "-O2", "-c", fmt.Sprintf("f%d.c", i), "-o", "plain.o")
		sameBytes(t, filepath.Join(dir, fmt.Sprintf("p%d.o", p)), filepath.Join(dir, "plain.o"))
	}
	if s := e.stats(); s.Invocations != 32 || s.Unreadable != 0 || s.Hits+s.Misses != 32 {
		t.Fatalf("stats after 32 processes: %+v", s)
	}
}

func TestMasqueradeSymlinkFindsTheRealCompiler(t *testing.T) {
	e, dir := newEnv(t), project(t)
	bin := t.TempDir()
	for _, name := range []string{"gcc", "cc", "gcc-12"} {
		if err := os.Symlink(os.Args[0], filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	e.extra = []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, name := range []string{"gcc", "cc"} {
		r := e.run(dir, filepath.Join(bin, name), "-O2", "-c", "hello.c", "-o", name+".o")
		if r.status != 0 {
			t.Fatalf("%s: %d %s", name, r.status, r.stderr)
		}
	}
	if s := e.stats(); s.Invocations != 2 {
		t.Fatalf("masquerade calls not handled by pace-cc: %+v", s)
	}
	plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
	sameBytes(t, filepath.Join(dir, "gcc.o"), filepath.Join(dir, "plain.o"))
	// The launcher form with a masquerade directory first on PATH still finds the real gcc.
	if r := e.paceCC(dir, "gcc", "-O2", "-c", "hello.c", "-o", "l.o"); r.status != 0 {
		t.Fatalf("launcher through a masquerade PATH: %s", r.stderr)
	}
	// A masquerade with nothing behind it fails clearly instead of recursing.
	e.extra = []string{"PATH=" + bin}
	if r := e.run(dir, filepath.Join(bin, "gcc-12"), "-c", "hello.c", "-o", "x.o"); r.status == 0 || !strings.Contains(r.stderr, "pace-cc") {
		t.Fatalf("lonely masquerade: %d %q", r.status, r.stderr)
	}
}

func TestTemporalMacrosAreUncacheable(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	write(t, dir, map[string]string{"t.c": "const char *built = __DATE__ \" \" __TIME__;\n"})
	for i := 0; i < 2; i++ {
		if r := e.paceCC(dir, "gcc", "-c", "t.c", "-o", "t.o"); r.status != 0 || e.lastOutcome() != "uncacheable" {
			t.Fatalf("run %d: %d %s", i, r.status, e.lastOutcome())
		}
	}
}

func TestVerifyRecompilesAndKeepsTheFreshObject(t *testing.T) {
	e, dir := newEnv(t), project(t)
	args := []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}
	e.paceCC(dir, args...)
	e.extra = []string{"PACE_VERIFY=1"}
	r := e.paceCC(dir, args...)
	if r.status != 0 || strings.Contains(r.stderr, "MISMATCH") {
		t.Fatalf("verify of a good entry: %d %q", r.status, r.stderr)
	}
	s := e.stats()
	if s.Reasons["hit: verified"] != 1 {
		t.Fatalf("verification not recorded: %v", s.Reasons)
	}
}

func TestShowAndZeroStats(t *testing.T) {
	e, dir := newEnv(t), project(t)
	e.paceCC(dir, "gcc", "-c", "hello.c", "-o", "hello.o")
	e.paceCC(dir, "gcc", "-c", "hello.c", "-o", "hello.o")
	r := e.paceCC(dir, "--show-stats")
	if r.status != 0 || !strings.Contains(r.stdout, "cache hits") || !strings.Contains(r.stdout, "hit latency") {
		t.Fatalf("--show-stats: %d %q", r.status, r.stdout)
	}
	if r := e.paceCC(dir, "-z"); r.status != 0 {
		t.Fatal("zero-stats failed")
	}
	if s := e.stats(); s.Invocations != 0 {
		t.Fatal("stats survived --zero-stats")
	}
	for _, bad := range [][]string{{"--stats"}, {"--bogus"}, {}} {
		if r := e.paceCC(dir, bad...); r.status != 2 {
			t.Errorf("%v: status %d, want 2", bad, r.status)
		}
	}
	if r := e.paceCC(dir, "--version"); r.status != 0 || !strings.HasPrefix(r.stdout, "pace-cc ") {
		t.Errorf("--version: %q", r.stdout)
	}
}
