package tubundle

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree is an in-memory checkout: what Build's Read sees.
type tree map[string]string

func (t tree) source(text string) Source {
	return Source{
		Text: []byte(text), SourceName: "m.c", Locale: LocaleC,
		Read: func(name string) ([]byte, error) {
			if c, ok := t[name]; ok {
				return []byte(c), nil
			}
			return nil, fs.ErrNotExist
		},
		Debug: func(n string) string { return strings.Replace(n, "/src/", "/s/", 1) },
		Macro: func(n string) string { return n },
	}
}

// gccText is gcc 12's directives-only output for tree's m.c with -g -DFOO: the working
// directory, a built-in, the command line's define and stdc-predef.h, then the main file.
func gccText(main string) string {
	return "# 0 \"m.c\"\n# 1 \"/src//\"\n# 0 \"<built-in>\"\n#define __STDC__ 1\n" +
		"# 0 \"<command-line>\"\n#define FOO 1\n# 0 \"<command-line>\"\n" +
		"# 1 \"/usr/include/stdc-predef.h\" 1 3 4\n#define _STDC_PREDEF_H 1\n# 0 \"<command-line>\" 2\n" +
		"# 1 \"m.c\"\n" + main
}

const predef = "#define _STDC_PREDEF_H 1\n"

var basic = tree{
	"m.c":                        "#include \"h.h\"\n#include <sys.h>\nint main(void) { return H; }\n",
	"h.h":                        "#define H  2 /* two */\nint h;\n",
	"/usr/include/sys.h":         "#define S(x) \\\n  (x)\n",
	"/usr/include/stdc-predef.h": "#define _STDC_PREDEF_H 1\n",
}

const basicMain = "# 1 \"h.h\" 1\n#define H 2\nint h;\n# 2 \"m.c\" 2\n" +
	"# 1 \"/usr/include/sys.h\" 1 3 4\n#define S(x) (x)\n# 3 \"m.c\" 2\nint main(void) { return H; }\n"

func TestBuildSplitsFileEntriesIntoRegions(t *testing.T) {
	built, err := Build(basic.source(gccText(basicMain)))
	if err != nil {
		t.Fatal(err)
	}
	b := built.Bundle
	wantNames := []string{"m.c", "/usr/include/stdc-predef.h", "h.h", "/usr/include/sys.h"}
	if diff := cmp.Diff(wantNames, built.Names); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	want := []Region{
		{Text: []byte("#line 1 \"pace-f/000000/m.c\"\n#include \"pace-r/000002\"\n#include \"pace-r/000003\"\nint main(void) { return H; }\n")},
		{System: true, Text: []byte("#line 1 \"pace-f/000001/stdc-predef.h\"\n#define _STDC_PREDEF_H 1\n")},
		// the directive lines are the files' own again, comment and continuation included
		{Text: []byte("#line 1 \"pace-f/000002/h.h\"\n#define H  2 /* two */\nint h;\n")},
		{System: true, Text: []byte("#line 1 \"pace-f/000003/sys.h\"\n#define S(x) \\\n  (x)\n")},
	}
	if diff := cmp.Diff(want, b.Regions); diff != "" {
		t.Errorf("regions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, b.Forced); diff != "" {
		t.Errorf("forced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(File{Base: "m.c", Debug: "m.c", Macro: "m.c"}, b.Source); diff != "" || b.Files[3].Debug != "/usr/include/sys.h" {
		t.Errorf("names: source %+v, sys.h %+v", b.Source, b.Files[3])
	}
	if string(b.Files[2].Content) != basic["h.h"] || !b.Files[2].HasContent || built.Inexact != "" {
		t.Errorf("h.h shipped as %q (read %v), inexact %q", b.Files[2].Content, b.Files[2].HasContent, built.Inexact)
	}
	if err := Screen(b); err != nil {
		t.Errorf("the worker's screen refuses what Build made: %v", err)
	}
}

func TestBuildJumpsAndRenames(t *testing.T) {
	files := tree{"m.c": "int a;\n#if 0\nx\n#endif\nint b;\n#line 7 \"gen.y\"\nint c;\n", "/usr/include/stdc-predef.h": predef}
	main := "int a;\n# 5 \"m.c\"\nint b;\n# 7 \"gen.y\"\nint c;\n# 2 \"gen.y\"\nint d;\n# 300000 \"gen.y\"\nint e;\n"
	built, err := Build(files.source(gccText(main)))
	if err != nil {
		t.Fatal(err)
	}
	want := "#line 1 \"pace-f/000000/m.c\"\nint a;\n\n\n\nint b;\n#line 7 \"pace-f/000002/gen.y\"\nint c;\n" +
		"#line 2\nint d;\n#line 300000\nint e;\n"
	if got := string(built.Bundle.Regions[0].Text); got != want {
		t.Errorf("main region:\n%s\nwant:\n%s", got, want)
	}
	if built.Bundle.Files[2].HasContent {
		t.Error("gen.y does not exist, yet has content")
	}
}

func TestBuildRefuses(t *testing.T) {
	pragma := func(p string) tree {
		return tree{"m.c": "#include \"h.h\"\nint m;\n", "h.h": p + "\nint h;\n", "/usr/include/stdc-predef.h": predef}
	}
	const viaH = "# 1 \"h.h\" 1\n\nint h;\n# 2 \"m.c\" 2\nint m;\n"
	cases := []struct {
		name  string
		files tree
		text  string
	}{
		{"push_macro is lost", pragma(`#pragma push_macro("X")`), gccText(viaH)},
		{"a _Pragma pop_macro", pragma(`_Pragma("pop_macro(\"X\")")`), gccText(viaH)},
		{"message is lost", pragma(`#pragma message ("m")`), gccText(viaH)},
		{"redefine_extname is lost", pragma(`#  pragma redefine_extname a b`), gccText(viaH)},
		{"GCC poison is lost", pragma(`#pragma GCC poison x`), gccText(viaH)},
		{"system_header in a user header", pragma(`#pragma GCC system_header`), gccText(viaH)},
		{"a line that is not the file's", basic, gccText(strings.Replace(basicMain, "int h;", "int g;", 1))},
		{"a directive that is another", basic, gccText(strings.Replace(basicMain, "#define H 2", "#undef H", 1))},
		{"a comment that reads like a marker", tree{"m.c": "/*\n# 7 \"m.c\"\n*/\n", "/usr/include/stdc-predef.h": predef},
			gccText("/*\n# 7 \"m.c\"\n*/\n")},
		{"a leave marker for another file", basic, gccText(strings.Replace(basicMain, "# 2 \"m.c\" 2", "# 2 \"x.c\" 2", 1))},
		{"text that ends inside a header", basic, gccText("# 1 \"h.h\" 1\n#define H 2\n")},
		{"no main marker", basic, "int x;\n"},
		{"a marker turning a user header into a system one", basic, gccText("# 1 \"h.h\" 1\n# 2 \"h.h\" 3\nint h;\n# 2 \"m.c\" 2\n")},
		{"a base name that cannot be carried", tree{"m.c": "", "a b.h": "", "/usr/include/stdc-predef.h": predef},
			gccText("# 1 \"a b.h\" 1\n# 1 \"m.c\" 2\n")},
	}
	for _, tc := range cases {
		if built, err := Build(tc.files.source(tc.text)); !errors.Is(err, ErrUnbuildable) {
			t.Errorf("%s: Build = %v, %v; want ErrUnbuildable", tc.name, built, err)
		}
	}
}

func TestBuildNotesADirectiveItCannotRestore(t *testing.T) {
	// Without trigraphs ??/ is no continuation, with them it is: which lines the define
	// spans cannot be read for sure, so it stays as gcc wrote it.
	files := tree{"m.c": "#define A  1 ??/\n  + 2;\nint a = A;\n", "/usr/include/stdc-predef.h": predef}
	built, err := Build(files.source(gccText("#define A 1 ??/\n  + 2;\nint a = A;\n")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(built.Inexact, "m.c:1") {
		t.Errorf("Inexact = %q, want it to name m.c:1", built.Inexact)
	}
	if _, ok, why := Localize([]byte("m.c:3:9: warning: x\n"), built); ok || why != built.Inexact {
		t.Errorf("Localize replays diagnostics of an inexact bundle (%v, %q)", ok, why)
	}
	if out, ok, _ := Localize(nil, built); !ok || len(out) != 0 {
		t.Error("no diagnostics are always exact")
	}
}

func TestBuildBounds(t *testing.T) {
	var main strings.Builder
	files := tree{"m.c": "", "/usr/include/stdc-predef.h": predef}
	for i := 0; i <= MaxFiles; i++ {
		fmt.Fprintf(&main, "# 1 \"h%d.h\" 1\n# 1 \"m.c\" 2\n", i)
		files[fmt.Sprintf("h%d.h", i)] = ""
	}
	if _, err := Build(files.source(gccText(main.String()))); !errors.Is(err, ErrUnbuildable) {
		t.Errorf("Build of %d files = %v, want ErrUnbuildable", MaxFiles+2, err)
	}
}
