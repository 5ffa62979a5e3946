package value

import (
	"testing"
)

var (
	posixRoots   = Roots{SrcRoot: "/home/a/src", BuildTree: "/home/a/src/build"}
	windowsRoots = Roots{SrcRoot: `C:\src`, BuildTree: `C:\src\out`}
)

type rewriteCase struct {
	name  string
	roots Roots
	in    string
	want  string
}

func runCanonicalize(t *testing.T, g Grammar, tests []rewriteCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(CanonicalizeText(g, []byte(tt.in), tt.roots))
			if got != tt.want {
				t.Fatalf("CanonicalizeText(%s)\n in:   %q\n got:  %q\n want: %q", g, tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonicalizeShowIncludes(t *testing.T) {
	runCanonicalize(t, ShowIncludes, []rewriteCase{
		{"posix path", posixRoots, "Note: including file: /home/a/src/inc/x.h\n", "Note: including file: <SRCROOT>/inc/x.h\n"},
		{"nesting blanks and CRLF kept", windowsRoots, "Note: including file:    C:\\src\\inc\\x.h\r\n", "Note: including file:    <SRCROOT>/inc/x.h\r\n"},
		{"indented marker", windowsRoots, "  Note: including file: C:\\src\\out\\gen.h\n", "  Note: including file: <BUILDTREE>/gen.h\n"},
		{"case-insensitive on a Windows layout", windowsRoots, "Note: including file: c:\\SRC\\Inc\\x.h", "Note: including file: <SRCROOT>/Inc/x.h"},
		{"marker not at line start", posixRoots, "x Note: including file: /home/a/src/y.h\n", "x Note: including file: /home/a/src/y.h\n"},
		{"other lines untouched", posixRoots, "a.cpp\n/home/a/src/a.cpp\n", "a.cpp\n/home/a/src/a.cpp\n"},
		{"path with spaces and parentheses", Roots{SrcRoot: `C:\Program Files (x86)\Kit`}, "Note: including file: C:\\Program Files (x86)\\Kit\\um\\w.h\n", "Note: including file: <SRCROOT>/um/w.h\n"},
		{"sibling sharing a prefix", Roots{SrcRoot: "/src"}, "Note: including file: /src2/x.h\n", "Note: including file: /src2/x.h\n"},
		{"outside every root", windowsRoots, "Note: including file: D:\\sdk\\x.h\n", "Note: including file: D:\\sdk\\x.h\n"},
		{"POSIX layout is case-sensitive", posixRoots, "Note: including file: /home/a/SRC/x.h", "Note: including file: /home/a/SRC/x.h"},
	})
}

func TestCanonicalizeMsvcDiagnostics(t *testing.T) {
	runCanonicalize(t, MsvcDiagnostics, []rewriteCase{
		{"line only", windowsRoots, "C:\\src\\a.cpp(12): warning C4996: 'f': was declared deprecated\r\n", "<SRCROOT>/a.cpp(12): warning C4996: 'f': was declared deprecated\r\n"},
		{"line and column", windowsRoots, "C:\\src\\a.cpp(12,5): error C2065: 'x': undeclared identifier\n", "<SRCROOT>/a.cpp(12,5): error C2065: 'x': undeclared identifier\n"},
		{"nested build tree wins", windowsRoots, "C:\\src\\out\\gen.h(1): note: see declaration\n", "<BUILDTREE>/gen.h(1): note: see declaration\n"},
		{"indented note", windowsRoots, "        C:\\src\\b.h(3): note: see 'g'\n", "        <SRCROOT>/b.h(3): note: see 'g'\n"},
		{"parentheses inside the path", Roots{SrcRoot: `C:\Program Files (x86)\Kit`}, "C:\\Program Files (x86)\\Kit\\w.h(7): warning C4005\n", "<SRCROOT>/w.h(7): warning C4005\n"},
		{"message paths untouched", windowsRoots, "C:\\src\\a.cpp(1): note: see C:\\src\\b.h(2):\n", "<SRCROOT>/a.cpp(1): note: see C:\\src\\b.h(2):\n"},
		{"the echoed file name", windowsRoots, "a.cpp\r\n", "a.cpp\r\n"},
		{"not a location", windowsRoots, "C:\\src\\a.cpp(x): y\n", "C:\\src\\a.cpp(x): y\n"},
	})
}

func TestCanonicalizeGnuDiagnostics(t *testing.T) {
	runCanonicalize(t, GnuDiagnostics, []rewriteCase{
		{"line and column", posixRoots, "/home/a/src/a.c:12:5: warning: unused variable ‘x’ [-Wunused-variable]\n", "<SRCROOT>/a.c:12:5: warning: unused variable ‘x’ [-Wunused-variable]\n"},
		{"line only", posixRoots, "/home/a/src/a.c:12: error: x\n", "<SRCROOT>/a.c:12: error: x\n"},
		{"in function", posixRoots, "/home/a/src/a.c: In function ‘main’:\n", "<SRCROOT>/a.c: In function ‘main’:\n"},
		{"at top level", posixRoots, "/home/a/src/a.c: At top level:\n", "<SRCROOT>/a.c: At top level:\n"},
		{"included from", posixRoots, "In file included from /home/a/src/build/gen.h:3,\n", "In file included from <BUILDTREE>/gen.h:3,\n"},
		{"included from with column", posixRoots, "In file included from /home/a/src/a.c:1:10:\n", "In file included from <SRCROOT>/a.c:1:10:\n"},
		{"continuation", posixRoots, "                 from /home/a/src/a.c:1:\n", "                 from <SRCROOT>/a.c:1:\n"},
		{"echoed source and caret untouched", posixRoots, "   12 |   int x = a:1:2:;\n      |       ^\n", "   12 |   int x = a:1:2:;\n      |       ^\n"},
		{"sibling directory", Roots{SrcRoot: "/src"}, "/src2/b.c:1:1: error: e\n", "/src2/b.c:1:1: error: e\n"},
		{"spaces in the root", Roots{SrcRoot: "/home/a/my src"}, "/home/a/my src/c.c:3:1: note: n\n", "<SRCROOT>/c.c:3:1: note: n\n"},
		{"driver lines untouched", posixRoots, "cc1: warning: command-line option ‘-x’\n", "cc1: warning: command-line option ‘-x’\n"},
		{"message paths untouched", posixRoots, "/home/a/src/a.c:3:5: note: previous definition in /home/a/src/b.h:1:1:\n", "<SRCROOT>/a.c:3:5: note: previous definition in /home/a/src/b.h:1:1:\n"},
		{"drive letter", Roots{SrcRoot: "C:/w/src"}, "C:/w/src/a.c:3:5: warning: w\r\nc:\\w\\src\\a.c: In function 'f':\r\n", "<SRCROOT>/a.c:3:5: warning: w\r\n<SRCROOT>/a.c: In function 'f':\r\n"},
		{"colour escapes kept", posixRoots,
			"\x1b[01m\x1b[K/home/a/src/a.c:3:5:\x1b[m\x1b[K \x1b[01;35m\x1b[Kwarning: \x1b[m\x1b[Kw\n" +
				"In file included from \x1b[01m\x1b[K/home/a/src/a.h:1\x1b[m\x1b[K,\n",
			"\x1b[01m\x1b[K<SRCROOT>/a.c:3:5:\x1b[m\x1b[K \x1b[01;35m\x1b[Kwarning: \x1b[m\x1b[Kw\n" +
				"In file included from \x1b[01m\x1b[K<SRCROOT>/a.h:1\x1b[m\x1b[K,\n"},
	})
}

func TestCanonicalizeGccDepfile(t *testing.T) {
	runCanonicalize(t, GccDepfile, []rewriteCase{
		{"dependencies with a continuation", posixRoots,
			"build/a.o: /home/a/src/a.c /home/a/src/inc/x.h \\\n /usr/include/stdio.h\n",
			"build/a.o: <SRCROOT>/a.c <SRCROOT>/inc/x.h \\\n /usr/include/stdio.h\n"},
		{"targets never rewritten", posixRoots,
			"/home/a/src/build/a.o /home/a/src/build/a.d: /home/a/src/a.c\n",
			"/home/a/src/build/a.o /home/a/src/build/a.d: <SRCROOT>/a.c\n"},
		{"-MP phony targets are dependency paths", posixRoots,
			"a.o: /home/a/src/a.h /usr/include/x.h\n\n/home/a/src/a.h:\n\n/usr/include/x.h:\n",
			"a.o: <SRCROOT>/a.h /usr/include/x.h\n\n<SRCROOT>/a.h:\n\n/usr/include/x.h:\n"},
		{"escaped spaces in root and tail", Roots{SrcRoot: "/home/a/my src"},
			"a.o: /home/a/my\\ src/x\\ y.h\n", "a.o: <SRCROOT>/x\\ y.h\n"},
		{"dollar and hash escapes", posixRoots,
			"a.o: /home/a/src/$$d/\\#x.h\n", "a.o: <SRCROOT>/$$d/\\#x.h\n"},
		{"backslashes before an escaped space", posixRoots,
			"a.o: /home/a/src/q\\\\\\ r.h\n", "a.o: <SRCROOT>/q\\\\\\ r.h\n"},
		{"CRLF and CRLF continuation", posixRoots,
			"a.o: /home/a/src/a.c \\\r\n  /home/a/src/b.h\r\n",
			"a.o: <SRCROOT>/a.c \\\r\n  <SRCROOT>/b.h\r\n"},
		{"windows layout", windowsRoots,
			"C:\\src\\out\\a.obj: C:\\src\\a.c C:\\src\\Program\\ Files\\x.h \\\n  c:\\SRC\\b.h C:\\src\\out\\gen.h\n",
			"C:\\src\\out\\a.obj: <SRCROOT>/a.c <SRCROOT>/Program\\ Files/x.h \\\n  <SRCROOT>/b.h <BUILDTREE>/gen.h\n"},
		{"windows phony rule keeps its drive colon", windowsRoots,
			"a.obj: C:\\src\\a.h\n\nC:\\src\\a.h:\n", "a.obj: <SRCROOT>/a.h\n\n<SRCROOT>/a.h:\n"},
		{"sibling sharing a prefix", Roots{SrcRoot: "/src"}, "a.o: /src2/x.h /src/y.h\n", "a.o: /src2/x.h <SRCROOT>/y.h\n"},
		{"comment line", posixRoots, "# /home/a/src/x.h\na.o: /home/a/src/x.h\n", "# /home/a/src/x.h\na.o: <SRCROOT>/x.h\n"},
		{"bare POSIX root", Roots{SrcRoot: "/"}, "a.o: /usr/include/x.h rel.h\n", "a.o: <SRCROOT>/usr/include/x.h rel.h\n"},
		{"bare drive root", Roots{SrcRoot: `C:\`}, "a.obj: C:\\x\\y.h D:\\z.h\n", "a.obj: <SRCROOT>/x/y.h D:\\z.h\n"},
		{"root itself", posixRoots, "a.o: /home/a/src\n", "a.o: <SRCROOT>\n"},
		{"no final newline", posixRoots, "a.o: /home/a/src/a.c", "a.o: <SRCROOT>/a.c"},
		{"tabs between tokens", posixRoots, "a.o:\t/home/a/src/a.c\t/home/a/src/b.c\n", "a.o:\t<SRCROOT>/a.c\t<SRCROOT>/b.c\n"},
		{"root given with a trailing separator", Roots{SrcRoot: "/home/a/src/"}, "a.o: /home/a/src/a.c\n", "a.o: <SRCROOT>/a.c\n"},
	})
}

func TestEmptyRootsChangeNothing(t *testing.T) {
	in := []byte("a.o: /home/a/src/a.c\n")
	for g := ShowIncludes; g <= GnuDiagnostics; g++ {
		if out := CanonicalizeText(g, in, Roots{}); &out[0] != &in[0] {
			t.Fatalf("%s: empty roots copied or changed the text", g)
		}
	}
	v := Value{Object: []byte("o"), Regions: []Region{{Grammar: GccDepfile, Text: in}}}
	if got := Canonicalize(v, Roots{}); &got.Regions[0] != &v.Regions[0] {
		t.Fatal("Canonicalize with empty roots rebuilt the value")
	}
}

func TestLocalize(t *testing.T) {
	tests := []struct {
		name  string
		g     Grammar
		roots Roots
		in    string
		want  string
	}{
		{"posix consumer", GnuDiagnostics, Roots{SrcRoot: "/work/src"}, "<SRCROOT>/a.c:1:2: w\n", "/work/src/a.c:1:2: w\n"},
		{"windows consumer uses its separators", ShowIncludes, Roots{SrcRoot: `D:\w\src`}, "Note: including file: <SRCROOT>/inc/x.h\r\n", "Note: including file: D:\\w\\src\\inc\\x.h\r\n"},
		{"forward-slash windows consumer", MsvcDiagnostics, Roots{SrcRoot: "D:/w"}, "<SRCROOT>/a.cpp(3): w\n", "D:/w/a.cpp(3): w\n"},
		{"depfile re-escapes the consumer's root", GccDepfile, Roots{SrcRoot: "/w/my dir"}, "a.o: <SRCROOT>/x\\ y.h\n", "a.o: /w/my\\ dir/x\\ y.h\n"},
		{"token without a consumer root stays", GccDepfile, Roots{SrcRoot: "/w"}, "a.o: <BUILDTREE>/g.h <SRCROOT>/a.c\n", "a.o: <BUILDTREE>/g.h /w/a.c\n"},
		{"bare consumer root", GccDepfile, Roots{SrcRoot: "/"}, "a.o: <SRCROOT>/usr/x.h <SRCROOT>\n", "a.o: /usr/x.h /\n"},
		{"consumer root with trailing separator", GnuDiagnostics, Roots{BuildTree: `D:\b\`}, "<BUILDTREE>/g.h:1:1: e\n", "D:\\b\\g.h:1:1: e\n"},
		{"a token prefix of a longer word is not a token", GnuDiagnostics, Roots{SrcRoot: "/w"}, "<SRCROOT>x/a.c:1:1: e\n", "<SRCROOT>x/a.c:1:1: e\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(LocalizeText(tt.g, []byte(tt.in), tt.roots)); got != tt.want {
				t.Fatalf("LocalizeText\n got:  %q\n want: %q", got, tt.want)
			}
		})
	}
}

func TestCanonicalizeEncodedReturnsThePayloadWhenNothingChanges(t *testing.T) {
	payload := mustEncode(t, Value{Object: []byte("obj"), Regions: []Region{{Grammar: GnuDiagnostics, Text: []byte("/elsewhere/a.c:1:1: w\n")}}})
	got, err := CanonicalizeEncoded(payload, posixRoots)
	if err != nil || &got[0] != &payload[0] {
		t.Fatalf("CanonicalizeEncoded = %q, %v; want the payload itself", got, err)
	}
}

func TestCanonicalizeEncodedRewritesRegionsAndKeepsTheObject(t *testing.T) {
	object := []byte("/home/a/src/a.c is not text to rewrite")
	payload := mustEncode(t, Value{Object: object, Regions: []Region{
		{Grammar: ShowIncludes, Text: nil},
		{Grammar: GnuDiagnostics, Text: []byte("/home/a/src/a.c:1:1: w\n")},
		{Grammar: GccDepfile, Text: []byte("/home/a/src/build/a.o: /home/a/src/a.c\n")},
	}})
	got, err := CanonicalizeEncoded(payload, posixRoots)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Object) != string(object) {
		t.Fatalf("object changed: %q", v.Object)
	}
	if s := string(v.Regions[RegionStderr].Text); s != "<SRCROOT>/a.c:1:1: w\n" {
		t.Fatalf("stderr = %q", s)
	}
	if s := string(v.Regions[RegionDepfile].Text); s != "/home/a/src/build/a.o: <SRCROOT>/a.c\n" {
		t.Fatalf("depfile = %q", s)
	}
}

func TestCanonicalizeEncodedRefusesWhatIsNotOurValue(t *testing.T) {
	if _, err := CanonicalizeEncoded([]byte("plain bytes"), posixRoots); err == nil {
		t.Fatal("accepted bytes that are not a value")
	}
	foreign := mustEncode(t, Value{Object: []byte("o")})
	foreign[0] = 2
	if _, err := CanonicalizeEncoded(foreign, Roots{}); err == nil {
		t.Fatal("accepted a foreign generation")
	}
}
