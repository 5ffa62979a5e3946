package argvet

// The GNU allowlist (gcc, g++, cc, c++, clang, clang++), rows spelled without the introducer.
// Categories follow pace-wire §3.10. Every -f row is an exact option name: either bare, or
// valued with a closed value shape (a number, an enumerated keyword, a list of keywords). No
// -f row is a prefix; a test holds that.

func gnuOptimisation() []row { return exact("O", "O0", "O1", "O2", "O3", "Ofast", "Og", "Os", "Oz") }

func gnuLanguage() []row {
	return append(prefixes("std="), exact("ansi", "pedantic", "pedantic-errors")...)
}

func gnuDefines() []row { return append(prefixes("D", "U"), exact("undef")...) }

// -W is a prefix (its denied siblings Wa, Wl, Wp, are refused before); bare -W is -Wextra.
func gnuWarnings() []row { return append(prefixes("W"), exact("W", "w")...) }

func gnuMachine() []row { return prefixes("m") }

func gnuDebug() []row {
	return exact(
		"g", "g0", "g1", "g2", "g3", "ggdb", "ggdb0", "ggdb1", "ggdb2", "ggdb3",
		"gdwarf", "gdwarf-2", "gdwarf-3", "gdwarf-4", "gdwarf-5", "gdwarf32", "gdwarf64",
		"gline-tables-only", "gline-directives-only", "gmlt", "gcolumn-info", "gno-column-info",
		"gstrict-dwarf", "gno-strict-dwarf", "gpubnames", "gno-pubnames", "ggnu-pubnames",
		"gcodeview", "grecord-gcc-switches", "gno-record-gcc-switches", "gz", "gz=none",
		"gz=zlib", "gz=zstd", "gvariable-location-views", "gno-variable-location-views",
		"ginline-points", "gno-inline-points", "gstatement-frontiers", "gno-statement-frontiers",
		"gdescribe-dies", "gno-describe-dies", "gbtf", "gctf", "p", "pg",
	)
}

func gnuMisc() []row {
	return exact(
		"Qunused-arguments", "c", "pthread", "pipe", "trigraphs", "nostdinc", "nostdinc++",
	)
}

// gnuParam() is --param NAME=VALUE, joined (one introducer stripped leaves "-param=").
func gnuParam() []row { return []row{withValue("-param=", isParam)} }

func sanitizerNames() func(string) bool {
	return oneOf(
		"address", "kernel-address", "hwaddress", "kernel-hwaddress", "pointer-compare",
		"pointer-subtract", "shadow-call-stack", "thread", "leak", "undefined", "vptr", "shift",
		"shift-exponent", "shift-base", "integer-divide-by-zero", "unreachable", "vla-bound",
		"null", "return", "signed-integer-overflow", "bounds", "bounds-strict", "alignment",
		"object-size", "float-divide-by-zero", "float-cast-overflow", "nonnull-attribute",
		"returns-nonnull-attribute", "bool", "enum", "builtin", "pointer-overflow", "memory",
		"dataflow", "cfi", "cfi-cast-strict", "cfi-derived-cast", "cfi-unrelated-cast",
		"cfi-nvcall", "cfi-vcall", "cfi-icall", "cfi-mfcall", "safe-stack", "fuzzer",
		"fuzzer-no-link", "function", "implicit-conversion", "implicit-integer-truncation",
		"implicit-integer-sign-change", "implicit-signed-integer-truncation",
		"implicit-unsigned-integer-truncation", "integer", "nullability", "nullability-arg",
		"nullability-assign", "nullability-return", "local-bounds", "array-bounds",
		"unsigned-integer-overflow", "unsigned-shift-base", "scudo", "kcfi", "memtag",
		"memtag-stack", "memtag-heap", "memtag-globals", "realtime", "all",
	)
}

func sanitizerCoverage() func(string) bool {
	return oneOf(
		"func", "bb", "edge", "indirect-calls", "trace-bb", "trace-cmp", "trace-div", "trace-gep",
		"trace-pc", "trace-pc-guard", "no-prune", "inline-8bit-counters", "inline-bool-flag",
		"pc-table", "stack-depth", "trace-loads", "trace-stores", "control-flow",
	)
}

// gnuFValued() are the -f options with values, each with its value's shape.
func gnuFValued() []row {
	return []row{
		withValue("fvisibility=", oneOf("default", "hidden", "internal", "protected")),
		withValue("ffp-contract=", oneOf("off", "on", "fast", "fast-honor-pragmas")),
		withValue("fabi-version=", isUint),
		withValue("fabi-compat-version=", isUint),
		withValue("fms-compatibility-version=", isWord),
		withValue("ftemplate-depth=", isUint),
		withValue("fconstexpr-depth=", isUint),
		withValue("fconstexpr-steps=", isUint),
		withValue("fconstexpr-loop-limit=", isUint),
		withValue("fconstexpr-ops-limit=", isUint),
		withValue("fbracket-depth=", isUint),
		withValue("ftemplate-backtrace-limit=", isUint),
		withValue("fconstexpr-backtrace-limit=", isUint),
		withValue("fmacro-backtrace-limit=", isUint),
		withValue("fmax-errors=", isUint),
		withValue("ferror-limit=", isUint),
		withValue("fmessage-length=", isUint),
		withValue("ftabstop=", isUint),
		withValue("fdiagnostics-color=", oneOf("always", "never", "auto")),
		withValue("fdiagnostics-format=", oneOf("text", "json", "json-stderr", "sarif-stderr")),
		withValue("fdiagnostics-urls=", oneOf("always", "never", "auto")),
		withValue("fdiagnostics-column-unit=", oneOf("byte", "display")),
		withValue("fdiagnostics-path-format=", oneOf("none", "separate-events", "inline-events")),
		withValue("fdiagnostics-minimum-margin-width=", isUint),
		withValue("fsanitize=", listOf(sanitizerNames())),
		withValue("fno-sanitize=", listOf(sanitizerNames())),
		withValue("fsanitize-recover=", listOf(sanitizerNames())),
		withValue("fno-sanitize-recover=", listOf(sanitizerNames())),
		withValue("fsanitize-trap=", listOf(sanitizerNames())),
		withValue("fno-sanitize-trap=", listOf(sanitizerNames())),
		withValue("fsanitize-coverage=", listOf(sanitizerCoverage())),
		withValue("fsanitize-address-use-after-return=", oneOf("never", "runtime", "always")),
		withValue("fsanitize-memory-track-origins=", isUint),
		withValue("flto=", either(oneOf("auto", "jobserver", "thin", "full"), isUint)),
		withValue("flto-partition=", oneOf("1to1", "balanced", "max", "one", "none")),
		withValue("fexcess-precision=", oneOf("fast", "standard", "16")),
		withValue("fcf-protection=", oneOf("full", "branch", "return", "none", "check")),
		withValue("ftls-model=", oneOf("global-dynamic", "local-dynamic", "initial-exec", "local-exec")),
		withValue("fstack-reuse=", oneOf("all", "named_vars", "none")),
		withValue("ftrivial-auto-var-init=", oneOf("zero", "pattern", "uninitialized")),
		withValue("fzero-call-used-regs=", oneOf("skip", "used", "all", "used-gpr", "all-gpr",
			"used-arg", "all-arg", "used-gpr-arg", "all-gpr-arg", "leafy", "leafy-gpr", "leafy-arg",
			"leafy-gpr-arg")),
		withValue("fvect-cost-model=", oneOf("unlimited", "dynamic", "cheap", "very-cheap")),
		withValue("fsimd-cost-model=", oneOf("unlimited", "dynamic", "cheap", "very-cheap")),
		withValue("fpack-struct=", isUint),
		withValue("falign-functions=", isUint),
		withValue("falign-loops=", isUint),
		withValue("falign-jumps=", isUint),
		withValue("falign-labels=", isUint),
		withValue("fstrict-flex-arrays=", isUint),
		withValue("fpatchable-function-entry=", listOf(isUint)),
		withValue("frandom-seed=", isWord),
		withValue("finput-charset=", isWord),
		withValue("fexec-charset=", isWord),
		withValue("fwide-exec-charset=", isWord),
		withValue("fopenmp=", oneOf("libomp", "libgomp", "libiomp5")),
		withValue("fembed-bitcode=", oneOf("all", "bitcode", "marker", "off")),
		withValue("fdebug-default-version=", isUint),
		withValue("fsanitize-address-field-padding=", isUint),
	}
}
