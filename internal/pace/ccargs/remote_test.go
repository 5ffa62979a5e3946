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
		{"lua", "gcc -std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c -o lapi.o lapi.c", "",
			"-std=gnu99 -O2 -Wall -Wextra -x cpp-output"},
		{"leveldb: includes, defines, deps dropped", leveldbLine, "",
			"-O3 -std=c++11 -x c++-cpp-output"},
		{"redis: -g kept", "cc -pedantic -DREDIS_STATIC= -std=c99 -Wall -W -Wno-missing-field-initializers -O2 -g -ggdb -MMD -o adlist.o -c adlist.c", "",
			"-pedantic -std=c99 -Wall -W -Wno-missing-field-initializers -O2 -g -ggdb -x cpp-output"},
		{"clang: --target first", "clang++ -O2 -fPIC -c a.cc -o a.o", "x86_64-pc-linux-gnu",
			"--target=x86_64-pc-linux-gnu -O2 -fPIC -x c++-cpp-output"},
		{"clang: the build's own target joined and kept after", "clang -target aarch64-linux-gnu -c a.c -o a.o", "x86_64-pc-linux-gnu",
			"--target=x86_64-pc-linux-gnu --target=aarch64-linux-gnu -x cpp-output"},
		{"g++ compiles .c as C++", "g++ -c a.c -o a.o", "", "-x c++-cpp-output"},
		{"-x wins over the extension", "gcc -x c++ -c a.C -o a.o", "", "-x c++-cpp-output"},
		{"objective-c", "gcc -c a.m -o a.o -fobjc-exceptions", "", "-fobjc-exceptions -x objective-c-cpp-output"},
		{"separate values joined", "gcc --param max-inline-insns-single=10 --std c99 -c a.c -o a.o", "",
			"--param=max-inline-insns-single=10 -std=c99 -x cpp-output"},
		{"link-only and path options dropped", "gcc -c a.c -o a.o -Wl,-O1 -L/x -lm -static -I/x -isystem /y --sysroot=/z -fdebug-prefix-map=/a=/b -g", "",
			"-g -x cpp-output"},
		{"a define with a path is harmless: dropped", "gcc -DDATADIR=\"/usr/share\" -c a.c -o a.o", "", "-x cpp-output"},
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
		{"clang -fdebug-macro -g -c a.c -o a.o", "x", NoDispatchMacroDebug, false},
		{"clang -c a.c -o a.o", "", NoDispatchNoTarget, false},
		{"gcc -Wa,--noexecstack -c a.c -o a.o", "", NoDispatchArgument, true},
		{"gcc -fno-builtin-memcpy=/x -c a.c -o a.o", "", NoDispatchArgument, true},
		{"clang -Xclang -fno-pch-timestamp -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchArgument, true},
		{"clang -mllvm -inline-threshold=9 -c a.c -o a.o", "x86_64-pc-linux-gnu", NoDispatchArgument, true},
		{"clang -arch arm64 -c a.c -o a.o", "x86_64-apple-darwin", NoDispatchArgument, true},
		{"gcc -fsome-future-flag=a/b -c a.c -o a.o", "", NoDispatchArgument, true},
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
