package ccargs

import "sync"

// The command-line table of the GNU drivers (gcc 12 and clang), checked against gcc 12's
// driver: every option listed as taking a value consumes the next argument when spelled bare
// (verified with gcc -###). Options not in the table are kept verbatim and take no value.

func row(name string, a arity, r role) option { return option{name: name, arity: a, role: r} }

func pathRow(name string, a arity, r role) option {
	o := row(name, a, r)
	o.path = true
	return o
}

func passRow(name string, a arity, reason Reason) option {
	return option{name: name, arity: a, reason: reason}
}

func clangOnly(o option) option { o.clang = true; return o }

func aliased(o option, alias string) option { o.alias = alias; return o }

func checked(o option, check func(string) Reason) option { o.check = check; return o }

// gnuOptions is built on first use: pace-cc's front binary links this package for driver
// names and roots only, and a process that never parses arguments should not pay for the index.
var gnuOptions = sync.OnceValue(func() optionIndex {
	return newOptionIndex(concatRows(
		stageRows, dependencyRows, includeRows, valueRows, linkRows, mapRows,
		toolchainRows, outputFileRows, profileRows, infoRows, moduleRows,
	))
})

func concatRows(groups ...[]option) []option {
	var out []option
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var stageRows = []option{
	row("-o", joinedOrSeparate, roleOutput),
	aliased(row("--output", eqOrSeparate, roleOutput), "-o"),
	row("-c", flagArity, roleCompile),
	aliased(row("--compile", flagArity, roleCompile), "-c"),
	row("-S", flagArity, roleAssemble),
	aliased(row("--assemble", flagArity, roleAssemble), "-S"),
	row("-x", joinedOrSeparate, roleLanguage),
	aliased(row("--language", eqOrSeparate, roleLanguage), "-x"),
	passRow("-E", flagArity, ReasonPreprocessOnly),
	passRow("--preprocess", flagArity, ReasonPreprocessOnly),
	// A dependency listing is not a compile; ClassifyListing caches it (pace-wire §3.6.2).
	row("-M", flagArity, roleListAll),
	aliased(row("--dependencies", flagArity, roleListAll), "-M"),
	row("-MM", flagArity, roleListUser),
	aliased(row("--user-dependencies", flagArity, roleListUser), "-MM"),
	passRow("-fsyntax-only", flagArity, ReasonSyntaxOnly),
	clangOnly(passRow("--analyze", flagArity, ReasonStaticAnalysis)),
	row("-P", flagArity, roleNoLineMarks),
	row("--no-line-commands", flagArity, roleNoLineMarks),
	clangOnly(aliased(row("-target", separate, roleTarget), "--target=")),
	clangOnly(row("--target=", joined, roleTarget)),
	clangOnly(row("-arch", separate, roleArch)),
	clangOnly(row("-emit-llvm", flagArity, roleOther)),
	aliased(row("--param", eqOrSeparate, roleOther), "--param="),
	aliased(row("--std", eqOrSeparate, roleOther), "-std="),
	checked(aliased(row("--machine", eqOrSeparate, roleOther), "-m"), checkMachineValue),
	passRow("--resource", eqOrSeparate, ReasonUnsupportedOption),
	clangOnly(row("-mllvm", separate, roleOther)),
	checked(row("-Xclang", separate, roleXclang), checkXclang),
	checked(row("-Wa,", joined, roleAssembler), checkAssemblerArgs),
	checked(row("-Xassembler", separate, roleAssembler), checkAssemblerArgs),
	checked(aliased(row("--for-assembler", eqOrSeparate, roleAssembler), "-Wa,"), checkAssemblerArgs),
}

var dependencyRows = []option{
	row("-MD", flagArity, roleDepMD),
	row("--write-dependencies", flagArity, roleDepMD),
	row("-MMD", flagArity, roleDepMMD),
	row("--write-user-dependencies", flagArity, roleDepMMD),
	row("-MF", joinedOrSeparate, roleDepFile),
	row("-MT", joinedOrSeparate, roleDepTarget),
	row("-MQ", joinedOrSeparate, roleDepQuoted),
	row("-MP", flagArity, roleDepPhony),
	passRow("-MG", flagArity, ReasonDepMissingHeaders),
	passRow("--print-missing-file-dependencies", flagArity, ReasonDepMissingHeaders),
	clangOnly(passRow("-MJ", joinedOrSeparate, ReasonCompilationDB)),
}

// includeRows are the path-valued preprocessor options.
var includeRows = []option{
	pathRow("-I", joinedOrSeparate, rolePreproc),
	aliased(pathRow("--include-directory", eqOrSeparate, rolePreproc), "-I"),
	pathRow("-iquote", joinedOrSeparate, rolePreproc),
	pathRow("-isystem", joinedOrSeparate, rolePreproc),
	pathRow("-idirafter", joinedOrSeparate, rolePreproc),
	aliased(pathRow("--include-directory-after", eqOrSeparate, rolePreproc), "-idirafter"),
	pathRow("-include", joinedOrSeparate, rolePreproc),
	aliased(pathRow("--include", eqOrSeparate, rolePreproc), "-include"),
	pathRow("-imacros", joinedOrSeparate, rolePreproc),
	aliased(pathRow("--imacros", eqOrSeparate, rolePreproc), "-imacros"),
	pathRow("-iprefix", joinedOrSeparate, rolePreproc),
	aliased(pathRow("--include-prefix", eqOrSeparate, rolePreproc), "-iprefix"),
	pathRow("--sysroot", eqOrSeparate, rolePreproc),
	pathRow("-isysroot", joinedOrSeparate, rolePreproc),
	pathRow("-F", joinedOrSeparate, rolePreproc),
	clangOnly(pathRow("-iframework", joinedOrSeparate, rolePreproc)),
	clangOnly(pathRow("-isystem-after", joinedOrSeparate, rolePreproc)),
	clangOnly(pathRow("-cxx-isystem", joinedOrSeparate, rolePreproc)),
	clangOnly(pathRow("-iwithsysroot", joinedOrSeparate, rolePreproc)),
	row("--include-barrier", flagArity, rolePreproc),
	row("-nostdinc", flagArity, rolePreproc),
	row("-nostdinc++", flagArity, rolePreproc),
	row("--no-standard-includes", flagArity, rolePreproc),
	row("-undef", flagArity, rolePreproc),
	row("-C", flagArity, rolePreproc),
	row("-CC", flagArity, rolePreproc),
	row("--comments", flagArity, rolePreproc),
	row("--comments-in-macros", flagArity, rolePreproc),
	clangOnly(passRow("-include-pch", joinedOrSeparate, ReasonPrecompiledHeader)),
	clangOnly(passRow("-ivfsoverlay", joinedOrSeparate, ReasonVFSOverlay)),
}

// valueRows take a value that is not a path but only matters to the preprocessor.
var valueRows = []option{
	row("-D", joinedOrSeparate, rolePreproc),
	aliased(row("--define-macro", eqOrSeparate, rolePreproc), "-D"),
	row("-U", joinedOrSeparate, rolePreproc),
	aliased(row("--undefine-macro", eqOrSeparate, rolePreproc), "-U"),
	row("-A", joinedOrSeparate, rolePreproc),
	row("--assert", eqOrSeparate, rolePreproc),
	row("-iwithprefix", joinedOrSeparate, rolePreproc),
	row("-iwithprefixbefore", joinedOrSeparate, rolePreproc),
	row("--include-with-prefix", eqOrSeparate, rolePreproc),
	row("--include-with-prefix-before", eqOrSeparate, rolePreproc),
	row("--include-with-prefix-after", eqOrSeparate, rolePreproc),
	row("-imultilib", joinedOrSeparate, rolePreproc),
	row("-imultiarch", joinedOrSeparate, rolePreproc),
}

// linkRows only matter to a link; with -c or -S the driver ignores them.
var linkRows = []option{
	pathRow("-L", joinedOrSeparate, roleLinkOnly),
	pathRow("--library-directory", eqOrSeparate, roleLinkOnly),
	row("-l", joinedOrSeparate, roleLinkOnly),
	row("-u", joinedOrSeparate, roleLinkOnly),
	row("--force-link", eqOrSeparate, roleLinkOnly),
	pathRow("-T", joinedOrSeparate, roleLinkOnly),
	row("-e", joinedOrSeparate, roleLinkOnly),
	row("--entry", eqOrSeparate, roleLinkOnly),
	row("-z", joinedOrSeparate, roleLinkOnly),
	row("-R", joinedOrSeparate, roleLinkOnly),
	row("-h", joinedOrSeparate, roleLinkOnly),
	row("-Wl,", joined, roleLinkOnly),
	row("-Xlinker", separate, roleLinkOnly),
	row("--for-linker", eqOrSeparate, roleLinkOnly),
	row("-static", flagArity, roleLinkOnly),
	row("-shared", flagArity, roleLinkOnly),
	row("-rdynamic", flagArity, roleLinkOnly),
	row("-s", flagArity, roleLinkOnly),
	row("-pie", flagArity, roleLinkOnly),
	row("-no-pie", flagArity, roleLinkOnly),
	row("-static-pie", flagArity, roleLinkOnly),
	row("-nostdlib", flagArity, roleLinkOnly),
	row("-nodefaultlibs", flagArity, roleLinkOnly),
	row("-nostartfiles", flagArity, roleLinkOnly),
	row("-static-libgcc", flagArity, roleLinkOnly),
	row("-static-libstdc++", flagArity, roleLinkOnly),
	row("-shared-libgcc", flagArity, roleLinkOnly),
	row("-symbolic", flagArity, roleLinkOnly),
}

// mapRows are the prefix maps (value OLD=NEW, split at the last '=' for relativization,
// pace-wire §3.3) and clang's compilation-directory overrides.
var mapRows = []option{
	row("-fdebug-prefix-map=", joined, roleDebugMap),
	row("-ffile-prefix-map=", joined, roleDebugMap),
	row("-fmacro-prefix-map=", joined, roleOtherMap),
	row("-fprofile-prefix-map=", joined, roleOtherMap),
	clangOnly(row("-fcoverage-prefix-map=", joined, roleOtherMap)),
	clangOnly(pathRow("-fdebug-compilation-dir=", joined, roleCompDir)),
	clangOnly(aliased(pathRow("-fdebug-compilation-dir", separate, roleCompDir), "-fdebug-compilation-dir=")),
	clangOnly(pathRow("-ffile-compilation-dir=", joined, roleCompDir)),
	clangOnly(pathRow("-fcoverage-compilation-dir=", joined, roleOther)),
	clangOnly(pathRow("-fcrash-diagnostics-dir=", joined, roleOther)),
}

// toolchainRows change which programs or code the driver runs, or how it reads its arguments.
var toolchainRows = []option{
	passRow("-B", joinedOrSeparate, ReasonToolchainRedirect),
	passRow("--prefix", eqOrSeparate, ReasonToolchainRedirect),
	passRow("-specs", eqOrSeparate, ReasonToolchainRedirect),
	passRow("--specs", eqOrSeparate, ReasonToolchainRedirect),
	passRow("-wrapper", separate, ReasonToolchainRedirect),
	passRow("-iplugindir=", joined, ReasonPlugin),
	passRow("-fplugin", joined, ReasonPlugin),
	clangOnly(passRow("-fpass-plugin=", joined, ReasonPlugin)),
	clangOnly(passRow("--gcc-toolchain=", joined, ReasonToolchainRedirect)),
	clangOnly(passRow("-gcc-toolchain", separate, ReasonToolchainRedirect)),
	clangOnly(passRow("--gcc-install-dir=", joined, ReasonToolchainRedirect)),
	clangOnly(passRow("--gcc-triple=", joined, ReasonToolchainRedirect)),
	clangOnly(passRow("-resource-dir", eqOrSeparate, ReasonToolchainRedirect)),
	clangOnly(passRow("-ccc-", joined, ReasonToolchainRedirect)),
	clangOnly(passRow("--config", eqOrSeparate, ReasonConfigFile)),
	clangOnly(passRow("-working-directory", eqOrSeparate, ReasonWorkingDirectory)),
	passRow("-Xpreprocessor", separate, ReasonPreprocessorOpt),
	passRow("-Wp,", joined, ReasonPreprocessorOpt),
	passRow("-X", joined, ReasonToolPassthrough), // -Xarch_*, -Xopenmp-target, -Xcuda-*, ...
	passRow("-fpreprocessed", flagArity, ReasonPreprocessorMode),
	passRow("-fdirectives-only", flagArity, ReasonPreprocessorMode),
	passRow("-traditional", flagArity, ReasonPreprocessorMode),
	passRow("-fsanitize-blacklist=", joined, ReasonInstrumentList),
	passRow("-fsanitize-ignorelist=", joined, ReasonInstrumentList),
	passRow("-fsanitize-system-", joined, ReasonInstrumentList),
	passRow("-fsanitize-coverage-allowlist=", joined, ReasonInstrumentList),
	passRow("-fsanitize-coverage-ignorelist=", joined, ReasonInstrumentList),
	passRow("-fsanitize-coverage-whitelist=", joined, ReasonInstrumentList),
	passRow("-fsanitize-coverage-blacklist=", joined, ReasonInstrumentList),
	clangOnly(passRow("-fxray-attr-list=", joined, ReasonInstrumentList)),
	clangOnly(passRow("-fxray-always-instrument=", joined, ReasonInstrumentList)),
	clangOnly(passRow("-fxray-never-instrument=", joined, ReasonInstrumentList)),
}
