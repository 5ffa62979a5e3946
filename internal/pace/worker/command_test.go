package worker

import (
	"slices"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// TestPrefixMaps: the client's directories map to their replacements, the
// most specific rule last (GCC and Clang apply the last match), the job's
// scratch directory last of all, to the compile-dir replacement.
func TestPrefixMaps(t *testing.T) {
	cases := []struct {
		name string
		req  verbs.CompileRequest
		want []prefixMap
	}{
		{"none sent", verbs.CompileRequest{}, []prefixMap{{"/s/job-1", "."}}},
		{"compile dir", verbs.CompileRequest{CompileDir: "/home/u/p", CompileDirReplacement: "/build"},
			[]prefixMap{{"/home/u/p", "/build"}, {"/s/job-1", "/build"}}},
		{"build tree inside source root", verbs.CompileRequest{
			CompileDir: "/home/u/p/build", CompileDirReplacement: ".", SourceRoot: "/home/u/p", SourceRootReplacement: "/src"},
			[]prefixMap{{"/home/u/p", "/src"}, {"/home/u/p/build", "."}, {"/s/job-1", "."}}},
		{"source root inside build dir", verbs.CompileRequest{
			CompileDir: "/w", CompileDirReplacement: "/b", SourceRoot: "/w/src", SourceRootReplacement: "/src"},
			[]prefixMap{{"/w", "/b"}, {"/w/src", "/src"}, {"/s/job-1", "/b"}}},
		{"unexpressible directory left out", verbs.CompileRequest{CompileDir: "/a=b", CompileDirReplacement: "/build"},
			[]prefixMap{{"/s/job-1", "/build"}}},
	}
	for _, tc := range cases {
		if got := prefixMaps(&tc.req, "/s/job-1"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := prefixMaps(&verbs.CompileRequest{}, "/tmp/has space/job"); len(got) != 0 {
		t.Errorf("unmappable scratch dir mapped: %v", got)
	}
}

// TestCompilerArgsPutTheWorkersOwnFilesLast: nothing a job sends can come
// after the worker's input and output.
func TestCompilerArgsPutTheWorkersOwnFilesLast(t *testing.T) {
	got := compilerArgs([]string{"-O2", "-x", "cpp-output"}, []prefixMap{{"/s/j", "."}}, "/s/j/a.c", "/s/j/out.o")
	want := []string{"-O2", "-x", "cpp-output", "-ffile-prefix-map=/s/j=.", "-c", "/s/j/a.c", "-o", "/s/j/out.o"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q", got)
	}
}
