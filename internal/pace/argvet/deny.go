package argvet

import "strings"

// Hard refusals: prefix-matched against the argument without its introducer, checked before
// the allowlist, and never re-admitted by an operator's --allow-compile-arg (pace-wire §3.10,
// pace-node §5.5).

// denyAnyFamily are the rows for every family: options that run another program, load
// code, redirect the driver's sub-programs, name include or sysroot paths, or write profile,
// coverage or split-debug files.
var denyAnyFamily = []string{
	"Wa,", "Wl,", "Wp,", "mllvm", "wrapper", "fplugin", "fpass-plugin", "fmodule-mapper",
	"plugin", "specs", "Xclang", "Xassembler", "Xlinker", "Xpreprocessor", "load", "B", "I",
	"include", "imacros", "idirafter", "iquote", "isystem", "isysroot", "-sysroot",
	"gsplit-dwarf", "gstabs", "fprofile", "fcoverage", "ftest-coverage",
}

// denyGNU are pace's additions for GNU drivers, each for the same reasons as the rows above:
// every -X option hands arguments to another tool; long spellings that alias denied short ones
// (--specs, --prefix = -B, --include..., --for-linker, --for-assembler); clang's config files,
// VFS overlays, resource and toolchain directories, linker selection and working directory;
// the remaining include-path options; module maps and caches; sanitizer and XRay list files;
// and -march=native and friends, whose meaning is the worker's CPU rather than the client's.
var denyGNU = []string{
	"X", "-specs", "-prefix", "-include", "-imacros", "-for-linker", "-for-assembler",
	"-config", "-no-default-config", "ivfsoverlay", "resource-dir", "-resource-dir",
	"gcc-toolchain", "-gcc-toolchain", "-gcc-install-dir", "-gcc-triple", "ccc-",
	"fuse-ld", "-ld-path", "working-directory", "iprefix", "iwithprefix", "iwithsysroot",
	"iframework", "imultilib", "imultiarch", "iplugindir", "cxx-isystem", "iembed-dir",
	"F", "L", "fmodule", "fprebuilt-module-path", "fimplicit-module", "fsanitize-blacklist",
	"fsanitize-ignorelist", "fsanitize-system-", "fsanitize-coverage-allowlist",
	"fsanitize-coverage-ignorelist", "fxray", "fcrash-diagnostics", "fdebug-compilation-dir",
	"ffile-compilation-dir", "fembed-offload-object", "march=native", "mtune=native",
	"mcpu=native", "fauto-profile", "fcs-profile", "fsave-optimization-record",
	"foptimization-record-file", "fdiagnostics-format=sarif-file",
	"fdiagnostics-format=json-file",
}

// denyMSVC are the rows for the MSVC family (pace-wire §3.10).
var denyMSVC = []string{
	"link", "analyze", "imsvc", "external:I", "external:env:", "AI", "FA", "FI", "FR", "Fa",
	"Fd", "Fe", "Fi", "Fm", "Fo", "Fp", "Fr", "Fx", "Y", "Zi", "ZI",
}

// sideArtefactGNU are options that make a GNU driver write a file beside the object: all
// dependency output (every -M option), saved temporaries, dumps, stack-usage and call-graph
// files, declaration listings, module and precompiled outputs, time traces, compilation
// database entries, serialized diagnostics, compare-debug dumps and template repositories.
var sideArtefactGNU = []string{
	"M", "save-temps", "-save-temps", "fdump-", "d", "fstack-usage", "fcallgraph-info",
	"aux-info", "-aux-info", "fmodule-output", "-precompile", "ftime-trace", "MJ",
	"-serialize-diagnostics", "fcompare-debug", "frepo", "-coverage", "coverage",
	"fopt-info", "Hd", "Hf", "Xf", "o", "-output", "fpch-",
}

// sideArtefactMSVC are MSVC options that write files beside the object.
var sideArtefactMSVC = []string{
	"P", "Fi", "sourceDependencies", "doc", "ifcOutput", "interface", "scanDependencies",
}

// hardRefusal reports the rule a stripped argument hits, if any.
func hardRefusal(f Family, stripped string) (string, bool) {
	for _, group := range refusalGroups(f) {
		for _, p := range group.rows {
			if strings.HasPrefix(stripped, p) {
				return group.label + " " + p, true
			}
		}
	}
	return "", false
}

type refusalGroup struct {
	label string
	rows  []string
}

func refusalGroups(f Family) []refusalGroup {
	switch f {
	case FamilyGNU:
		return []refusalGroup{{"denied:", denyAnyFamily}, {"denied:", denyGNU}, {"side artefact:", sideArtefactGNU}}
	case FamilyMSVC:
		return []refusalGroup{{"denied:", denyAnyFamily}, {"denied:", denyMSVC}, {"side artefact:", sideArtefactMSVC}}
	}
	return nil
}
