package ccargs

import (
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/google/go-cmp/cmp"
)

func TestRemoteCompileArgs(t *testing.T) {
	cases := []struct {
		name, line, triple, want string
	}{
		{"lua: gcc's worker preprocesses again, so the defines stay", "gcc -std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c -o lapi.o lapi.c", "",
			"-std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -x cpp-output"},
		{"leveldb: includes and deps dropped, defines kept", leveldbLine, "",
			"-DLEVELDB_PLATFORM_POSIX=1 -O3 -DNDEBUG -std=c++11 -x c++-cpp-output"},
		{"redis: ordinary -g dispatched", "cc -pedantic -DREDIS_STATIC= -std=c99 -Wall -W -Wno-missing-field-initializers -O2 -g -ggdb -MMD -o adlist.o -c adlist.c", "",
			"-pedantic -DREDIS_STATIC= -std=c99 -Wall -W -Wno-missing-field-initializers -O2 -g -ggdb -x cpp-output"},
		{"clang: --target first, defines dropped", "clang++ -O2 -fPIC -DX=1 -c a.cc -o a.o", "x86_64-pc-linux-gnu",
			"--target=x86_64-pc-linux-gnu -O2 -fPIC -x c++-cpp-output"},
		{"clang: the build's own target joined and kept after", "clang -target aarch64-linux-gnu -c a.c -o a.o", "x86_64-pc-linux-gnu",
			"--target=x86_64-pc-linux-gnu --target=aarch64-linux-gnu -x cpp-output"},
		{"clang: -g with the last word on columns off", "clang -gcolumn-info -g -gno-column-info -c a.c -o a.o", "x86_64-pc-linux-gnu",
			"--target=x86_64-pc-linux-gnu -gcolumn-info -g -gno-column-info -x cpp-output"},
		{"g++ compiles .c as C++", "g++ -c a.c -o a.o", "", "-x c++-cpp-output"},
		{"-x wins over the extension", "gcc -x c++ -c a.C -o a.o", "", "-x c++-cpp-output"},
		{"objective-c", "gcc -c a.m -o a.o -fobjc-exceptions", "", "-fobjc-exceptions -x objective-c-cpp-output"},
		{"separate values joined", "gcc --param max-inline-insns-single=10 --std c99 -D X -U Y -c a.c -o a.o", "",
			"--param=max-inline-insns-single=10 -std=c99 -DX -UY -x cpp-output"},
		{"link-only and path options dropped", "gcc -c a.c -o a.o -Wl,-O1 -L/x -lm -static -I/x -isystem /y --sysroot=/z -include f.h -nostdinc -fdebug-prefix-map=/a=/b -g", "",
			"-g -x cpp-output"},
		{"a define with a path is macro text: kept", "gcc -DDATADIR=\"/usr/share\" -c a.c -o a.o", "", "-DDATADIR=\"/usr/share\" -x cpp-output"},
		{"gcc: columns are exact from directives-only text", "gcc -g -gcolumn-info -gdwarf-5 -c a.c -o a.o", "", "-g -gcolumn-info -gdwarf-5 -x cpp-output"},
		{"gcc: -gdwarf-4 then -gdwarf-5, the last wins", "gcc -gdwarf-4 -g -gdwarf-5 -c a.c -o a.o", "", "-gdwarf-4 -g -gdwarf-5 -x cpp-output"},
		{"gcc: -g0 after -g3 turns the macros off", "gcc -ggdb3 -g0 -c a.c -o a.o", "", "-ggdb3 -g0 -x cpp-output"},
		{"gcc: an old DWARF without debug information", "gcc -gdwarf-4 -g0 -c a.c -o a.o", "", "-gdwarf-4 -g0 -x cpp-output"},
		{"gcc: -undef stays, the worker predefines again", "gcc -undef -c a.c -o a.o", "", "-undef -x cpp-output"},
		{"gcc: a UTF-8 input charset", "gcc -finput-charset=UTF-8 -c a.c -o a.o", "", "-finput-charset=UTF-8 -x cpp-output"},
	}
	for _, tc := range cases {
		c := mustClassify(t, argv(tc.line), Roots{})
		got, err := c.RemoteCompileArgs(tc.triple)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(argv(tc.want), got); diff != "" {
			t.Errorf("%s: RemoteCompileArgs (-want +got):\n%s", tc.name, diff)
		}
		flavor := c.Driver.Flavor
		if err := argvet.Vet(flavor, got); err != nil {
			t.Errorf("%s: the worker's own vetting refuses what the client sends: %v", tc.name, err)
		}
	}
}

func TestRemoteModeByFlavor(t *testing.T) {
	for line, want := range map[string]RemoteMode{
		"gcc -c a.c -o a.o": RemoteDirectives, "g++ -c a.cc -o a.o": RemoteDirectives,
		"x86_64-linux-gnu-gcc-12 -c a.c -o a.o": RemoteDirectives,
		"clang -c a.c -o a.o":                   RemotePreprocessed, "clang++ -c a.cc -o a.o": RemotePreprocessed,
	} {
		if got := mustClassify(t, argv(line), Roots{}).RemoteMode(); got != want {
			t.Errorf("%s: RemoteMode() = %d, want %d", line, got, want)
		}
	}
}

func TestRemoteCompileArgsRefusals(t *testing.T) {
	cases := []struct {
		line, triple, reason string
		rejected             bool
	}{
		{"gcc -S a.c -o a.s", "", NoDispatchAssembly, false},
		{"g++ -c a.C -o a.o", "", NoDispatchAmbiguous, false},
		{"gcc -c a.M -o a.o", "", NoDispatchAmbiguous, false},
		{"gcc -c start.S -o start.o", "", NoDispatchLanguage, false},
		{"gcc -g3 -c a.c -o a.o", "", NoDispatchMacroDebug, false},
		{"gcc -g -ggdb3 -c a.c -o a.o", "", NoDispatchMacroDebug, false},
		{"gcc -g3 -g -c a.c -o a.o", "", NoDispatchMacroDebug, false}, // -g never lowers 3
		{"clang -fdebug-macro -g -c a.c -o a.o", "x", NoDispatchMacroDebug, false},
		{"clang -g -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchDebugColumns, false},
		{"clang -gno-column-info -g -gcolumn-info -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchDebugColumns, false},
		{"gcc -g -gdwarf-4 -c a.c -o a.o", "", NoDispatchOldDWARF, false},
		{"gcc -gdwarf-5 -gdwarf-3 -c a.c -o a.o", "", NoDispatchOldDWARF, false},
		{"gcc -imacros m.h -c a.c -o a.o", "", NoDispatchPreprocessor, false},
		{"gcc --imacros=m.h -c a.c -o a.o", "", NoDispatchPreprocessor, false},
		{"gcc -traditional-cpp -c a.c -o a.o", "", NoDispatchPreprocessor, false},
		{"gcc -finput-charset=latin1 -c a.c -o a.o", "", NoDispatchPreprocessor, false},
		{"gcc -ffile-prefix-map=/a=b=c -c a.c -o a.o", "", NoDispatchPrefixMap, false},
		{"gcc -fdebug-prefix-map=/a -g -c a.c -o a.o", "", NoDispatchPrefixMap, false},
		{"gcc -fsanitize=undefined -c a.c -o a.o", "", NoDispatchSanitizer, false},
		{"clang -c a.c -o a.o", "", NoDispatchNoTarget, false},
		{"gcc -Wa,--noexecstack -c a.c -o a.o", "", NoDispatchArgument, true},
		{"gcc -fno-builtin-memcpy=/x -c a.c -o a.o", "", NoDispatchArgument, true},
		{"clang -Xclang -fno-pch-timestamp -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchArgument, true},
		{"clang -mllvm -inline-threshold=9 -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchArgument, true},
		{"clang -arch arm64 -c a.c -o a.o", "x86_64-apple-darwin", NoDispatchArgument, true},
		{"gcc -fsome-future-flag=a/b -c a.c -o a.o", "", NoDispatchArgument, true},
		{"gcc -D/x -c a.c -o a.o", "", NoDispatchArgument, true},
	}
	for _, tc := range cases {
		c := mustClassify(t, argv(tc.line), Roots{})
		_, err := c.RemoteCompileArgs(tc.triple)
		var nd *NotDispatchableError
		if !errors.As(err, &nd) || !errors.Is(err, ErrNotDispatchable) {
			t.Errorf("%s: %v, want not dispatchable (%s)", tc.line, err, tc.reason)
			continue
		}
		if nd.Reason != tc.reason || errors.Is(err, argvet.ErrRejectedArgument) != tc.rejected {
			t.Errorf("%s: %v, want reason %q (argvet refusal %v)", tc.line, err, tc.reason, tc.rejected)
		}
	}
}
