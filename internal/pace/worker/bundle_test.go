package worker

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// bundleFiles: macros on the lines that make code, a header in a subdirectory whose macro
// body and function warn, a system header; tabs and doubled spaces move columns.
var bundleFiles = map[string]string{
	"main.c": "#include <stdio.h>\n#include \"inc/util.h\"\n#define ADD(a, b)   ((a) + (b))\n" +
		"int f(int x) {\n\tint unused;\n\treturn ADD(x, SQUARE(x))  +  helper(x);\n}\n" +
		"int main(void) { printf(\"%d\\n\", f(3)); return 0; }\n" +
		"int g(unsigned u, int i) { return  LESS(u,\ti); }\n",
	"inc/util.h": "#ifndef UTIL_H\n#define UTIL_H\n#define SQUARE(v)\t((v) * (v)) \\\n\t\t/* squared */\n" +
		"static int helper(int y) { int s = y; { int s = 2; return s + (int)(y * 1u); } }\n" +
		"#define LESS(a, b)  ((a)  <  (b))\n#endif\n",
}

// bundleProject writes bundleFiles into a fresh directory.
func bundleProject(t *testing.T) project {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	for name, body := range bundleFiles {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return project{dir: dir, source: "main.c"}
}

// buildBundle is the client's half: gcc's directives-only text of the project's source,
// bundled with names mapped by debug and macro.
func buildBundle(t *testing.T, p project, flags []string, debug, macro func(string) string) *tubundle.Built {
	t.Helper()
	text := p.run(t, "gcc", append(append([]string(nil), flags...), "-E", "-fdirectives-only", p.source)...)
	built, err := tubundle.Build(tubundle.Source{
		Text: text, SourceName: p.source, Locale: tubundle.LocaleC, Debug: debug, Macro: macro,
		Read: func(name string) ([]byte, error) {
			if !filepath.IsAbs(name) {
				name = filepath.Join(p.dir, name)
			}
			return os.ReadFile(name)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return built
}

func same(s string) string { return s }

// TestBundleCompileIsLocalByteForByte: a bundle compiles to the object a local gcc writes,
// with debug information and with a client prefix map, and prints the local diagnostics,
// macro notes, carets and include stack included, once the names are mapped back.
func TestBundleCompileIsLocalByteForByte(t *testing.T) {
	f := newFixture(t).start()
	for _, tc := range []struct {
		name  string
		flags []string
		mapTo string
	}{
		{"-O2 -g", []string{"-O2", "-g", "-Wall", "-Wextra", "-Wshadow", "-Wsign-conversion"}, ""},
		{"-O0, -gdwarf-5, pedantic", []string{"-O0", "-g", "-gdwarf-5", "-std=c99", "-pedantic", "-Wall", "-Wsign-compare"}, ""},
		{"mapped", []string{"-O1", "-g", "-Wall", "-Wshadow", "-Wsign-compare"}, "/build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := bundleProject(t)
			local := append([]string(nil), tc.flags...)
			debug := same
			if tc.mapTo != "" {
				local = append(local, "-fdebug-prefix-map="+p.dir+"="+tc.mapTo)
				debug = func(s string) string { return strings.Replace(s, p.dir, tc.mapTo, 1) }
			}
			wantErr := runStderr(t, p, append(local, "-c", "main.c", "-o", "local.o"))
			want, _ := os.ReadFile(filepath.Join(p.dir, "local.o"))
			built := buildBundle(t, p, local, debug, same)
			req := f.request("", append(append([]string(nil), tc.flags...), "-x", "cpp-output")...)
			req.SourceName, req.CompileDir, req.CompileDirReplacement = "main.c", p.dir, debug(p.dir)
			req.Source = seal(t, wire.CodecZstd, tubundle.Encode(nil, built.Bundle))
			o := f.compile(req)
			if o.status != wire.StatusOk || o.reply.ExitCode != 0 {
				t.Fatalf("answered %s %v, exit %d: %s", o.status, o.refusal, o.reply.ExitCode, o.reply.Stderr)
			}
			if got := openObject(t, o); !bytes.Equal(got, want) {
				t.Errorf("object differs from the local build: %d bytes vs %d", len(got), len(want))
			}
			diag, ok, why := tubundle.Localize(o.reply.Stderr, built)
			if !ok || string(diag) != wantErr || !strings.Contains(wantErr, "in expansion of macro") {
				t.Errorf("diagnostics (exact %v, %s):\n%s\nwant:\n%s", ok, why, diag, wantErr)
			}
			assertNoJobDirs(t, f.w)
		})
	}
}

func runStderr(t *testing.T, p project, args []string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := execIn(p.dir, "gcc", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C") // the worker's locale for LocaleC
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, stderr.String())
	}
	return stderr.String()
}

// TestBundleRefusals: a bundle that does not decode is malformed-frame, one whose regions
// hold a directive the worker does not run is worker-rejected-argument, each counted, and
// neither writes a file.
func TestBundleRefusals(t *testing.T) {
	f := newFixture(t).start()
	main := func(text string) []byte {
		return tubundle.Encode(nil, &tubundle.Bundle{Locale: tubundle.LocaleC, Source: tubundle.File{Base: "a.c"},
			Regions: []tubundle.Region{{Text: []byte(text)}}})
	}
	for _, tc := range []struct {
		name   string
		source []byte
		code   wire.Code
	}{
		{"garbage after the magic", []byte(tubundle.Magic + "\x00\x00"), wire.CodeMalformedFrame},
		{"an include of the worker's file", main("#include \"/etc/passwd\"\n"), wire.CodeWorkerRejectedArgument},
		{"a marker naming the worker's file", main("# 1 \"/etc/passwd\"\nint x = ;\n"), wire.CodeWorkerRejectedArgument},
	} {
		before := counterValues(f.w)
		req := f.request("", "-O2", "-x", "cpp-output")
		req.Source = seal(t, wire.CodecIdentity, tc.source)
		o := f.compile(req)
		if o.status != wire.StatusError || o.refusal.Code != tc.code {
			t.Errorf("%s: answered %s %v, want %s", tc.name, o.status, o.refusal, tc.code)
		}
		moved := changedCounters(before, counterValues(f.w))
		if moved["pace_worker_jobs_refused_rejected_source_total"] != 1 || moved["pace_worker_jobs_started_total"] != 0 {
			t.Errorf("%s: counters moved %v", tc.name, moved)
		}
		assertNoJobDirs(t, f.w)
	}
}

// TestPreprocessedTextPrintsNoWorkerFile: a line marker in preprocessed text may name any
// file of the worker's machine; the diagnostics never quote its lines.
func TestPreprocessedTextPrintsNoWorkerFile(t *testing.T) {
	f := newFixture(t).start()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("top-secret-line-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := f.compile(f.request("# 1 \""+secret+"\"\nint x = ;\n", "-O2", "-x", "cpp-output"))
	if o.status != wire.StatusOk || o.reply.ExitCode == 0 {
		t.Fatalf("answered %s %v, exit %d", o.status, o.refusal, o.reply.ExitCode)
	}
	if bytes.Contains(o.reply.Stderr, []byte("top-secret")) || !bytes.Contains(o.reply.Stderr, []byte("secret.txt:1:9")) {
		t.Errorf("stderr quotes the worker's file, or names no location:\n%s", o.reply.Stderr)
	}
}

func execIn(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}

// TestBundleWithoutTheClientsLocale: on a worker whose compiler cannot print C.UTF-8's quotes
// a bundle asking for them compiles under C, and its diagnostics say they are not the
// client's, so pace-cc compiles the warnings here; the object still comes back.
func TestBundleWithoutTheClientsLocale(t *testing.T) {
	f := newFixture(t).start()
	tc, _ := f.w.toolchains.Load().lookup(fakeFP)
	if !f.w.printsUTF8(context.Background(), tc) {
		t.Fatal("this machine's gcc prints no C.UTF-8 quotes; the test needs it to, to fake a worker that does not")
	}
	f.w.utf8.Store(tc.Path, false)
	p := bundleProject(t)
	built := buildBundle(t, p, []string{"-O2", "-Wall"}, same, same)
	built.Bundle.Locale = tubundle.LocaleCUTF8
	req := f.request("", "-O2", "-Wall", "-x", "cpp-output")
	req.SourceName = "main.c"
	req.Source = seal(t, wire.CodecZstd, tubundle.Encode(nil, built.Bundle))
	o := f.compile(req)
	if o.status != wire.StatusOk || o.reply.ExitCode != 0 || len(openObject(t, o)) == 0 {
		t.Fatalf("answered %s %v, exit %d", o.status, o.refusal, o.reply.ExitCode)
	}
	if bytes.Contains(o.reply.Stderr, []byte("\u2018")) {
		t.Errorf("compiled under C.UTF-8 after all:\n%s", o.reply.Stderr)
	}
	if _, ok, why := tubundle.Localize(o.reply.Stderr, built); ok || !strings.Contains(why, "no C.UTF-8") {
		t.Errorf("the client would replay them (%v, %q):\n%s", ok, why, o.reply.Stderr)
	}
}
