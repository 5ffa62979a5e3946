package tubundle

import (
	"errors"
	"testing"
)

// bundleOf is a bundle whose main region is text, with three more regions and two files.
func bundleOf(text string) *Bundle {
	return &Bundle{
		Locale: LocaleC, Source: File{Base: "m.c", Debug: "m.c", Macro: "m.c"},
		Files:   []File{{Base: "m.c"}, {Base: "h.h"}},
		Regions: []Region{{Text: []byte(text)}, {}, {}, {}},
	}
}

func TestScreenAccepts(t *testing.T) {
	for name, text := range map[string]string{
		"plain":                   "#line 1 \"pace-f/000000/m.c\"\nint a;\n#include \"pace-r/000001\"\n#include \"pace-r/000002\"  \n",
		"defines, pragmas, ident": "#define X(a) #a /* #include \"x\" */\n#undef X\n#pragma GCC diagnostic push\n#pragma once\n#ident \"v1\"\n#sccs \"v\"\n#\n",
		"a #line back":            "#line 7\n#line 12 \"pace-f/000001/h.h\"\n",
		"directive-like comments": "/*\n#if 0\n#include <x.h>\n*/\n// #include \"y\"\n/* one */ /* two\n#error\n*/ int x;\n",
		"strings":                 "const char *s = \"/*\";\n#define Q \"*/ #include \\\"x\\\"\"\nchar c = '\"';\n",
		"a define continued":      "#define M \\\n  #x\n",
		"digit separators":        "int big = 1'000'000;\n#pragma once\n",
		"a paste at a line start": "#define P(a,b) a \\\n## b\n",
		"raw string in C++":       "auto r = R\"d(ok)d\";\n",
	} {
		if err := Screen(bundleOf(text)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestScreenRejects(t *testing.T) {
	for name, text := range map[string]string{
		"an include of a real file":     "#include \"/etc/passwd\"\n",
		"an include in angles":          "#include <pace-r/000001>\n",
		"an include by a macro":         "#define F \"pace-r/000001\"\n#include F\n",
		"an include of the main region": "#include \"pace-r/000000\"\n",
		"an include of no region":       "#include \"pace-r/000004\"\n",
		"a region included twice":       "#include \"pace-r/000001\"\n#include \"pace-r/000001\"\n",
		"a trailing comment":            "#include \"pace-r/000001\" /* x */\n",
		"include_next":                  "#include_next <x.h>\n",
		"import":                        "#import \"x.h\"\n",
		"embed":                         "#embed \"x\"\n",
		"a conditional":                 "#if __has_include(\"/etc/passwd\")\n#endif\n",
		"a GNU line marker":             "# 1 \"/etc/passwd\"\nint x = ;\n",
		"a #line naming a real file":    "#line 1 \"/etc/passwd\"\n",
		"a #line with another base":     "#line 1 \"pace-f/000001/x.h\"\n",
		"a #line past the files":        "#line 1 \"pace-f/000002/h.h\"\n",
		"a #line by a macro":            "#define L 1 \"/etc/passwd\"\n#line L\n",
		"a #line 0":                     "#line 0\n",
		"pragma dependency":             "#pragma GCC dependency \"/etc/passwd\"\n",
		"pragma dependency, commented":  "#pragma /* a\n b */ GCC dependency \"/etc/passwd\"\n",
		"error":                         "#error x\n",
		"after a comment":               "/* c */ #include \"x\"\n",
		"after a comment over lines":    "/* c\n c */ #include \"x\"\n",
		"a spliced name":                "#inc\\\nlude \"x\"\n",
		"a spliced line start":          "int a; \\\n\n#include \"x\"\n",
		"a splice with space after":     "#inc\\  \nlude \"x\"\n",
		"CR line breaks":                "int a;\r#include \"x\"\r",
		"NULs before the hash":          "\x00\x00#include \"x\"\n",
		"digraph":                       "%:include \"x\"\n",
		"trigraph":                      "??=include \"x\"\n",
		"a trigraph splice, off":        "// note ??/\n#include \"x\"\n",
		"a trigraph splice, on":         "/* ??/\n*??/\n/ #include \"x\"\n",
		"a quote made a caret by ??'":   "int a = 1 ??' 2; /* ' */\n#include \"x\"\n",
		"a separator hiding a comment":  "int a = 1'2'/*';\n#include \"x\"\n",
		"after a raw string":            "auto r = R\"x(/*)x\";\n#include \"y\"\n",
		"inside a raw string":           "auto r = R\"x(\n#include \"y\"\n)x\";\n",
		"an identifier name":            "#ïnclude \"x\"\n",
		"a dollar name":                 "#include$ \"x\"\n",
	} {
		err := Screen(bundleOf(text))
		if !errors.Is(err, ErrRejected) {
			t.Errorf("%s: Screen(%q) = %v, want a rejection", name, text, err)
		}
	}
}

func TestScreenForcedRegions(t *testing.T) {
	b := bundleOf("#include \"pace-r/000001\"\n")
	b.Forced = []int{2, 3}
	if err := Screen(b); err != nil {
		t.Errorf("forced regions apart from the included: %v", err)
	}
	b.Forced = []int{1}
	if err := Screen(b); !errors.Is(err, ErrRejected) {
		t.Errorf("a forced region also included: %v", err)
	}
	b.Forced = []int{2, 2}
	if err := Screen(b); !errors.Is(err, ErrRejected) {
		t.Errorf("a region forced twice: %v", err)
	}
}

func TestReadingsCoverWhatTheTextCouldMean(t *testing.T) {
	cases := map[string]int{
		"int a;": 1, "a ??= b": 2, "what?? no": 1, `R"x()x"`: 2, `u8R"x()x"`: 2, `FOR"x"`: 1,
		"1'2": 2, "0x1F'ff": 2, "don't": 1, "u8'a'": 1, "??= R\"()\" 1'2": 8,
	}
	for text, want := range cases {
		if got := len(readingsFor([]byte(text))); got != want {
			t.Errorf("%q: %d readings, want %d", text, got, want)
		}
	}
	seen := map[reading]bool{}
	for _, r := range readingsFor([]byte("??= R\"()\" 1'2")) {
		seen[r] = true
	}
	if len(seen) != 8 {
		t.Errorf("readings repeat: %v", seen)
	}
}
