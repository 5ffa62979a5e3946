package worker

import (
	"cmp"
	"slices"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Scratch file names inside a job directory.
const objectName = "out.o"

// prefixMap is one -ffile-prefix-map rule.
type prefixMap struct{ from, to string }

// unmappable reports a directory a prefix-map rule cannot express: the
// option splits at the first '=', and whitespace or control characters
// are not reproduced faithfully by every driver (pace-node §5.1).
func unmappable(dir string) bool {
	return strings.ContainsFunc(dir, func(r rune) bool { return r == '=' || r <= ' ' || r == 0x7f })
}

// prefixMaps are the rules that make the object record what the client's
// own compile would (pace-wire §3.10): the client's compileDir and
// sourceRoot to their replacements, and the job's own scratch directory to
// the compile-dir replacement ("." when the client sent none, so no
// random scratch path can reach an object). GCC and Clang apply the last
// rule that matches, so the rules go from the shortest directory to the
// longest (the most specific wins), and the scratch rule, which nothing
// else should match, comes last. A client directory that cannot be
// expressed is left out rather than mangled.
func prefixMaps(req *verbs.CompileRequest, jobDir string) []prefixMap {
	var maps []prefixMap
	for _, m := range []prefixMap{{req.SourceRoot, req.SourceRootReplacement}, {req.CompileDir, req.CompileDirReplacement}} {
		if m.from != "" && !unmappable(m.from) {
			maps = append(maps, m)
		}
	}
	slices.SortStableFunc(maps, func(a, b prefixMap) int { return cmp.Compare(len(a.from), len(b.from)) })
	if !unmappable(jobDir) {
		to := req.CompileDirReplacement
		if req.CompileDir == "" {
			to = "."
		}
		maps = append(maps, prefixMap{jobDir, to})
	}
	return maps
}

// compilerArgs is the compiler's argument list after argv[0]: the vetted
// job arguments, the prefix maps, then the worker's own input and output
// (last, so no job argument can precede and re-type or redirect them).
func compilerArgs(jobArgs []string, maps []prefixMap, source, object string) []string {
	out := make([]string, 0, len(jobArgs)+len(maps)+4)
	out = append(out, jobArgs...)
	for _, m := range maps {
		out = append(out, "-ffile-prefix-map="+m.from+"="+m.to)
	}
	return append(out, "-c", source, "-o", object)
}
