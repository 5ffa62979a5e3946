package tubundle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLayout(t *testing.T) {
	b := sample()
	b.Files = append(b.Files, File{Base: "h.h", Debug: "/s/h.h", Macro: "/src/h.h", Content: []byte("x"), HasContent: true})
	dirs, writes, args, input := Layout(b)
	if diff := cmp.Diff([]string{"q/pace-r", "s/pace-r", "pace-f/000000", "pace-f/000002"}, dirs); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
	var paths []string
	for _, w := range writes {
		paths = append(paths, w.Path)
	}
	want := []string{"q/pace-r/000000", "s/pace-r/000001", "pace-f/000000/m.c", "pace-f/000002/h.h"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	wantArgs := []string{"-nostdinc", "-iquote", "q", "-isystem", "s", "-include", "pace-r/000001",
		"-fdebug-prefix-map=q/pace-r/000000=src/m.c", "-fmacro-prefix-map=q/pace-r/000000=./src/m.c",
		"-ffile-prefix-map=pace-f/000000/m.c=src/m.c", "-ffile-prefix-map=pace-f/000001/gen.y=gen.y",
		"-fdebug-prefix-map=pace-f/000002/h.h=/s/h.h", "-fmacro-prefix-map=pace-f/000002/h.h=/src/h.h"}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if input != "q/pace-r/000000" {
		t.Errorf("input %q", input)
	}
}

func TestSourceLanguage(t *testing.T) {
	for in, want := range map[string]string{
		"-O2 -x cpp-output": "-O2 -x c", "-x c++-cpp-output": "-x c++", "-xobjective-c-cpp-output": "-xobjective-c",
		"-x objective-c++-cpp-output -g": "-x objective-c++ -g",
	} {
		got, ok := SourceLanguage(strings.Fields(in))
		if !ok || strings.Join(got, " ") != want {
			t.Errorf("SourceLanguage(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := SourceLanguage([]string{"-O2", "-x", "c"}); ok {
		t.Error("a source language is no preprocessed one")
	}
}

func TestScrubAndLocalize(t *testing.T) {
	built := &Built{Bundle: sample(), Names: []string{"src/m.c", "../gen.y"}}
	stderr := "In file included from pace-f/000000/m.c:3:\npace-f/000001/gen.y:7:2: warning: x [-Wx]\n"
	out, ok, why := Localize([]byte(stderr), built)
	if want := "In file included from src/m.c:3:\n../gen.y:7:2: warning: x [-Wx]\n"; !ok || string(out) != want {
		t.Errorf("Localize = %q, %v (%s); want %q", out, ok, why, want)
	}
	for name, bad := range map[string]string{
		"an unknown file":         "pace-f/000002/h.h:1:1: warning: x\n",
		"a wrong base":            "pace-f/000000/n.c:1:1: warning: x\n",
		"a region's name":         "q/pace-r/000000:1:1: warning: x\n",
		"the scratch directory":   string(Scrub([]byte("/tmp/w/job-1/out.o: warning: x\n"), "/tmp/w/job-1")),
		"a short synthetic name":  "pace-f/00:1: x\n",
		"a name past the numbers": "pace-f/999999/m.c:1: x\n",
	} {
		if _, ok, why := Localize([]byte(bad), built); ok || why == "" {
			t.Errorf("%s: Localize(%q) replays it", name, bad)
		}
	}
	marked := MarkInexact([]byte("pace-f/000000/m.c:1:1: warning: x\n"), "no locale")
	if _, ok, why := Localize(marked, built); ok || why != "the worker says: no locale" {
		t.Errorf("Localize of marked diagnostics: %v, %q", ok, why)
	}
	if got := MarkInexact(nil, "x"); len(got) != 0 {
		t.Errorf("MarkInexact marks no diagnostics: %q", got)
	}
	if got := Scrub([]byte("a /tmp/w/job-1/x b"), "/tmp/w/job-1"); string(got) != "a "+ScratchToken+"/x b" {
		t.Errorf("Scrub = %q", got)
	}
}
