package argvet

// gnuFBare() are the -f flags without values, one exact spelling each, grouped as
// pace-wire §3.10 lists them. A flag missing here costs a local compile and a rise of
// pace_worker_jobs_refused_rejected_argument_total; the fix is a new row, never a prefix.
func gnuFBare() []row {
	return exact(
		// position-independent code
		"fPIC", "fpic", "fPIE", "fpie", "fno-PIC", "fno-pic", "fno-PIE", "fno-pie",
		"fplt", "fno-plt", "fsemantic-interposition", "fno-semantic-interposition",
		"fdirect-access-external-data", "fno-direct-access-external-data",

		// exceptions and unwinding
		"fexceptions", "fno-exceptions", "fcxx-exceptions", "fno-cxx-exceptions",
		"fnon-call-exceptions", "fno-non-call-exceptions", "fasynchronous-unwind-tables",
		"fno-asynchronous-unwind-tables", "funwind-tables", "fno-unwind-tables",
		"fobjc-exceptions", "fno-objc-exceptions", "fenforce-eh-specs", "fno-enforce-eh-specs",
		"fnothrow-opt", "fno-nothrow-opt", "fdwarf2-cfi-asm", "fno-dwarf2-cfi-asm",

		// RTTI and C++ language switches
		"frtti", "fno-rtti", "fthreadsafe-statics", "fno-threadsafe-statics",
		"fsized-deallocation", "fno-sized-deallocation", "faligned-new", "fno-aligned-new",
		"fchar8_t", "fno-char8_t", "fcoroutines", "fno-coroutines", "fconcepts",
		"felide-constructors", "fno-elide-constructors", "fstrong-eval-order",
		"fno-strong-eval-order", "fpermissive", "fcheck-new", "fno-check-new",
		"fuse-cxa-atexit", "fno-use-cxa-atexit", "fgnu-unique", "fno-gnu-unique",
		"fimplicit-templates", "fno-implicit-templates", "fimplicit-inline-templates",
		"fno-implicit-inline-templates", "fvisibility-inlines-hidden",
		"fno-visibility-inlines-hidden", "fvisibility-ms-compat", "fno-operator-names",
		"fdelayed-template-parsing", "fno-delayed-template-parsing", "fno-access-control",
		"fnew-infallible", "fno-new-infallible", "fassume-sane-operator-new",
		"fno-assume-sane-operator-new", "fno-weak", "fweak", "fdeclspec", "fno-declspec",
		"fms-extensions", "fno-ms-extensions", "fms-compatibility", "fno-ms-compatibility",
		"fgnu-keywords", "fno-gnu-keywords", "fasm", "fno-asm", "fgnu89-inline",
		"fno-gnu89-inline", "fdollars-in-identifiers", "fno-dollars-in-identifiers",
		"fextended-identifiers", "fno-extended-identifiers", "fblocks", "fno-blocks",
		"fgnu-inline-asm", "fno-gnu-inline-asm", "fobjc-arc", "fno-objc-arc",
		"fobjc-arc-exceptions", "fno-objc-arc-exceptions",

		// floating point and math
		"ffast-math", "fno-fast-math", "fmath-errno", "fno-math-errno", "ffinite-math-only",
		"fno-finite-math-only", "funsafe-math-optimizations", "fno-unsafe-math-optimizations",
		"ftrapping-math", "fno-trapping-math", "fassociative-math", "fno-associative-math",
		"freciprocal-math", "fno-reciprocal-math", "fsigned-zeros", "fno-signed-zeros",
		"frounding-math", "fno-rounding-math", "fsingle-precision-constant", "ffloat-store",
		"fno-float-store", "fcx-limited-range", "fno-cx-limited-range", "fcx-fortran-rules",
		"fno-cx-fortran-rules", "fstrict-float-cast-overflow", "fno-strict-float-cast-overflow",
		"fhonor-infinities", "fno-honor-infinities", "fhonor-nans", "fno-honor-nans",
		"fapprox-func", "fno-approx-func",

		// stack protection and hardening
		"fstack-protector", "fstack-protector-strong", "fstack-protector-all",
		"fstack-protector-explicit", "fno-stack-protector", "fstack-clash-protection",
		"fno-stack-clash-protection", "fstack-check", "fno-stack-check", "fcf-protection",
		"fharden-compares", "fharden-conditional-branches", "fstack-size-section",
		"fno-stack-size-section", "fsplit-stack", "fno-split-stack", "ftrampolines",
		"fno-trampolines", "fzero-initialized-in-bss", "fno-zero-initialized-in-bss",

		// frame pointer and calls
		"fomit-frame-pointer", "fno-omit-frame-pointer", "foptimize-sibling-calls",
		"fno-optimize-sibling-calls", "finstrument-functions", "fno-instrument-functions",
		"fjump-tables", "fno-jump-tables",

		// sections, symbols and object layout
		"ffunction-sections", "fno-function-sections", "fdata-sections", "fno-data-sections",
		"funique-section-names", "fno-unique-section-names", "fcommon", "fno-common",
		"fident", "fno-ident", "fmerge-constants", "fno-merge-constants",
		"fmerge-all-constants", "fno-merge-all-constants", "fkeep-inline-functions",
		"fkeep-static-functions", "fkeep-static-consts", "fno-keep-static-consts",
		"ftoplevel-reorder", "fno-toplevel-reorder", "fpack-struct", "fshort-enums",
		"fno-short-enums", "fshort-wchar", "fno-short-wchar", "femulated-tls",
		"fno-emulated-tls", "faddrsig", "fno-addrsig", "fno-autolink",

		// link-time optimisation
		"flto", "fno-lto", "ffat-lto-objects", "fno-fat-lto-objects", "fuse-linker-plugin",
		"fno-use-linker-plugin", "fwhole-program-vtables", "fno-whole-program-vtables",
		"fsplit-lto-unit", "fno-split-lto-unit", "fembed-bitcode",

		// sanitizers without values
		"fsanitize-recover", "fno-sanitize-recover", "fsanitize-trap",
		"fsanitize-address-use-after-scope", "fno-sanitize-address-use-after-scope",
		"fsanitize-undefined-trap-on-error", "fno-sanitize-undefined-trap-on-error",
		"fsanitize-minimal-runtime", "fno-sanitize-minimal-runtime",
		"fsanitize-memory-track-origins", "fno-sanitize-memory-track-origins",
		"fsanitize-cfi-cross-dso", "fno-sanitize-cfi-cross-dso", "fsanitize-stats",
		"fsanitize-address-globals-dead-stripping", "fsanitize-address-poison-custom-array-cookie",
		"fsanitize-address-outline-instrumentation", "fsanitize-memory-use-after-dtor",
		"fno-sanitize-memory-use-after-dtor",

		// diagnostics
		"fdiagnostics-color", "fno-diagnostics-color", "fcolor-diagnostics",
		"fno-color-diagnostics", "fansi-escape-codes", "fdiagnostics-show-option",
		"fno-diagnostics-show-option", "fdiagnostics-show-caret", "fno-diagnostics-show-caret",
		"fdiagnostics-show-labels", "fno-diagnostics-show-labels",
		"fdiagnostics-show-line-numbers", "fno-diagnostics-show-line-numbers",
		"fdiagnostics-show-template-tree", "fno-diagnostics-show-template-tree",
		"felide-type", "fno-elide-type", "fdiagnostics-parseable-fixits",
		"fno-diagnostics-fixit-info", "fdiagnostics-fixit-info", "fdiagnostics-absolute-paths",
		"fno-diagnostics-absolute-paths", "fdiagnostics-show-cwe", "fno-diagnostics-show-cwe",
		"fdiagnostics-show-path-depths", "fno-diagnostics-show-path-depths",
		"fshow-column", "fno-show-column", "fcaret-diagnostics", "fno-caret-diagnostics",
		"fshow-source-location", "fno-show-source-location", "fdiagnostics-show-hotness",
		"fno-diagnostics-show-hotness", "fdiagnostics-show-note-include-stack",
		"fno-diagnostics-show-note-include-stack",

		// char, integer and aliasing semantics
		"fsigned-char", "fno-signed-char", "funsigned-char", "fno-unsigned-char",
		"fsigned-bitfields", "funsigned-bitfields", "fwrapv", "fno-wrapv", "fwrapv-pointer",
		"fno-wrapv-pointer", "ftrapv", "fno-trapv", "fstrict-aliasing", "fno-strict-aliasing",
		"fstrict-overflow", "fno-strict-overflow", "fstrict-enums", "fno-strict-enums",
		"fstrict-flex-arrays", "fno-strict-flex-arrays", "fstrict-volatile-bitfields",
		"fno-strict-volatile-bitfields", "fdelete-null-pointer-checks",
		"fno-delete-null-pointer-checks", "fisolate-erroneous-paths-dereference",
		"fno-isolate-erroneous-paths-dereference", "fallow-store-data-races",
		"fno-allow-store-data-races",

		// freestanding builds and builtins
		"fbuiltin", "fno-builtin", "ffreestanding", "fhosted",

		// parallelism
		"fopenmp", "fno-openmp", "fopenmp-simd", "fno-openmp-simd", "fopenacc", "fgnu-tm",

		// inlining and optimisation passes
		"finline", "fno-inline", "finline-functions", "fno-inline-functions",
		"finline-small-functions", "fno-inline-small-functions",
		"finline-functions-called-once", "fno-inline-functions-called-once",
		"fearly-inlining", "fno-early-inlining", "fdevirtualize", "fno-devirtualize",
		"fipa-pta", "fno-ipa-pta", "fipa-icf", "fno-ipa-icf", "fipa-cp-clone",
		"fno-ipa-cp-clone", "fipa-sra", "fno-ipa-sra", "fipa-ra", "fno-ipa-ra",
		"ftree-vectorize", "fno-tree-vectorize", "ftree-loop-vectorize",
		"fno-tree-loop-vectorize", "ftree-slp-vectorize", "fno-tree-slp-vectorize",
		"fvectorize", "fno-vectorize", "fslp-vectorize", "fno-slp-vectorize",
		"funroll-loops", "fno-unroll-loops", "funroll-all-loops", "fpeel-loops",
		"fno-peel-loops", "fprefetch-loop-arrays", "fno-prefetch-loop-arrays",
		"ftree-loop-distribute-patterns", "fno-tree-loop-distribute-patterns", "ftree-pre",
		"fno-tree-pre", "ftree-vrp", "fno-tree-vrp", "ftree-ch", "fno-tree-ch", "fgcse",
		"fno-gcse", "fgcse-after-reload", "fno-gcse-after-reload", "fschedule-insns",
		"fno-schedule-insns", "fschedule-insns2", "fno-schedule-insns2", "freorder-blocks",
		"fno-reorder-blocks", "freorder-blocks-and-partition",
		"fno-reorder-blocks-and-partition", "freorder-functions", "fno-reorder-functions",
		"falign-functions", "fno-align-functions", "falign-loops", "fno-align-loops",
		"falign-jumps", "fno-align-jumps", "falign-labels", "fno-align-labels",
		"fguess-branch-probability", "fno-guess-branch-probability",
		"fmove-loop-invariants", "fno-move-loop-invariants", "fpredictive-commoning",
		"fno-predictive-commoning", "fpeephole2", "fno-peephole2", "fexpensive-optimizations",
		"fno-expensive-optimizations", "fcse-follow-jumps", "fno-cse-follow-jumps",
		"fcrossjumping", "fno-crossjumping", "fthread-jumps", "fno-thread-jumps",
		"fif-conversion", "fno-if-conversion", "fif-conversion2", "fno-if-conversion2",
		"fcaller-saves", "fno-caller-saves", "fcode-hoisting", "fno-code-hoisting",
		"fversion-loops-for-strides", "fno-version-loops-for-strides", "fshrink-wrap",
		"fno-shrink-wrap", "fno-stack-arrays", "fstack-arrays", "fvar-tracking",
		"fno-var-tracking", "fvar-tracking-assignments", "fno-var-tracking-assignments",

		// debug information detail
		"feliminate-unused-debug-types", "fno-eliminate-unused-debug-types",
		"feliminate-unused-debug-symbols", "fno-eliminate-unused-debug-symbols",
		"fstandalone-debug", "fno-standalone-debug", "flimit-debug-info",
		"fno-limit-debug-info", "fdebug-types-section", "fno-debug-types-section",
		"fdebug-macro", "fno-debug-macro", "fmerge-debug-strings", "fno-merge-debug-strings",
		"fdiscard-value-names", "fno-discard-value-names", "fdebug-info-for-profiling",
		"fno-debug-info-for-profiling", "fsplit-dwarf-inlining", "fno-split-dwarf-inlining",
		"fverbose-asm", "fno-verbose-asm", "frecord-gcc-switches", "fno-record-gcc-switches",
		"fworking-directory", "fno-working-directory",

		// assembler selection within the worker's own toolchain
		"fintegrated-as", "fno-integrated-as",
	)
}
