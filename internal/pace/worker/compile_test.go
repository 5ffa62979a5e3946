package worker

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The samples use no macro on a line that produces code: GCC records
// DWARF column numbers with -g, and a macro whose expansion is wider or
// narrower than its name shifts the columns of the rest of its line in
// `gcc -E` output (see the package report: that difference is the
// preprocessor's, not the worker's).
const sampleC = `#include <stdio.h>
#include "local.h"
#ifndef LOCAL_N
#error local.h was not included
#endif
static int square(int x) { return x * x; }
int main(void) { printf("%d %s\n", square(7), "main"); return 0; }
`

const sampleCXX = `#include "local.h"
template <typename T> struct Box {
	T value;
	T twice() const { return value + value; }
};
int use(int x) { Box<int> b{x}; return b.twice() * 3; }
long use(long x) { Box<long> b{x}; return b.twice(); }
`

// project is a source tree compiled locally and through the worker.
type project struct {
	dir, source string
}

func newProject(t *testing.T, name, text string) project {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, body := range map[string]string{name: text, "local.h": "#define LOCAL_N 7\n"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return project{dir: dir, source: name}
}

// run runs a compiler in the project directory, as a build would.
func (p project) run(t *testing.T, compiler string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(compiler, args...)
	cmd.Dir = p.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestDispatchedObjectIsByteIdentical: a COMPILE of a TU preprocessed with
// `gcc -E` returns, over real TCP, the object a local `gcc -c` of the same
// source with the same flags writes (pace-node §5.5: the sanitized base
// name and the prefix maps make the object match a local build), with or
// without debug information and with or without a client prefix map; the
// reply's correlation and signature verify as pace-cc checks them.
func TestDispatchedObjectIsByteIdentical(t *testing.T) {
	cases := []struct {
		name, driver, file, text, lang string
		flags                          []string
		mapTo                          string // the client's -fdebug-prefix-map replacement; "" = none
	}{
		{"c -O2", "gcc", "main.c", sampleC, "cpp-output", []string{"-O2"}, ""},
		{"c -O2 -g", "gcc", "main.c", sampleC, "cpp-output", []string{"-O2", "-g"}, ""},
		{"c -g mapped", "gcc", "main.c", sampleC, "cpp-output", []string{"-O1", "-g", "-fPIC"}, "/build"},
		{"c++ -g", "g++", "lib.cc", sampleCXX, "c++-cpp-output", []string{"-O2", "-g", "-std=c++17"}, ""},
		{"c++ -g mapped", "g++", "lib.cc", sampleCXX, "c++-cpp-output", []string{"-O0", "-g", "-fno-rtti"}, "."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			compiler, err := exec.LookPath(tc.driver)
			if err != nil {
				t.Fatalf("needs %s: %v", tc.driver, err)
			}
			f := newFixture(t, withPins(Pin{Fingerprint: fakeFP, Compiler: compiler})).start()
			p := newProject(t, tc.file, tc.text)
			local := append([]string(nil), tc.flags...)
			if tc.mapTo != "" {
				local = append(local, "-fdebug-prefix-map="+p.dir+"="+tc.mapTo)
			}
			p.run(t, compiler, append([]string{"-c", tc.file, "-o", "local.o"}, local...)...)
			want, err := os.ReadFile(filepath.Join(p.dir, "local.o"))
			if err != nil {
				t.Fatal(err)
			}
			req := f.request("", append(append([]string(nil), tc.flags...), "-x", tc.lang)...)
			req.SourceName = tc.file
			if tc.mapTo != "" {
				req.CompileDir, req.CompileDirReplacement = p.dir, tc.mapTo
			}
			pre := p.run(t, compiler, append([]string{"-E", tc.file}, local...)...)
			if got := dispatch(t, f, req, pre); !bytes.Equal(got, want) {
				t.Fatalf("object differs from the local build: %d bytes vs %d", len(got), len(want))
			}
		})
	}
}

// dispatch sends req carrying the preprocessed source over TCP, checks
// the reply as pace-cc would and the counters it moved, and returns the
// object.
func dispatch(t *testing.T, f *fixture, req verbs.CompileRequest, pre []byte) []byte {
	t.Helper()
	req.Source = seal(t, wire.CodecZstd, pre)
	c := dial(t, f.server())
	before := counterValues(f.w)
	c.send(req.Append(nil))
	o, _ := c.receive(nil)
	if o.status != wire.StatusOk || o.reply.ExitCode != 0 {
		t.Fatalf("answered %s %v, exit %d: %s", o.status, o.refusal, o.reply.ExitCode, o.reply.Stderr)
	}
	verifySigned(t, req, pre, o, f.node.Public())
	moved := changedCounters(before, counterValues(f.w))
	for _, name := range []string{"pace_worker_jobs_started_total", "pace_worker_jobs_completed_total"} {
		if moved[name] != 1 {
			t.Errorf("%s moved by %d, want 1", name, moved[name])
		}
	}
	if moved["pace_worker_bytes_received_total"] == 0 || moved["pace_worker_bytes_returned_total"] == 0 {
		t.Errorf("byte counters did not move: %v", moved)
	}
	waitFor(t, "the slot to be given back", func() bool { return f.w.InFlight() == 0 })
	assertNoJobDirs(t, f.w)
	return openObject(t, o)
}

// TestNonZeroExitIsASuccessfulExchange: a compiler that rejects the code
// answers Ok with its exit code, no object and its stderr (pace-wire §1.13).
func TestNonZeroExitIsASuccessfulExchange(t *testing.T) {
	f := newFixture(t).start()
	src := "# 1 \"broken.c\"\nint main(void) { return missing_symbol; }\n"
	req := f.request(src, "-O2", "-x", "cpp-output")
	o := f.compile(req)
	if o.status != wire.StatusOk {
		t.Fatalf("refused: %v", o.refusal)
	}
	if o.reply.ExitCode == 0 {
		t.Fatal("a compile error exited 0")
	}
	if len(o.reply.Object) != 0 {
		t.Fatalf("a failed compile returned a %d-byte object field", len(o.reply.Object))
	}
	if !bytes.Contains(o.reply.Stderr, []byte("missing_symbol")) || !bytes.Contains(o.reply.Stderr, []byte("broken.c")) {
		t.Fatalf("stderr does not name the error and the client's file: %q", o.reply.Stderr)
	}
	verifySigned(t, req, []byte(src), o, f.node.Public())
	if n := f.w.Counters().JobsCompleted.Load(); n != 1 {
		t.Fatalf("completed = %d", n)
	}
}

// TestReplyObjectCodecFollowsClientList: the object travels in the first
// codec of the client's list this build produces; Identity when the list
// names none it knows.
func TestReplyObjectCodecFollowsClientList(t *testing.T) {
	f := newFixture(t).start()
	src := "# 1 \"a.c\"\nstatic int f(int x) { return x * 3; }\nint g(int y) { return f(y) + 1; }\n"
	for _, tc := range []struct {
		list []wire.Codec
		want wire.Codec
	}{
		{[]wire.Codec{wire.CodecLZ4, wire.CodecZstd}, wire.CodecLZ4},
		{[]wire.Codec{9, wire.CodecZstd}, wire.CodecZstd},
		{[]wire.Codec{9}, wire.CodecIdentity},
		{nil, wire.CodecIdentity},
	} {
		req := f.request(src, "-O2", "-g", "-x", "cpp-output")
		req.Codecs = wire.NewCodecList(tc.list...)
		o := f.compile(req)
		if o.status != wire.StatusOk || o.reply.ExitCode != 0 {
			t.Fatalf("%v: %v %s", tc.list, o.refusal, o.reply.Stderr)
		}
		env, err := wire.ParseEnvelope(o.reply.Object)
		if err != nil {
			t.Fatal(err)
		}
		// Seal falls back to Identity when a codec does not shrink the
		// bytes; an object with debug info always shrinks.
		if env.Codec != tc.want {
			t.Errorf("list %v: object in %s, want %s", tc.list, env.Codec, tc.want)
		}
	}
}

func assertNoJobDirs(t *testing.T, w *Worker) {
	t.Helper()
	entries, err := os.ReadDir(w.scratch.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != scratchLockName {
			t.Errorf("scratch root still holds %s", e.Name())
		}
	}
}
