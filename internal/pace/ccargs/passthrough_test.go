package ccargs

import (
	"errors"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"strconv"
	"testing"
)

// One or more command lines for every passthrough reason (listingRefusals has the rest).
var passthroughLines = []struct {
	line   []string
	reason Reason
}{
	{argv("ld -o prog a.o"), ReasonNotCompiler},
	{argv("pace-cc -c a.c -o a.o"), ReasonNotCompiler},
	{argv("cl /c a.c /Foa.obj"), ReasonMSVCDriver},
	{argv("clang-cl /c a.c /Foa.obj"), ReasonMSVCDriver},
	{argv("gcc -o prog a.c"), ReasonLink},
	{argv("gcc a.o b.o -o prog"), ReasonNonSourceInput},
	{argv("gcc -O2 a.c b.c -o prog"), ReasonLink},
	{argv("gcc -E a.c -o a.i"), ReasonPreprocessOnly},
	{argv("gcc -c a.c -o a.o -E"), ReasonPreprocessOnly},
	{argv("gcc -M a.c"), ReasonPreprocessOnly},
	{argv("gcc -MM -c a.c -o a.o"), ReasonPreprocessOnly},
	{argv("gcc -c a.c -o a.o -M -MD"), ReasonPreprocessOnly},
	{argv("gcc --preprocess a.c"), ReasonPreprocessOnly},
	{argv("gcc -fsyntax-only -c a.c -o a.o"), ReasonSyntaxOnly},
	{argv("clang --analyze -c a.c -o a.o"), ReasonStaticAnalysis},
	{argv("gcc -c -o a.o"), ReasonNoSource},
	{argv("gcc -c a.c b.c"), ReasonMultipleSources},
	{argv("gcc -c a.c b.cpp -o x.o"), ReasonMultipleSources},
	{argv("gcc -c a.c lib.a -o a.o"), ReasonNonSourceInput},
	{argv("gcc -c prog.f90 -o prog.o"), ReasonNonSourceInput},
	// MSVC spellings are paths to a GNU driver, never options (pace-wire §3.1,
	// pace-wire §3.2)
	{argv("gcc /c a.c /Foa.obj"), ReasonNonSourceInput},
	{argv("gcc -c a.c -o a.o /MT"), ReasonNonSourceInput},
	{argv("gcc -c - -o a.o"), ReasonStdinSource},
	{argv("gcc -x c -c - -o a.o"), ReasonStdinSource},
	{argv("gcc -c a.c"), ReasonNoOutput},
	{[]string{"gcc", "-c", "a.c", "-o", ""}, ReasonNoOutput},
	{argv("gcc -c a.c -o a.o -o b.o"), ReasonMultipleOutputs},
	{argv("gcc -c a.c -o -"), ReasonOutputToStdout},
	{argv("gcc -c a.c -o"), ReasonMissingValue},
	{argv("gcc -c a.c -o a.o -MF"), ReasonMissingValue},
	{argv("gcc @args.rsp"), ReasonResponseFile},
	{argv("gcc -c a.c -o a.o -I @inc"), ReasonResponseFile},
	{argv("gcc -x fortran -c a.f -o a.o"), ReasonUnsupportedLang},
	{argv("gcc -x cuda -c a.cu -o a.o"), ReasonUnsupportedLang},
	{argv("gcc -c start.s -o start.o"), ReasonAssemblerInput},
	{argv("gcc -x assembler -c start.asm -o start.o"), ReasonAssemblerInput},
	{argv("gcc -c a.i -o a.o"), ReasonPreprocessedInput},
	{argv("g++ -c a.ii -o a.o"), ReasonPreprocessedInput},
	{argv("gcc -x cpp-output -c a.c -o a.o"), ReasonPreprocessedInput},
	{argv("gcc -c pch.h -o pch.h.gch"), ReasonPrecompiledHeader},
	{argv("g++ -x c++-header -c stdafx.hpp -o stdafx.hpp.gch"), ReasonPrecompiledHeader},
	{argv("g++ -c all.hpp -o all.hpp.gch"), ReasonPrecompiledHeader},
	{argv("clang -include-pch pch.h.pch -c a.c -o a.o"), ReasonPrecompiledHeader},
	{argv("gcc -fpch-preprocess -c a.c -o a.o"), ReasonPrecompiledHeader},
	{argv("g++ -std=c++20 -c mod.cppm -o mod.o"), ReasonModuleInterface},
	{argv("g++ -x c++ -c mod.ixx -o mod.o"), ReasonModuleInterface},
	{argv("clang++ -x c++-module -c m.cc -o m.o"), ReasonModuleInterface},
	{argv("g++ -fmodules-ts -c a.cc -o a.o"), ReasonModules},
	{argv("clang++ -fmodules -c a.cc -o a.o"), ReasonModules},
	{argv("clang++ -fmodule-file=a=a.pcm -c a.cc -o a.o"), ReasonModules},
	{argv("g++ -fmodule-mapper=|cat -c a.cc -o a.o"), ReasonModules},
	{argv("clang++ -fmodule-output -c a.cc -o a.o"), ReasonModuleOutput},
	{argv("clang++ -fmodule-output=a.pcm -c a.cc -o a.o"), ReasonModuleOutput},
	{argv("clang++ --precompile -c a.cc -o a.pcm"), ReasonPrecompile},
	{argv("gcc -save-temps -c a.c -o a.o"), ReasonSaveTemps},
	{argv("gcc -save-temps=obj -c a.c -o a.o"), ReasonSaveTemps},
	{argv("gcc --save-temps -c a.c -o a.o"), ReasonSaveTemps},
	{argv("gcc -fdump-tree-all -c a.c -o a.o"), ReasonDumps},
	{argv("gcc -fdump-rtl-expand -c a.c -o a.o"), ReasonDumps},
	{argv("gcc -da -c a.c -o a.o"), ReasonDumps},
	{argv("gcc -dM -c a.c -o a.o"), ReasonDumps},
	{argv("gcc -dumpdir out/ -c a.c -o a.o"), ReasonDumpNaming},
	{argv("gcc -dumpbase x -c a.c -o a.o"), ReasonDumpNaming},
	{argv("gcc -gsplit-dwarf -c a.c -o a.o"), ReasonSplitDwarf},
	{argv("gcc -ftest-coverage -c a.c -o a.o"), ReasonCoverage},
	{argv("gcc --coverage -c a.c -o a.o"), ReasonCoverage},
	{argv("clang -fcoverage-mapping -c a.c -o a.o"), ReasonCoverage},
	{argv("gcc -fprofile-arcs -c a.c -o a.o"), ReasonProfile},
	{argv("gcc -fprofile-generate -c a.c -o a.o"), ReasonProfile},
	{argv("gcc -fprofile-use=prof -c a.c -o a.o"), ReasonProfile},
	{argv("clang -fprofile-instr-generate -c a.c -o a.o"), ReasonProfile},
	{argv("gcc -fauto-profile=x.afdo -c a.c -o a.o"), ReasonProfile},
	{argv("gcc -fbranch-probabilities -c a.c -o a.o"), ReasonProfile},
	{argv("gcc -fstack-usage -c a.c -o a.o"), ReasonStackUsage},
	{argv("gcc -fcallgraph-info -c a.c -o a.o"), ReasonCallgraphInfo},
	{argv("gcc -fcallgraph-info=su -c a.c -o a.o"), ReasonCallgraphInfo},
	{argv("gcc -aux-info protos.h -c a.c -o a.o"), ReasonAuxInfo},
	{argv("clang -ftime-trace -c a.c -o a.o"), ReasonTimeTrace},
	{argv("clang -fsave-optimization-record -c a.c -o a.o"), ReasonOptRecord},
	{argv("clang -foptimization-record-file=x.yaml -c a.c -o a.o"), ReasonOptRecord},
	{argv("clang -MJ a.json -c a.c -o a.o"), ReasonCompilationDB},
	{argv("clang --serialize-diagnostics a.dia -c a.c -o a.o"), ReasonSerializedDiags},
	{argv("gcc -fcompare-debug -c a.c -o a.o"), ReasonCompareDebug},
	{argv("gcc -fopt-info-vec-missed=vec.txt -c a.c -o a.o"), ReasonSecondOutput},
	{argv("gcc -frepo -c a.c -o a.o"), ReasonSecondOutput},
	{argv("gcc -fdiagnostics-format=sarif-file -c a.c -o a.o"), ReasonSecondOutput},
	{argv("clang -arch x86_64 -arch arm64 -c a.c -o a.o"), ReasonMultipleArch},
	{argv("clang -Xclang -load -Xclang x.so -c a.c -o a.o"), ReasonXclang},
	{argv("clang -Xclang -ast-dump -c a.c -o a.o"), ReasonXclang},
	{argv("gcc -Xclang -load -c a.c -o a.o"), ReasonXclang},
	{argv("clang -Xarch_x86_64 -O3 -c a.c -o a.o"), ReasonToolPassthrough},
	{argv("clang -Xopenmp-target -march=sm_70 -c a.c -o a.o"), ReasonToolPassthrough},
	{argv("gcc -Wp,-MD,.a.o.d -c a.c -o a.o"), ReasonPreprocessorOpt},
	{argv("gcc -Xpreprocessor -dD -c a.c -o a.o"), ReasonPreprocessorOpt},
	{argv("gcc -Wa,-adhln=a.lst -c a.c -o a.o"), ReasonAssemblerOutput},
	{argv("gcc -Xassembler --MD -Xassembler a.d -c a.S -o a.o"), ReasonAssemblerOutput},
	{argv("gcc -B/tmp -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("gcc -B prefix -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("gcc -specs=x.specs -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("gcc --specs x.specs -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("gcc -wrapper gdb,--args -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("clang --gcc-toolchain=/opt/gcc -c a.c -o a.o"), ReasonToolchainRedirect},
	{argv("gcc -fplugin=x.so -c a.c -o a.o"), ReasonPlugin},
	{argv("gcc -fplugin-arg-x-y=z -c a.c -o a.o"), ReasonPlugin},
	{argv("clang -fpass-plugin=x.so -c a.c -o a.o"), ReasonPlugin},
	{argv("clang --config=x.cfg -c a.c -o a.o"), ReasonConfigFile},
	{argv("clang -working-directory /x -c a.c -o a.o"), ReasonWorkingDirectory},
	{argv("clang -ivfsoverlay o.yaml -c a.c -o a.o"), ReasonVFSOverlay},
	{argv("clang -fsanitize=cfi -fsanitize-ignorelist=x.txt -c a.c -o a.o"), ReasonInstrumentList},
	{argv("gcc -march=native -c a.c -o a.o"), ReasonHostCPU},
	{argv("clang -mcpu=native -c a.c -o a.o"), ReasonHostCPU},
	{argv("gcc -c a.c -o a.o -MF a.d"), ReasonDepWithoutMD},
	{argv("gcc -c a.c -o a.o -MT x"), ReasonDepWithoutMD},
	{argv("gcc -c a.c -o a.o -MP"), ReasonDepWithoutMD},
	{argv("gcc -c a.c -o a.o -MD -MG"), ReasonDepMissingHeaders},
	{argv("gcc -c a.c -o a.o -MMD -MF -"), ReasonDepToStdout},
	{argv("gcc --version"), ReasonInformation},
	{argv("gcc -dumpmachine"), ReasonInformation},
	{argv("gcc -print-prog-name=cc1"), ReasonInformation},
	{argv("gcc -### -c a.c -o a.o"), ReasonInformation},
	{argv("gcc --help=optimizers"), ReasonInformation},
	{argv("gcc -v -c a.c -o a.o"), ReasonVerbose},
	{argv("gcc -Q -c a.c -o a.o"), ReasonVerbose},
	{argv("gcc -ftime-report -c a.c -o a.o"), ReasonStatistics},
	{argv("gcc -time -c a.c -o a.o"), ReasonStatistics},
	{argv("gcc -H -c a.c -o a.o"), ReasonHeaderTrace},
	{argv("gcc -fpreprocessed -c a.c -o a.o"), ReasonPreprocessorMode},
	{argv("gcc -fdirectives-only -c a.c -o a.o"), ReasonPreprocessorMode},
	{argv("gcc -I<SRCROOT>/include -c a.c -o a.o"), ReasonAmbiguousToken},
	{argv("gcc -c <BUILDTREE>/a.c -o a.o"), ReasonAmbiguousToken},
	{argv("gcc -gtoggle -c a.c -o a.o"), ReasonUnsupportedOption},
	{argv("gcc --resource x -c a.c -o a.o"), ReasonUnsupportedOption},
	// gcc's long spellings, read as gcc reads them (--X is -fX, --warn-X is -WX, ...)
	{argv("gcc --plugin=x.so -c a.c -o a.o"), ReasonPlugin},
	{argv("gcc --dump-tree-all -c a.c -o a.o"), ReasonDumps},
	{argv("gcc --profile-arcs -c a.c -o a.o"), ReasonProfile},
	{argv("gcc --test-coverage -c a.c -o a.o"), ReasonCoverage},
	{argv("gcc --debug=split-dwarf -c a.c -o a.o"), ReasonSplitDwarf},
	{argv("gcc --warn-a,-adhln=x.lst -c a.c -o a.o"), ReasonAssemblerOutput},
	{argv("gcc --machine-arch=native -c a.c -o a.o"), ReasonHostCPU},
	{argv("gcc --machine=arch=native -c a.c -o a.o"), ReasonHostCPU},
	{argv("gcc --machine arch=native -c a.c -o a.o"), ReasonHostCPU},
	{argv("gcc --time -c a.c -o a.o"), ReasonStatistics},
	{argv("gcc --trace-includes -c a.c -o a.o"), ReasonHeaderTrace},
}

func TestPassthroughReasons(t *testing.T) {
	for _, tc := range passthroughLines {
		_, err := classifyLine(t, tc.line, false)
		var pe *PassthroughError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPassthrough) {
			t.Errorf("Classify(%q) = %v, want passthrough %q", tc.line, err, tc.reason)
			continue
		}
		if pe.Reason != tc.reason {
			t.Errorf("Classify(%q) reason %q, want %q", tc.line, pe.Reason, tc.reason)
		}
	}
}

// Every Reason declared in reasons.go has at least one command line above: a reason nobody
// can trigger is dead, and a new reason must come with its test.
func TestEveryReasonIsExercised(t *testing.T) {
	declared := declaredReasons(t)
	covered := map[Reason]bool{}
	for _, tc := range passthroughLines {
		covered[tc.reason] = true
	}
	for _, tc := range listingRefusals {
		covered[tc.reason] = true
	}
	for _, r := range declared {
		if !covered[r] {
			t.Errorf("reason %q has no passthrough test line", r)
		}
	}
	if len(declared) < 60 {
		t.Errorf("found only %d reasons in reasons.go; the parse went wrong", len(declared))
	}
}

func declaredReasons(t *testing.T) []Reason {
	t.Helper()
	f, err := parser.ParseFile(gotoken.NewFileSet(), "reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Reason
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || fmtIdent(vs.Type) != "Reason" {
			return true
		}
		for _, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, Reason(s))
			}
		}
		return true
	})
	return out
}

func fmtIdent(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// The reason strings are counted by name in statistics: each must be distinct.
func TestReasonsAreDistinct(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range declaredReasons(t) {
		if seen[r] {
			t.Errorf("reason %q declared twice", r)
		}
		seen[r] = true
	}
}
