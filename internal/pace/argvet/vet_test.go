package argvet

import (
	"errors"
	"strings"
	"testing"
)

var gnuFlavors = []Flavor{FlavorGcc, FlavorClang}

// rejected asserts that Vet refuses args, naming args[index].
func rejected(t *testing.T, f Flavor, args []string, index int) *RejectedError {
	t.Helper()
	err := Vet(f, args)
	var re *RejectedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRejectedArgument) {
		t.Fatalf("Vet(%s, %q) = %v, want a RejectedError", f, args, err)
	}
	if re.Index != index || re.Arg != SanitizeArg(args[index]) {
		t.Fatalf("Vet(%s, %q) named argument %d %q, want %d %q", f, args, re.Index, re.Arg, index, args[index])
	}
	return re
}

// The hard refusals pace-node §5.5 names, each a way to run a program or load code through
// the compiler driver, or to write outside the scratch object.
var issueRefusals = [][]string{
	{"-wrapper", "gdb,--args"},
	{"-fplugin=x.so"},
	{"-fplugin=/tmp/evil.so"},
	{"-fpass-plugin=x.so"},
	{"-Xclang", "-load", "-Xclang", "x.so"},
	{"-specs=x"},
	{"--specs=x"},
	{"-B/tmp"},
	{"-Bprefix"},
	{"-B", "prefix"},
	{"-fmodule-mapper=|cat"},
	{"-fmodule-mapper=localhost:1234"},
	{"-mllvm", "-x"},
	{"-Wl,-rpath,x"},
	{"-Wa,-adhln=listing"},
	{"-Wp,-MD,dep"},
	{"-Xlinker", "x"},
	{"-Xassembler", "x"},
	{"-Xpreprocessor", "x"},
	{"-Iinclude"},
	{"-isystem", "x"},
	{"-include", "x.h"},
	{"--sysroot=x"},
	{"-isysroot", "x"},
	{"-save-temps"},
	{"-fdump-tree-all"},
	{"-gsplit-dwarf"},
	{"-fstack-usage"},
	{"-fcallgraph-info"},
	{"-aux-info", "x"},
	{"--coverage"},
	{"-ftest-coverage"},
	{"-fprofile-generate"},
	{"-fprofile-use=x"},
	{"-MD"},
	{"-MF", "x"},
	{"-o", "x.o"},
	{"-ox.o"},
	{"-fmodule-output"},
	{"--precompile"},
	{"-ftime-trace"},
	{"-march=native"},
	{"--config=x.cfg"},
	{"-working-directory", "x"},
	{"--gcc-toolchain=x"},
	{"-fuse-ld=lld"},
	{"-fdebug-prefix-map=/a=/b"},
	// gcc's long spellings of the same (--X is -fX, --warn-X is -WX, --debug=X is -gX)
	{"--plugin=x.so"},
	{"--pass-plugin=x.so"},
	{"--module-mapper=|sh"},
	{"--warn-a,-al"},
	{"--warn-l,-rpath"},
	{"--debug=split-dwarf"},
	{"--dump-tree-all"},
	{"--profile-arcs"},
	{"--test-coverage"},
	{"--machine-llvm"},
}

func TestHardRefusalsNamedByTheIssue(t *testing.T) {
	for _, args := range issueRefusals {
		for _, f := range gnuFlavors {
			rejected(t, f, args, 0)
		}
	}
}

func TestEveryDenialRowIsRefusedAndNotOverridable(t *testing.T) {
	check := func(f Flavor, introducer string, rows []string) {
		for _, row := range rows {
			for _, arg := range []string{introducer + row, introducer + row + "x", introducer + row + "=1"} {
				re := rejected(t, f, []string{arg}, 0)
				if !strings.HasPrefix(re.Rule, "denied:") && !strings.HasPrefix(re.Rule, "side artefact:") {
					t.Errorf("%s %q refused by %q, want a hard refusal", f, arg, re.Rule)
				}
				if _, err := NewPolicy([]string{arg}); !errors.Is(err, ErrInvalidExtension) {
					t.Errorf("--allow-compile-arg=%q accepted, want ErrInvalidExtension", arg)
				}
			}
		}
	}
	for _, f := range gnuFlavors {
		check(f, "-", denyAnyFamily)
		check(f, "-", denyGNU)
		check(f, "-", sideArtefactGNU)
	}
	for _, f := range []Flavor{FlavorCl, FlavorClangCl} {
		for _, intro := range []string{"/", "-"} {
			check(f, intro, denyAnyFamily)
			check(f, intro, denyMSVC)
			check(f, intro, sideArtefactMSVC)
		}
	}
}

var gnuSamples = map[string][]string{
	"optimisation": {"-O", "-O0", "-O2", "-O3", "-Os", "-Oz", "-Og", "-Ofast"},
	"language":     {"-std=gnu99", "-std=c99", "-std=c++11", "-std=gnu++20", "-ansi", "-pedantic", "-pedantic-errors"},
	"defines": {"-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-DREDIS_STATIC=", "-DNDEBUG", "-DX=\"a b\"", "-UNDEBUG", "-undef",
		"-DPATH=\"/usr/share\"", `-DWIN=C:\x`, "-DF(a)=a/2"}, // a -D value is macro text
	"warnings": {"-Wall", "-Wextra", "-W", "-w", "-Wno-missing-field-initializers", "-Werror=format-security", "-Wframe-larger-than=4096"},
	"machine":  {"-m64", "-march=x86-64-v3", "-mtune=generic", "-msse4.2", "-mno-red-zone"},
	"debug":    {"-g", "-g0", "-g3", "-ggdb", "-ggdb3", "-gdwarf-4", "-gdwarf-5", "-gcolumn-info", "-gz", "-pg"},
	"f flags": {"-fPIC", "-fPIE", "-fpic", "-fpie", "-fno-omit-frame-pointer", "-fomit-frame-pointer",
		"-fexceptions", "-fno-exceptions", "-frtti", "-fno-rtti", "-fvisibility=hidden",
		"-fvisibility-inlines-hidden", "-fstack-protector-strong", "-fstack-protector-all",
		"-fno-stack-protector", "-fno-strict-aliasing", "-fno-common", "-ffunction-sections",
		"-fdata-sections", "-flto", "-flto=auto", "-flto=8", "-fno-lto",
		"-fsanitize=address,undefined", "-fno-sanitize=vptr", "-fdiagnostics-color",
		"-fdiagnostics-color=always", "-fno-diagnostics-color", "-fmessage-length=0",
		"-fsigned-char", "-funsigned-char", "-fwrapv", "-fno-builtin", "-ffreestanding",
		"-fopenmp", "-fno-math-errno", "-ffast-math", "-fno-inline", "-fno-plt",
		"-fcf-protection", "-fcf-protection=full", "-fstack-clash-protection",
		"-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables",
		"-ftemplate-depth=1024", "-fabi-version=11", "-ffp-contract=off",
		"-fno-semantic-interposition", "-frandom-seed=abc123"},
	"misc": {"-pthread", "-pipe", "-c", "-trigraphs", "-nostdinc", "-nostdinc++", "-Qunused-arguments", "--param=max-inline-insns-single=10"},
}

func TestAllowlistSamplesPerCategory(t *testing.T) {
	for cat, args := range gnuSamples {
		for _, f := range gnuFlavors {
			for _, a := range args {
				if err := Vet(f, []string{a}); err != nil {
					t.Errorf("%s %s: Vet(%q) = %v, want accepted", cat, f, a, err)
				}
			}
		}
	}
	msvc := []string{"/O2", "-O2", "/Od", "/std:c++17", "/permissive-", "/DNDEBUG", "/W4", "/wd4996",
		"/arch:AVX2", "/EHsc", "/MD", "/MTd", "/GR-", "/Zc:__cplusplus", "/Z7", "/nologo", "/bigobj",
		"/utf-8", "/c", "/TP", "/TC", "-TP"}
	for _, f := range []Flavor{FlavorCl, FlavorClangCl} {
		for _, a := range msvc {
			if err := Vet(f, []string{a}); err != nil {
				t.Errorf("%s: Vet(%q) = %v, want accepted", f, a, err)
			}
		}
	}
}

func TestPreprocessedLanguageAndTarget(t *testing.T) {
	for _, f := range gnuFlavors {
		for _, lang := range f.PreprocessedLanguages() {
			if err := Vet(f, []string{"-O2", "-x", lang}); err != nil {
				t.Errorf("%s -x %s: %v", f, lang, err)
			}
			if err := Vet(f, []string{"-x" + lang}); err != nil {
				t.Errorf("%s -x%s: %v", f, lang, err)
			}
		}
		rejected(t, f, []string{"-x", "c"}, 0)
		rejected(t, f, []string{"-x"}, 0)
		rejected(t, f, []string{"-xc++"}, 0)
		rejected(t, f, []string{"cpp-output"}, 0)
	}
	if err := Vet(FlavorClang, []string{"--target=x86_64-pc-linux-gnu", "-O2"}); err != nil {
		t.Errorf("clang --target: %v", err)
	}
	rejected(t, FlavorGcc, []string{"--target=x86_64-pc-linux-gnu"}, 0)
	rejected(t, FlavorClang, []string{"--target=x86_64/../../x"}, 0)
	rejected(t, FlavorClang, []string{"-O2", "--target="}, 1)
}

func TestRefusalsOutsideTheAllowlist(t *testing.T) {
	cases := []struct {
		arg  string
		rule string
	}{
		{"@args.rsp", RuleResponseFile},
		{"a.c", RuleNotAnOption},
		{"-", RuleNotAllowed},
		{"--", RuleNotAllowed},
		{"-DX=\n", RuleControlChar},
		{"-D/x=1", RulePathSeparator}, // only the value may hold one: the name is an identifier
		{"-D1/x", RulePathSeparator},
		{"-UX/y", RulePathSeparator},
		{"-fno-builtin-memcpy", RuleNotAllowed}, // -f is never a prefix
		{"-fvisibility=bogus", RuleNotAllowed},
		{"-fsanitize=address,evil", RuleNotAllowed},
		{"-fsanitize=", RuleNotAllowed},
		{"-ftemplate-depth=9x", RuleNotAllowed},
		{"-fsome-future-flag", RuleNotAllowed},
		{"-std=", RuleNotAllowed},
		{"-frandom-seed=a b", RuleNotAllowed},
		{"-emit-llvm", RuleNotAllowed},
	}
	for _, c := range cases {
		re := rejected(t, FlavorGcc, []string{"-O2", c.arg}, 1)
		if re.Rule != c.rule {
			t.Errorf("%q refused by %q, want %q", c.arg, re.Rule, c.rule)
		}
	}
	if err := Vet(FlavorGcc, []string{"", "-O2"}); err != nil {
		t.Errorf("empty argument: %v, want accepted", err)
	}
	rejected(t, FlavorUnknown, []string{"-O2"}, 0)
}

func TestSanitizeArg(t *testing.T) {
	cases := map[string]string{
		"-fplugin=x.so":           "-fplugin=x.so",
		"-D\x00X\x7f":             "-D?X?",
		"-Dé":                     "-D?",
		strings.Repeat("a", 96):   strings.Repeat("a", 96),
		strings.Repeat("a", 97):   strings.Repeat("a", 93) + "...",
		strings.Repeat("é", 200):  strings.Repeat("?", 93) + "...",
		"-I/tmp/\xff\xfe/include": "-I/tmp/??/include",
	}
	for in, want := range cases {
		if got := SanitizeArg(in); got != want {
			t.Errorf("SanitizeArg(%q) = %q, want %q", in, got, want)
		}
		if len(SanitizeArg(in)) > MaxNamedArgLen {
			t.Errorf("SanitizeArg(%q) longer than %d", in, MaxNamedArgLen)
		}
	}
}

func TestPolicyExtensions(t *testing.T) {
	p, err := NewPolicy([]string{"-fsome-future-flag", "/Zfuture"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Vet(FlavorGcc, []string{"-fsome-future-flag"}); err != nil {
		t.Errorf("extension not honoured: %v", err)
	}
	if err := p.Vet(FlavorCl, []string{"/Zfuture"}); err != nil {
		t.Errorf("MSVC extension not honoured: %v", err)
	}
	if err := p.Vet(FlavorGcc, []string{"-fsome-future-flag=1"}); err == nil {
		t.Error("extensions must match exactly")
	}
	if got := p.Extensions(); len(got) != 2 || got[0] != "-fsome-future-flag" || got[1] != "/Zfuture" {
		t.Errorf("Extensions() = %q", got)
	}
	for _, bad := range []string{"", "@x", "foo", "-fa/b", `-fa\b`, "-fplugin=x", "--plugin=x", "-B", "-Xclang", "-MD", "-wrapper", "-D\n"} {
		if _, err := NewPolicy([]string{bad}); !errors.Is(err, ErrInvalidExtension) {
			t.Errorf("NewPolicy(%q) = %v, want ErrInvalidExtension", bad, err)
		}
	}
}

func TestPrescreen(t *testing.T) {
	ok := []string{"-O2", "-fPIC", "-Wall", "-fsome-future-flag", "--target=x86_64-pc-linux-gnu"}
	if err := Prescreen(FlavorClang, ok); err != nil {
		t.Errorf("Prescreen(%q) = %v", ok, err)
	}
	if err := Prescreen(FlavorGcc, []string{"-DX=/y"}); err != nil {
		t.Errorf("Prescreen(-DX=/y) = %v: a macro's value is not a path", err)
	}
	for _, bad := range []string{"@rsp", "x86_64", "-D/y", "-fplugin=x", "-Wl,-z,now", "-MD", "-Xclang"} {
		err := Prescreen(FlavorGcc, []string{"-O2", bad})
		var re *RejectedError
		if !errors.As(err, &re) || re.Index != 1 {
			t.Errorf("Prescreen(%q) = %v, want a refusal of argument 1", bad, err)
		}
	}
}

func TestGNUShortForm(t *testing.T) {
	cases := map[string]string{
		"--plugin=x.so": "-fplugin=x.so", "--warn-all": "-Wall", "--warn-a,-al": "-Wa,-al",
		"--machine-arch=native": "-march=native", "--debug": "-g", "--debug=3": "-g3",
		"--optimize": "-O", "--optimize=s": "-Os", "--all-warnings": "-Wall", "--profile": "-p",
		"--debug-prefix-map=/a=/b": "-fdebug-prefix-map=/a=/b", "-O2": "-O2", "--": "--", "x": "x",
	}
	for in, want := range cases {
		if got := GNUShortForm(in); got != want {
			t.Errorf("GNUShortForm(%q) = %q, want %q", in, got, want)
		}
	}
}
