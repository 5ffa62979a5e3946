package argvet

// The MSVC allowlist (cl, clang-cl), rows spelled without the introducer, as pace-wire §3.10
// lists them.

func msvcOptimisation() []row {
	return exact(
		"O1", "O2", "Os", "Od", "Oi", "Oi-", "Ot", "Ox", "Oy", "Oy-", "Ob0", "Ob1", "Ob2", "Ob3",
	)
}

func msvcLanguage() []row { return append(prefixes("std:"), exact("permissive", "permissive-")...) }

func msvcDefines() []row { return append(prefixes("D", "U"), exact("u")...) }

func msvcWarnings() []row {
	return append(prefixes("W", "wd", "we", "wo", "w1", "w2", "w3", "w4"), exact("w")...)
}

func msvcMachine() []row { return prefixes("arch:", "favor:") }

func msvcCodegen() []row {
	return append(prefixes(
		"EH", "Zc:", "Zp", "RTC", "fp:", "guard:", "diagnostics:", "errorReport:", "openmp:",
		"source-charset:", "execution-charset:", "constexpr:", "vd", "vm", "Gs", "await:",
	), exact(
		"MD", "MDd", "MT", "MTd", "LD", "LDd", "GR", "GR-", "GS", "GS-", "Gs", "Gy", "Gy-", "Gw",
		"Gw-", "GF", "GF-", "GA", "Gd", "Gr", "Gv", "Gz", "GT", "GL", "GL-", "Gm-", "Z7", "Za",
		"Ze", "Zl", "Zg", "Zo", "Zo-", "Zs", "openmp", "openmp-", "Qspectre", "Qspectre-", "Qpar",
		"Qpar-", "utf-8", "validate-charset", "validate-charset-", "nologo", "bigobj", "sdl",
		"sdl-", "homeparams", "hotpatch", "await", "J", "X", "FC", "FS",
	)...)
}

func msvcMisc() []row { return exact("Qunused-arguments", "c") }
