package ccargs

import "testing"

func TestDebugAndMacroNames(t *testing.T) {
	cases := []struct {
		line, path, debug, macro string
	}{
		{"gcc -c a.c -o a.o", "/src/a.c", "/src/a.c", "/src/a.c"},
		{"gcc -fdebug-prefix-map=/src=/s -c a.c -o a.o", "/src/x/a.h", "/s/x/a.h", "/src/x/a.h"},
		{"gcc -fmacro-prefix-map=/src=. -c a.c -o a.o", "/src/x/a.h", "/src/x/a.h", "./x/a.h"},
		{"gcc -ffile-prefix-map=/src=/s -c a.c -o a.o", "/src/a.h", "/s/a.h", "/s/a.h"},
		// the last map given is tried first, and the first match wins: no chaining
		{"gcc -fdebug-prefix-map=/src=/a -fdebug-prefix-map=/src/x=/b -c a.c -o a.o", "/src/x/a.h", "/b/a.h", "/src/x/a.h"},
		{"gcc -fdebug-prefix-map=/src/x=/b -fdebug-prefix-map=/src=/a -c a.c -o a.o", "/src/x/a.h", "/a/x/a.h", "/src/x/a.h"},
		{"gcc -fdebug-prefix-map=/a=/src -fdebug-prefix-map=/src=/z -c a.c -o a.o", "/a/f.h", "/src/f.h", "/a/f.h"},
		// plain prefixes, as gcc compares them: no separator boundary
		{"gcc -fdebug-prefix-map=/sr=/X -c a.c -o a.o", "/src/a.h", "/Xc/a.h", "/src/a.h"},
		{"gcc -fdebug-prefix-map==/root/ -c a.c -o a.o", "inc/a.h", "/root/inc/a.h", "inc/a.h"},
		{"gcc --debug-prefix-map=/b=. -c a.c -o a.o", "/b/a.c", "./a.c", "/b/a.c"},
	}
	for _, tc := range cases {
		c := mustClassify(t, argv(tc.line), Roots{})
		if got := c.DebugName(tc.path); got != tc.debug {
			t.Errorf("%s: DebugName(%q) = %q, want %q", tc.line, tc.path, got, tc.debug)
		}
		if got := c.MacroName(tc.path); got != tc.macro {
			t.Errorf("%s: MacroName(%q) = %q, want %q", tc.line, tc.path, got, tc.macro)
		}
	}
}
