package worker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestSurveyRealCompilers surveys a directory of driver names pointing at
// the machine's gcc and g++: aliases of one binary are served once,
// non-executables and tools that are not drivers are left out, and every
// fingerprint is the one package toolchain computes for pace-cc.
func TestSurveyRealCompilers(t *testing.T) {
	dir := t.TempDir()
	gcc, gxx := realGCC(t), lookPath(t, "g++")
	links := map[string]string{"gcc": gcc, "gcc-99": gcc, "x86_64-linux-gnu-gcc": gcc, "g++": gxx, "gcc-ar": gcc}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "clang"), []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	res, err := Survey(context.Background(), SurveyConfig{SearchDirs: []string{dir, "relative/bin"}, Prober: ToolchainProber{CacheDir: cache}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Searched) != 1 || res.Searched[0] != dir {
		t.Errorf("searched %q; relative entries must never be searched", res.Searched)
	}
	if len(res.Served) != 2 {
		t.Fatalf("served %+v, want gcc and g++ once each", res.Served)
	}
	for _, tc := range res.Served {
		id, err := toolchain.Identify(context.Background(), tc.Path, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := toolchain.Fingerprint(context.Background(), id, "")
		if err != nil {
			t.Fatal(err)
		}
		if tc.Fingerprint != want {
			t.Errorf("%s: fingerprint %s, pace-cc computes %s", tc.Path, tc.Fingerprint, want)
		}
		if tc.Flavor != argvet.FlavorGcc || !strings.HasPrefix(tc.Label, "g") || len(strings.Fields(tc.Label)) != 2 {
			t.Errorf("%s: flavor %s label %q", tc.Path, tc.Flavor, tc.Label)
		}
	}
	if len(res.Dropped) != 1 || filepath.Base(res.Dropped[0].Compiler) != "clang" {
		t.Errorf("dropped %+v, want the non-executable clang", res.Dropped)
	}
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("needs %s: %v", name, err)
	}
	return p
}

// fakeProber answers from a table keyed by compiler path and counts calls.
type fakeProber struct {
	fp    map[string]string // resolved path → fingerprint; missing = unidentifiable
	calls atomic.Int32
}

func (p *fakeProber) Identify(_ context.Context, c string) (toolchain.Identity, error) {
	p.calls.Add(1)
	if _, ok := p.fp[c]; !ok {
		return toolchain.Identity{}, toolchain.ErrNoBanner
	}
	return toolchain.Identity{Compiler: c, Banner: "gcc (Fake 1) 9.8.7", Flavor: toolchain.GCC}, nil
}

func (p *fakeProber) Fingerprint(_ context.Context, id toolchain.Identity) (string, error) {
	return p.fp[id.Compiler], nil
}

func executables(t *testing.T, names ...string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		paths[n] = p
	}
	return dir, paths
}

// TestSurveyDeduplicatesByFingerprint: two binaries with one fingerprint
// are one toolchain, the first found in search order; an unidentifiable
// compiler is dropped with its reason.
func TestSurveyDeduplicatesByFingerprint(t *testing.T) {
	dir1, p1 := executables(t, "gcc-12", "clang++")
	dir2, p2 := executables(t, "gcc")
	fp := func(c byte) string { return strings.Repeat(string(c), 64) }
	prober := &fakeProber{fp: map[string]string{p1["gcc-12"]: fp('a'), p2["gcc"]: fp('a')}}
	res, err := Survey(context.Background(), SurveyConfig{SearchDirs: []string{dir1, dir2}, Prober: prober})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Served) != 1 || res.Served[0].Path != p1["gcc-12"] || res.Served[0].Label != "gcc 9.8.7" {
		t.Fatalf("served %+v", res.Served)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Compiler != p1["clang++"] || !strings.Contains(res.Dropped[0].Reason, "identified") {
		t.Fatalf("dropped %+v", res.Dropped)
	}
}

// TestPinsServeExactlyThatSet: naming any --toolchain serves exactly the
// pins (never merged with a survey), and a pinned fingerprint is never
// probed.
func TestPinsServeExactlyThatSet(t *testing.T) {
	_, paths := executables(t, "gcc", "clang")
	prober := &fakeProber{fp: map[string]string{paths["clang"]: strings.Repeat("c", 64)}}
	pinned := strings.Repeat("d", 64)
	res, err := Survey(context.Background(), SurveyConfig{
		Pins:       []Pin{{Fingerprint: pinned, Compiler: paths["gcc"]}, {Compiler: paths["clang"]}, {Compiler: "/nonexistent/gcc"}},
		SearchDirs: []string{"/usr/bin"}, Prober: prober,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Served) != 2 || res.Served[0].Fingerprint != pinned || !res.Served[0].Pinned || res.Served[1].Path != paths["clang"] {
		t.Fatalf("served %+v", res.Served)
	}
	if res.Served[0].Flavor != argvet.FlavorGcc || res.Served[1].Flavor != argvet.FlavorClang {
		t.Errorf("flavors %s %s", res.Served[0].Flavor, res.Served[1].Flavor)
	}
	if n := prober.calls.Load(); n != 1 {
		t.Fatalf("prober called %d times; only the unpinned compiler may be probed", n)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Compiler != "/nonexistent/gcc" {
		t.Fatalf("dropped %+v", res.Dropped)
	}
}

// TestSurveyWithNothingLeftRefusesNamingWhereItLooked (pace-node §5.6).
func TestSurveyWithNothingLeftRefusesNamingWhereItLooked(t *testing.T) {
	empty := t.TempDir()
	_, err := Survey(context.Background(), SurveyConfig{SearchDirs: []string{empty}, Prober: &fakeProber{}})
	if !errors.Is(err, ErrNoToolchains) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("err = %v", err)
	}
	_, err = Survey(context.Background(), SurveyConfig{NoDiscovery: true})
	if !errors.Is(err, ErrNoToolchains) || !strings.Contains(err.Error(), "--no-toolchain-discovery") {
		t.Fatalf("err = %v", err)
	}
}

// TestResurveySwapsTheServedSet: a re-survey stops serving a fingerprint
// that went away at once and wakes the heartbeat.
func TestResurveySwapsTheServedSet(t *testing.T) {
	f := newFixture(t, withoutLeaseChecks()).start()
	<-f.w.Changes()
	other := strings.Repeat("e", 64)
	if _, err := f.w.Resurvey(context.Background(), SurveyConfig{Pins: []Pin{{Fingerprint: other, Compiler: realGCC(t)}}}); err != nil {
		t.Fatal(err)
	}
	if tcs := f.w.Toolchains(); len(tcs) != 1 || tcs[0].Fingerprint != other {
		t.Fatalf("served %+v", tcs)
	}
	select {
	case <-f.w.Changes():
	default:
		t.Fatal("a re-survey did not signal a change")
	}
	if o := f.compile(f.request(tinyTU, "-O2", "-x", "cpp-output")); o.refusal.Code != wire.CodeFingerprintMismatch {
		t.Fatalf("old fingerprint answered %v", o.refusal)
	}
}

func TestParsePin(t *testing.T) {
	fp := strings.Repeat("0f", 32)
	cases := []struct {
		in      string
		want    Pin
		invalid bool
	}{
		{"gcc-12", Pin{Compiler: "gcc-12"}, false},
		{fp + "=/usr/bin/gcc", Pin{Fingerprint: fp, Compiler: "/usr/bin/gcc"}, false},
		{"/opt/a=b/gcc", Pin{Compiler: "/opt/a=b/gcc"}, false},
		{strings.ToUpper(fp) + "=/usr/bin/gcc", Pin{Compiler: strings.ToUpper(fp) + "=/usr/bin/gcc"}, false},
		{fp + "=", Pin{}, true},
		{"", Pin{}, true},
	}
	for _, tc := range cases {
		got, err := ParsePin(tc.in)
		if (err != nil) != tc.invalid || got != tc.want {
			t.Errorf("ParsePin(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func TestBannerLabels(t *testing.T) {
	cases := []struct{ name, banner, want string }{
		{"/usr/bin/gcc", "gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0", "gcc 12.2.0"},
		{"g++-13", "g++-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", "g++ 13.3.0"},
		{"gcc", "gcc (GCC) 13.2.1 20230801", "gcc 13.2.1"},
		{"clang", "Debian clang version 14.0.6", "clang 14.0.6"},
		{"clang++-18", "Ubuntu clang version 18.1.3 (1ubuntu1)", "clang++ 18.1.3"},
		{"clang", "clang version 17.0.6 (https://github.com/llvm/llvm-project 6009708b)", "clang 17.0.6"},
		{"/opt/mycc", "", "mycc"},
	}
	for _, tc := range cases {
		if got := labelOf(tc.name, tc.banner); got != tc.want {
			t.Errorf("labelOf(%q, %q) = %q, want %q", tc.name, tc.banner, got, tc.want)
		}
	}
}
