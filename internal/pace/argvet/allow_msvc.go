package argvet

// The MSVC allowlist (cl, clang-cl), rows spelled without the introducer, as §3.10 lists them.

var msvcOptimisation = exact(
	"O1", "O2", "Os", "Od", "Oi", "Oi-", "Ot", "Ox", "Oy", "Oy-", "Ob0", "Ob1", "Ob2", "Ob3",
)

var msvcLanguage = append(prefixes("std:"), exact("permissive", "permissive-")...)

var msvcDefines = append(prefixes("D", "U"), exact("u")...)

var msvcWarnings = append(prefixes("W", "wd", "we", "wo", "w1", "w2", "w3", "w4"), exact("w")...)

var msvcMachine = prefixes("arch:", "favor:")

var msvcCodegen = append(prefixes(
	"EH", "Zc:", "Zp", "RTC", "fp:", "guard:", "diagnostics:", "errorReport:", "openmp:",
	"source-charset:", "execution-charset:", "constexpr:", "vd", "vm", "Gs", "await:",
), exact(
	"MD", "MDd", "MT", "MTd", "LD", "LDd", "GR", "GR-", "GS", "GS-", "Gs", "Gy", "Gy-", "Gw",
	"Gw-", "GF", "GF-", "GA", "Gd", "Gr", "Gv", "Gz", "GT", "GL", "GL-", "Gm-", "Z7", "Za",
	"Ze", "Zl", "Zg", "Zo", "Zo-", "Zs", "openmp", "openmp-", "Qspectre", "Qspectre-", "Qpar",
	"Qpar-", "utf-8", "validate-charset", "validate-charset-", "nologo", "bigobj", "sdl",
	"sdl-", "homeparams", "hotpatch", "await", "J", "X", "FC", "FS",
)...)

var msvcMisc = exact("Qunused-arguments", "c")
