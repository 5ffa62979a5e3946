package ccargs

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// argv splits a command line on spaces; lines whose arguments hold spaces use explicit slices.
func argv(line string) []string { return strings.Fields(line) }

type wantCompile struct {
	source, output string
	implicitOut    bool
	lang           Language
	forced         bool
	mode           Mode
	deps           Deps
	debug          Debug
	includes       []string // Flag+Path
	color          ColorMode
}

func classifyLine(t *testing.T, line []string, implicit bool) (*Compile, error) {
	t.Helper()
	return Classify(Invocation{Compiler: line[0], Args: line[1:], Cwd: "/b", ImplicitOutput: implicit})
}

// Real command lines from the Make and CMake builds of Lua 5.4.4, Redis 7.0.15 and LevelDB
// 1.23 (taken from make -n and ninja -t commands), and common variants.
var cacheableLines = []struct {
	name     string
	line     []string
	implicit bool
	want     wantCompile
}{
	{"lua make", argv("gcc -std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c -o lapi.o lapi.c"), false,
		wantCompile{source: "lapi.c", output: "lapi.o", lang: LangC, mode: ModeObject}},
	{"lua lcode without -o", argv("gcc -std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c lcode.c"), true,
		wantCompile{source: "lcode.c", output: "lcode.o", implicitOut: true, lang: LangC, mode: ModeObject}},
	{"leveldb cmake ninja", argv("/usr/bin/c++ -DLEVELDB_COMPILE_LIBRARY -DLEVELDB_PLATFORM_POSIX=1 -I/b/include -I/s/. -I/s/include -fno-exceptions -fno-rtti -O3 -DNDEBUG -std=c++11 -MD -MT CMakeFiles/leveldb.dir/db/db_impl.cc.o -MF CMakeFiles/leveldb.dir/db/db_impl.cc.o.d -o CMakeFiles/leveldb.dir/db/db_impl.cc.o -c /s/db/db_impl.cc"), false,
		wantCompile{source: "/s/db/db_impl.cc", output: "CMakeFiles/leveldb.dir/db/db_impl.cc.o", lang: LangCXX, mode: ModeObject,
			deps: Deps{Mode: DepAll, File: "CMakeFiles/leveldb.dir/db/db_impl.cc.o.d", FileExplicit: true,
				Targets: []DepTarget{{Name: "CMakeFiles/leveldb.dir/db/db_impl.cc.o"}}},
			includes: []string{"-I/b/include", "-I/s/.", "-I/s/include"}}},
	{"redis server", []string{"cc", "-pedantic", "-DREDIS_STATIC=", "-std=c11", "-Wall", "-W", "-Wno-missing-field-initializers", "-O2", "-g", "-ggdb", "-I../deps/hiredis", "-I../deps/linenoise", "-I../deps/lua/src", "-I../deps/hdr_histogram", "-DUSE_JEMALLOC", "-I../deps/jemalloc/include", "-MMD", "-o", "adlist.o", "-c", "adlist.c"}, false,
		wantCompile{source: "adlist.c", output: "adlist.o", lang: LangC, mode: ModeObject,
			deps:     Deps{Mode: DepUser, File: "adlist.d", Targets: []DepTarget{{Name: "adlist.o", Quoted: true}}, TargetsImplicit: true},
			debug:    Debug{Level: 2},
			includes: []string{"-I../deps/hiredis", "-I../deps/linenoise", "-I../deps/lua/src", "-I../deps/hdr_histogram", "-I../deps/jemalloc/include"}}},
	{"redis hiredis without -o", argv("cc -std=c99 -c -O3 -fPIC -Wall -W -Wstrict-prototypes -Wwrite-strings -Wno-missing-field-initializers -g -ggdb -pedantic alloc.c"), true,
		wantCompile{source: "alloc.c", output: "alloc.o", implicitOut: true, lang: LangC, mode: ModeObject, debug: Debug{Level: 2}}},
	{"redis hdr_histogram quoted define", []string{"cc", "-std=c99", "-Wall", "-Os", "-g", `-DHDR_MALLOC_INCLUDE="hdr_redis_malloc.h"`, "-c", "hdr_histogram.c", "-o", "hdr_histogram.o"}, false,
		wantCompile{source: "hdr_histogram.c", output: "hdr_histogram.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2}}},
	{"redis lua", argv("cc -Wall -DLUA_ANSI -DENABLE_CJSON_GLOBAL -DREDIS_STATIC= -DLUA_USE_MKSTEMP -O2 -c -o lapi.o lapi.c"), false,
		wantCompile{source: "lapi.c", output: "lapi.o", lang: LangC, mode: ModeObject}},
	{"jemalloc g3", argv("gcc -std=gnu11 -Wall -Wextra -Wsign-compare -Wundef -Wno-format-zero-length -pipe -g3 -fvisibility=hidden -O3 -funroll-loops -fPIC -DPIC -c -D_GNU_SOURCE -D_REENTRANT -Iinclude -Iinclude -o src/arena.pic.o src/arena.c"), false,
		wantCompile{source: "src/arena.c", output: "src/arena.pic.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 3, Macros: true},
			includes: []string{"-Iinclude", "-Iinclude"}}},
	{"autotools libtool style", []string{"gcc", "-DHAVE_CONFIG_H", "-I.", "-I..", "-g", "-O2", "-MT", "foo.lo", "-MD", "-MP", "-MF", ".deps/foo.Tpo", "-c", "foo.c", "-fPIC", "-DPIC", "-o", ".libs/foo.o"}, false,
		wantCompile{source: "foo.c", output: ".libs/foo.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2},
			deps:     Deps{Mode: DepAll, File: ".deps/foo.Tpo", FileExplicit: true, Targets: []DepTarget{{Name: "foo.lo"}}, Phony: true},
			includes: []string{"-I.", "-I.."}}},
	{"separate include and output", argv("g++-12 -I /s/include -isystem /usr/local/include -o obj/x.o -c x.cpp -MMD -MQ $out -MT other"), false,
		wantCompile{source: "x.cpp", output: "obj/x.o", lang: LangCXX, mode: ModeObject,
			deps:     Deps{Mode: DepUser, File: "obj/x.d", Targets: []DepTarget{{Name: "$out", Quoted: true}, {Name: "other"}}},
			includes: []string{"-I/s/include", "-isystem/usr/local/include"}}},
	{"joined output and long options", argv("x86_64-linux-gnu-gcc-12 --compile --output=out.o --include-directory=inc --sysroot /sr --std c99 a.c"), false,
		wantCompile{source: "a.c", output: "out.o", lang: LangC, mode: ModeObject, includes: []string{"--include-directoryinc", "--sysroot/sr"}}},
	{"-ofoo joined", argv("gcc -c -ofoo.o foo.c"), false,
		wantCompile{source: "foo.c", output: "foo.o", lang: LangC, mode: ModeObject}},
	{"g++ compiles .c as C++", argv("g++ -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangCXX, mode: ModeObject}},
	{"-x c++ before the source", argv("gcc -x c++ -c a.c -o a.o -x none"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangCXX, forced: true, mode: ModeObject}},
	{"-x after the source has no effect", argv("gcc -c a.c -o a.o -x c++"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject}},
	{"-xc++ joined", argv("gcc -xc++ -c a.txt -o a.o"), false,
		wantCompile{source: "a.txt", output: "a.o", lang: LangCXX, forced: true, mode: ModeObject}},
	{"-S compiles to assembly", argv("gcc -S a.c -o a.s -MD"), false,
		wantCompile{source: "a.c", output: "a.s", lang: LangC, mode: ModeAssembly,
			deps: Deps{Mode: DepAll, File: "a.d", Targets: []DepTarget{{Name: "a.s", Quoted: true}}, TargetsImplicit: true}}},
	{"-S beats -c", argv("gcc -c -S a.c -o a.s"), false,
		wantCompile{source: "a.c", output: "a.s", lang: LangC, mode: ModeAssembly}},
	{"preprocessed assembly", argv("gcc -c start.S -o start.o"), false,
		wantCompile{source: "start.S", output: "start.o", lang: LangAsmCpp, mode: ModeObject}},
	{"objective-c++", argv("clang++ -c v.mm -o v.o"), false,
		wantCompile{source: "v.mm", output: "v.o", lang: LangObjCXX, mode: ModeObject}},
	{"depfile beside a suffixless output", argv("gcc -c a.c -MD -o dir.x/noext"), false,
		wantCompile{source: "a.c", output: "dir.x/noext", lang: LangC, mode: ModeObject,
			deps: Deps{Mode: DepAll, File: "dir.x/noext.d", Targets: []DepTarget{{Name: "dir.x/noext", Quoted: true}}, TargetsImplicit: true}}},
	{"both -MD and -MMD", argv("gcc -c a.c -o a.b.o -MD -MMD -MF d1 -MF d2"), false,
		wantCompile{source: "a.c", output: "a.b.o", lang: LangC, mode: ModeObject,
			deps: Deps{Mode: DepUser, File: "d2", FileExplicit: true, Targets: []DepTarget{{Name: "a.b.o", Quoted: true}}, TargetsImplicit: true}}},
	{"implicit output with -MD", argv("gcc -c sub/k.x.c -MMD"), true,
		wantCompile{source: "sub/k.x.c", output: "k.x.o", implicitOut: true, lang: LangC, mode: ModeObject,
			deps: Deps{Mode: DepUser, File: "k.x.d", Targets: []DepTarget{{Name: "k.x.o", Quoted: true}}, TargetsImplicit: true}}},
	{"debug levels: last wins, -g never lowers 3", argv("gcc -g3 -g -gdwarf-4 -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 3, Macros: true, DWARF: 4}}},
	{"debug off again", argv("gcc -g -g0 -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject}},
	{"gcc's long spellings of -g", argv("gcc --debug=1 --debug --optimize=2 --debug-prefix-map=/b=. -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2}}},
	{"-g1 then -g raises to 2", argv("gcc -g1 -ggdb -gcolumn-info -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2, Columns: ColumnsOn}}},
	{"-gcolumn-info after -gno-column-info, DWARF version last wins", argv("gcc -gno-column-info -gdwarf-4 -g -gcolumn-info -gdwarf-5 -gdwarf64 -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2, DWARF: 5, Columns: ColumnsOn}}},
	{"clang's default DWARF version yields to -gdwarf-N", argv("clang -fdebug-default-version=4 -gdwarf-5 -gno-column-info -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2, DWARF: 5, Columns: ColumnsOff}}},
	{"clang's default DWARF version", argv("clang -g -fdebug-default-version=4 -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, debug: Debug{Level: 2, DWARF: 4}}},
	{"colour", argv("gcc -fdiagnostics-color=always -fno-diagnostics-color -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, color: ColorNever}},
	{"clang colour", argv("clang -fcolor-diagnostics -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject, color: ColorAlways}},
	{"link-only options ignored by -c", argv("gcc -c a.c -o a.o -Wl,-O1 -L /usr/lib -l m -pthread -static"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject}},
	{"clang target and safe -Xclang", argv("clang --target=aarch64-linux-gnu -Xclang -fno-pch-timestamp -mllvm -inline-threshold=100 -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject}},
	{"assembler option that writes nothing", argv("gcc -Wa,--noexecstack -c a.c -o a.o"), false,
		wantCompile{source: "a.c", output: "a.o", lang: LangC, mode: ModeObject}},
	{"frecord-gcc-switches and -dA are fine", argv("gcc -frecord-gcc-switches -dA -S a.c -o a.s"), false,
		wantCompile{source: "a.c", output: "a.s", lang: LangC, mode: ModeAssembly}},
}

func TestClassifyRealCommandLines(t *testing.T) {
	for _, tc := range cacheableLines {
		t.Run(tc.name, func(t *testing.T) {
			c, err := classifyLine(t, tc.line, tc.implicit)
			if err != nil {
				t.Fatalf("Classify(%q) = %v, want cacheable", tc.line, err)
			}
			var includes []string
			for _, p := range c.IncludePaths {
				includes = append(includes, p.Flag+p.Path)
			}
			got := wantCompile{source: c.Source, output: c.Output, implicitOut: c.OutputImplicit, lang: c.Language,
				forced: c.LanguageForced, mode: c.Mode, deps: c.Deps, debug: c.Debug, includes: includes, color: c.Color}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(wantCompile{})); diff != "" {
				t.Errorf("Classify(%q) mismatch (-want +got):\n%s", tc.line, diff)
			}
			if !cmp.Equal(c.Args, tc.line[1:]) {
				t.Errorf("Args = %q, want the arguments as given", c.Args)
			}
		})
	}
}

// Without ImplicitOutput, pace-wire §3.3 passes "-c foo.c" (no -o) through.
func TestNoOutputPassesThroughByDefault(t *testing.T) {
	_, err := classifyLine(t, argv("gcc -c lcode.c"), false)
	if ReasonOf(err) != ReasonNoOutput || !errors.Is(err, ErrPassthrough) {
		t.Fatalf("got %v, want %q", err, ReasonNoOutput)
	}
}

func TestDriverOverride(t *testing.T) {
	d, _ := ClassifyDriver("cc")
	c, err := Classify(Invocation{Compiler: "cc", Driver: d.WithFlavor(FlavorClang), Args: argv("-target x86_64-pc-linux-gnu -c a.c -o a.o")})
	if err != nil {
		t.Fatalf("cc reclassified as clang: %v", err)
	}
	if c.Driver.Flavor != FlavorClang {
		t.Errorf("flavor %v, want clang", c.Driver.Flavor)
	}
	// The same line under gcc rules: -target is not an option gcc knows, so its value is an input.
	if _, err := Classify(Invocation{Compiler: "cc", Args: argv("-target x86_64-pc-linux-gnu -c a.c -o a.o")}); ReasonOf(err) != ReasonNonSourceInput {
		t.Errorf("gcc reading of -target: %v, want %q", err, ReasonNonSourceInput)
	}
}

func TestCompDirRecorded(t *testing.T) {
	cases := []struct {
		line string
		cwd  string
		want bool
	}{
		{"gcc -c a.c -o a.o", "/b", false},
		{"gcc -g -c a.c -o a.o", "/b", true},
		{"gcc -g -fdebug-prefix-map=/b=. -c a.c -o a.o", "/b/sub", false},
		{"gcc -g -ffile-prefix-map=/b=. -c a.c -o a.o", "/b", false},
		{"gcc -g --debug-prefix-map=/b=. -c a.c -o a.o", "/b", false},
		{"gcc -g -fmacro-prefix-map=/b=. -c a.c -o a.o", "/b", true},
		{"gcc -g -fdebug-prefix-map=/other=. -c a.c -o a.o", "/b", true},
		{"clang -g -fdebug-compilation-dir=. -c a.c -o a.o", "/b", false},
		{"gcc -g -c a.c -o a.o", "", true},
	}
	for _, tc := range cases {
		f := argv(tc.line)
		c, err := Classify(Invocation{Compiler: f[0], Args: f[1:], Cwd: tc.cwd})
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := c.CompDirRecorded(); got != tc.want {
			t.Errorf("%s in %q: CompDirRecorded = %v, want %v", tc.line, tc.cwd, got, tc.want)
		}
	}
}

func TestPrefixMapsSplitAtTheLastEquals(t *testing.T) {
	c, err := classifyLine(t, argv("gcc -fdebug-prefix-map=/s/a=b=/x -fmacro-prefix-map=/s=. -c a.c -o a.o"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []PrefixMap{{Flag: "-fdebug-prefix-map=", Old: "/s/a=b", New: "/x"}, {Flag: "-fmacro-prefix-map=", Old: "/s", New: "."}}
	if diff := cmp.Diff(want, c.PrefixMaps); diff != "" {
		t.Errorf("PrefixMaps (-want +got):\n%s", diff)
	}
}

func TestRelativePaths(t *testing.T) {
	c, err := classifyLine(t, argv("gcc -I../inc -I/abs -include cfg.h -c src/a.c -o a.o"), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"../inc", "cfg.h", "src/a.c"}, c.RelativePaths()); diff != "" {
		t.Errorf("RelativePaths (-want +got):\n%s", diff)
	}
}
