package ccargs

import "strings"

// outputFileRows write a file beside the object: a hit could not reproduce it.
var outputFileRows = []option{
	passRow("-save-temps", flagArity, ReasonSaveTemps),
	passRow("-save-temps=", joined, ReasonSaveTemps),
	passRow("--save-temps", flagArity, ReasonSaveTemps),
	passRow("-fdump-", joined, ReasonDumps),
	checked(row("-d", joined, roleOther), checkDumpLetters),
	passRow("--dump", eqOrSeparate, ReasonDumps),
	passRow("-dumpbase", separate, ReasonDumpNaming),
	passRow("-dumpbase-ext", separate, ReasonDumpNaming),
	passRow("-dumpdir", separate, ReasonDumpNaming),
	passRow("--dumpbase", eqOrSeparate, ReasonDumpNaming),
	passRow("--dumpbase-ext", eqOrSeparate, ReasonDumpNaming),
	passRow("--dumpdir", eqOrSeparate, ReasonDumpNaming),
	passRow("-gsplit-dwarf", flagArity, ReasonSplitDwarf),
	passRow("-gsplit-dwarf=", joined, ReasonSplitDwarf),
	passRow("-fstack-usage", flagArity, ReasonStackUsage),
	passRow("-fcallgraph-info", flagArity, ReasonCallgraphInfo),
	passRow("-fcallgraph-info=", joined, ReasonCallgraphInfo),
	passRow("-aux-info", eqOrSeparate, ReasonAuxInfo),
	clangOnly(passRow("-ftime-trace", flagArity, ReasonTimeTrace)),
	clangOnly(passRow("-ftime-trace=", joined, ReasonTimeTrace)),
	passRow("-fsave-optimization-record", flagArity, ReasonOptRecord),
	passRow("-fsave-optimization-record=", joined, ReasonOptRecord),
	passRow("-foptimization-record-file=", joined, ReasonOptRecord),
	checked(row("-fopt-info", joined, roleOther), checkOptInfo),
	clangOnly(passRow("--serialize-diagnostics", separate, ReasonSerializedDiags)),
	passRow("-fcompare-debug", flagArity, ReasonCompareDebug),
	passRow("-fcompare-debug=", joined, ReasonCompareDebug),
	passRow("-fcompare-debug-second", flagArity, ReasonCompareDebug),
	passRow("-frepo", flagArity, ReasonSecondOutput),
	passRow("-Hd", joinedOrSeparate, ReasonSecondOutput),
	passRow("-Hf", joinedOrSeparate, ReasonSecondOutput),
	passRow("-J", joinedOrSeparate, ReasonSecondOutput),
	checked(row("-fdiagnostics-format=", joined, roleOther), checkDiagnosticsFormat),
}

// profileRows instrument for, or read, profiles and coverage data: the object then names its
// own path, or depends on a data file the preprocessor never reports.
var profileRows = []option{
	passRow("-ftest-coverage", flagArity, ReasonCoverage),
	passRow("--coverage", flagArity, ReasonCoverage),
	passRow("-coverage", flagArity, ReasonCoverage),
	passRow("-fcoverage-", joined, ReasonCoverage),
	passRow("-fprofile-", joined, ReasonProfile),
	passRow("-fauto-profile", joined, ReasonProfile),
	passRow("-fbranch-probabilities", flagArity, ReasonProfile),
	clangOnly(passRow("-fcs-profile-generate", joined, ReasonProfile)),
}

// infoRows make the driver print something rather than compile, or decorate its stderr with
// what differs from run to run.
var infoRows = []option{
	passRow("--help", joined, ReasonInformation),
	passRow("--target-help", flagArity, ReasonInformation),
	passRow("--version", flagArity, ReasonInformation),
	passRow("-dumpversion", flagArity, ReasonInformation),
	passRow("-dumpfullversion", flagArity, ReasonInformation),
	passRow("-dumpmachine", flagArity, ReasonInformation),
	passRow("-dumpspecs", flagArity, ReasonInformation),
	passRow("-print-", joined, ReasonInformation),
	passRow("--print-", joined, ReasonInformation),
	passRow("-###", flagArity, ReasonInformation),
	passRow("-v", flagArity, ReasonVerbose),
	passRow("--verbose", flagArity, ReasonVerbose),
	passRow("-Q", flagArity, ReasonVerbose),
	passRow("-time", joined, ReasonStatistics),
	passRow("-ftime-report", joined, ReasonStatistics),
	passRow("-fmem-report", joined, ReasonStatistics),
	passRow("-fstats", flagArity, ReasonStatistics),
	passRow("-fpre-ipa-mem-report", flagArity, ReasonStatistics),
	passRow("-fpost-ipa-mem-report", flagArity, ReasonStatistics),
	passRow("-H", flagArity, ReasonHeaderTrace),
	passRow("--trace-includes", flagArity, ReasonHeaderTrace),
}

// moduleRows: C++ modules read and write interface files no depfile describes.
var moduleRows = []option{
	passRow("-fmodules", joined, ReasonModules),
	passRow("-fmodule-", joined, ReasonModules),
	passRow("-fmodule-output", joined, ReasonModuleOutput),
	clangOnly(passRow("--precompile", flagArity, ReasonPrecompile)),
	clangOnly(passRow("-fcxx-modules", flagArity, ReasonModules)),
	passRow("-fprebuilt-module-path=", joined, ReasonModules),
	passRow("-fimplicit-module", joined, ReasonModules),
	passRow("-fpch-preprocess", flagArity, ReasonPrecompiledHeader),
	passRow("--output-pch", eqOrSeparate, ReasonPrecompiledHeader),
	clangOnly(passRow("-emit-pch", flagArity, ReasonPrecompiledHeader)),
}

// checkDumpLetters: -dA, -dp and -dP only annotate assembler output; every other -d letter
// dumps compiler internals to files, or turns preprocessed output into something else.
func checkDumpLetters(letters string) Reason {
	if letters == "" || strings.Trim(letters, "ApP") != "" {
		return ReasonDumps
	}
	return ""
}

// checkOptInfo: -fopt-info[-kind] reports on stderr; with =file it writes a file.
func checkOptInfo(v string) Reason {
	if strings.Contains(v, "=") {
		return ReasonSecondOutput
	}
	return ""
}

func checkDiagnosticsFormat(v string) Reason {
	if strings.HasSuffix(v, "-file") {
		return ReasonSecondOutput
	}
	return ""
}

// xclangSafe are the -Xclang values with no effect beyond what the key already captures.
var xclangSafe = map[string]bool{
	"-fcolor-diagnostics": true, "-fno-color-diagnostics": true, "-fno-pch-timestamp": true,
	"-disable-llvm-verifier": true, "-discard-value-names": true,
	"-fdiagnostics-show-option": true, "-fno-diagnostics-show-option": true,
}

func checkXclang(v string) Reason {
	if xclangSafe[v] {
		return ""
	}
	return ReasonXclang
}

// checkAssemblerArgs refuses assembler options that write a file of their own: listings
// (-a...=file), the assembler's dependency file (--MD) and an output (-o).
func checkAssemblerArgs(v string) Reason {
	for _, part := range strings.Split(v, ",") {
		switch {
		case strings.HasPrefix(part, "-a") && strings.Contains(part, "="),
			strings.HasPrefix(part, "--MD"), strings.HasPrefix(part, "-o"),
			strings.HasPrefix(part, "@"):
			return ReasonAssemblerOutput
		}
	}
	return ""
}
