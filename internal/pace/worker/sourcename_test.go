package worker

import (
	"regexp"
	"testing"
)

// TestSanitizeSourceName follows pace-wire §3.10.
func TestSanitizeSourceName(t *testing.T) {
	cases := map[string]string{
		"src/a.c":                "a.c",
		`C:\proj\lib\x.cpp`:      "x.cpp",
		"c:x.cc":                 "x.cc",
		"main.cxx":               "main.cxx",
		"objc/view.m":            "view.m",
		"view.mm":                "view.mm",
		"start.S":                "start.S",
		"start.s":                "start.cpp",
		"a.C":                    "a.cpp",
		"lib.v2+x_y-z.cc":        "lib.v2+x_y-z.cc",
		"noext":                  "noext.cpp",
		"notes.txt":              "notes.cpp",
		".hidden.c":              "tu.c",
		"dir/":                   "tu.cpp",
		"":                       "tu.cpp",
		"has space.c":            "tu.c",
		"uni\u00e9.c":            "tu.c",
		"con.c":                  "tu.c",
		"CON.c":                  "tu.c",
		"nul.tar.c":              "tu.c",
		"com1.cpp":               "tu.cpp",
		"LPT9.c":                 "tu.c",
		"com0.c":                 "com0.c",
		"console.c":              "console.c",
		"../../etc/passwd":       "passwd.cpp",
		"a\x00b.c":               "tu.c",
		string(make([]byte, 65)): "tu.cpp",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.c":  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.c",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.c": "tu.c",
	}
	for in, want := range cases {
		if got := SanitizeSourceName(in); got != want {
			t.Errorf("SanitizeSourceName(%q) = %q, want %q", in, got, want)
		}
	}
}

var sanitizedShape = regexp.MustCompile(`^[A-Za-z0-9_+\-][A-Za-z0-9._+\-]{0,63}\.(cpp|cc|cxx|c|m|mm|S)$`)

// FuzzSanitizeSourceName: whatever a client sends, the scratch name is a
// single harmless component with a fixed-set extension.
func FuzzSanitizeSourceName(f *testing.F) {
	for _, s := range []string{"a.c", "../x", `c:\con.cpp`, "", ".", "..", "a/b/c.mm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := SanitizeSourceName(name)
		if !sanitizedShape.MatchString(got) {
			t.Fatalf("SanitizeSourceName(%q) = %q", name, got)
		}
		if isWindowsDevice(got[:len(got)-len(extOf(got))]) {
			t.Fatalf("SanitizeSourceName(%q) = %q, a device name", name, got)
		}
	})
}

func extOf(name string) string {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '.' {
			return name[i:]
		}
	}
	return ""
}
