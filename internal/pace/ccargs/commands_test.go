package ccargs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const leveldbLine = "/usr/bin/c++ -DLEVELDB_PLATFORM_POSIX=1 -I/b/include -I/s/include -O3 -DNDEBUG -std=c++11 -MD -MT CMakeFiles/leveldb.dir/db/db_impl.cc.o -MF CMakeFiles/leveldb.dir/db/db_impl.cc.o.d -o CMakeFiles/leveldb.dir/db/db_impl.cc.o -c /s/db/db_impl.cc"

func mustClassify(t *testing.T, line []string, roots Roots) *Compile {
	t.Helper()
	c, err := Classify(Invocation{Compiler: line[0], Args: line[1:], Cwd: "/b", Roots: roots})
	if err != nil {
		t.Fatalf("Classify(%q): %v", line, err)
	}
	return c
}

// pace-wire §3.5 with pace's change: the probe keeps line markers (no -P), drops output,
// stage and dependency options, and asks for its own depfile.
func TestKeyProbeAndDispatchPreprocess(t *testing.T) {
	c := mustClassify(t, argv(leveldbLine), Roots{})
	wantProbe := argv("-DLEVELDB_PLATFORM_POSIX=1 -I/b/include -I/s/include -O3 -DNDEBUG -std=c++11 /s/db/db_impl.cc -E -MD -MF /tmp/scratch.d")
	if diff := cmp.Diff(wantProbe, c.KeyProbeArgs("/tmp/scratch.d")); diff != "" {
		t.Errorf("KeyProbeArgs (-want +got):\n%s", diff)
	}
	wantPP := argv("-DLEVELDB_PLATFORM_POSIX=1 -I/b/include -I/s/include -O3 -DNDEBUG -std=c++11 /s/db/db_impl.cc -E")
	if diff := cmp.Diff(wantPP, c.DispatchPreprocessArgs()); diff != "" {
		t.Errorf("DispatchPreprocessArgs (-want +got):\n%s", diff)
	}

	p := mustClassify(t, argv("gcc -P -x c++ -c a.c -o a.o -MMD -MP -MQ t -Wall"), Roots{})
	if diff := cmp.Diff(argv("-x c++ a.c -Wall -E -MD -MF s.d"), p.KeyProbeArgs("s.d")); diff != "" {
		t.Errorf("probe keeps -x, drops -P and dependency flags (-want +got):\n%s", diff)
	}
}

func TestKeyArgs(t *testing.T) {
	roots := Roots{Source: "/s", Build: "/b"}
	cases := []struct {
		name  string
		line  string
		roots Roots
		want  string
	}{
		{"leveldb with roots", leveldbLine, roots,
			"-DLEVELDB_PLATFORM_POSIX=1 -I<BUILDTREE>/include -I<SRCROOT>/include -O3 -DNDEBUG -std=c++11 -MD -MT CMakeFiles/leveldb.dir/db/db_impl.cc.o -c <SRCROOT>/db/db_impl.cc"},
		{"leveldb without roots keeps absolute paths", leveldbLine, Roots{},
			"-DLEVELDB_PLATFORM_POSIX=1 -I/b/include -I/s/include -O3 -DNDEBUG -std=c++11 -MD -MT CMakeFiles/leveldb.dir/db/db_impl.cc.o -c /s/db/db_impl.cc"},
		{"no depfile: the output name is not keyed", "gcc -O2 -c -o lapi.o lapi.c", roots,
			"-O2 -c lapi.c"},
		{"implicit depfile target: the output is keyed verbatim", "cc -g -MMD -o /b/adlist.o -c /s/adlist.c", roots,
			"-g -MMD -o /b/adlist.o -c <SRCROOT>/adlist.c"},
		{"separate path values keep their form", "gcc -I /s/inc -isystem /b/gen -include /s/cfg.h --sysroot=/s/sysroot -c /s/a.c -o a.o", roots,
			"-I <SRCROOT>/inc -isystem <BUILDTREE>/gen -include <SRCROOT>/cfg.h --sysroot=<SRCROOT>/sysroot -c <SRCROOT>/a.c"},
		{"prefix map: OLD relativized, NEW literal", "gcc -g -fdebug-prefix-map=/s=/src -ffile-prefix-map=/b/x=. -c /s/a.c -o a.o", roots,
			"-g -fdebug-prefix-map=<SRCROOT>=/src -ffile-prefix-map=<BUILDTREE>/x=. -c <SRCROOT>/a.c"},
		{"targets are never respelled", "gcc -MD -MT /b/a.o -MQ /s/x -c /s/a.c -o /b/a.o", roots,
			"-MD -MT /b/a.o -MQ /s/x -c <SRCROOT>/a.c"},
		{"paths outside the roots and sibling prefixes stay", "gcc -I/s2/inc -I/usr/include -I../rel -c /s/a.c -o a.o", roots,
			"-I/s2/inc -I/usr/include -I../rel -c <SRCROOT>/a.c"},
		{"defines are not paths", "gcc -DDIR=/s/share -c /s/a.c -o a.o", roots,
			"-DDIR=/s/share -c <SRCROOT>/a.c"},
	}
	for _, tc := range cases {
		c := mustClassify(t, argv(tc.line), tc.roots)
		if diff := cmp.Diff(argv(tc.want), c.KeyArgs()); diff != "" {
			t.Errorf("%s: KeyArgs (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A checkout copied to another place keys the same when its roots are set, and apart when
// they are not.
func TestKeyArgsAcrossCheckouts(t *testing.T) {
	a := mustClassify(t, argv("/usr/bin/c++ -I/home/a/ldb/include -I/home/a/build/include -MD -MT x.o -MF x.o.d -o x.o -c /home/a/ldb/db/c.cc"),
		Roots{Source: "/home/a/ldb", Build: "/home/a/build"})
	b := mustClassify(t, argv("/usr/bin/c++ -I/tmp/ldb2/include -I/tmp/ldb2/b2/include -MD -MT x.o -MF x.o.d -o x.o -c /tmp/ldb2/db/c.cc"),
		Roots{Source: "/tmp/ldb2", Build: "/tmp/ldb2/b2"})
	if diff := cmp.Diff(a.KeyArgs(), b.KeyArgs()); diff != "" {
		t.Errorf("relocated checkout keys apart (-a +b):\n%s", diff)
	}
	a.Roots, b.Roots = Roots{}, Roots{}
	if cmp.Equal(a.KeyArgs(), b.KeyArgs()) {
		t.Error("without roots, different absolute paths must key apart")
	}
}
