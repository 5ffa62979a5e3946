package cc

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/tubundle"
)

func TestDefaultDWARF(t *testing.T) {
	for _, tc := range []struct {
		banner, target string
		want           int
	}{
		{"gcc (Debian 12.2.0-14+deb12u1) 12.2.0", "x86_64-linux-gnu", 5},
		{"gcc (GCC) 11.1.0", "x86_64-pc-linux-gnu", 5},
		{"gcc (Ubuntu 10.5.0-1ubuntu1~22.04) 10.5.0", "x86_64-linux-gnu", 4},
		{"gcc-13 (Homebrew GCC 13.2.0) 13.2.0", "aarch64-apple-darwin23", 4},
		{"some compiler", "x86_64-linux-gnu", 4},
	} {
		if got := defaultDWARF(toolchain.Identity{Banner: tc.banner, Target: tc.target}); got != tc.want {
			t.Errorf("%q on %s: DWARF %d, want %d", tc.banner, tc.target, got, tc.want)
		}
	}
}

func TestArgumentsCause(t *testing.T) {
	for line, want := range map[string]ccstats.Cause{
		"gcc -g3 -c a.c -o a.o":                ccstats.CauseDebugInfo,
		"gcc -g -gdwarf-4 -c a.c -o a.o":       ccstats.CauseDebugInfo,
		"clang -g -c a.c -o a.o":               ccstats.CauseDebugColumns,
		"gcc -fsanitize=address -c a.c -o a.o": ccstats.CauseArguments,
		"gcc -Wa,-x -c a.c -o a.o":             ccstats.CauseArguments,
	} {
		args := strings.Fields(line)
		c, err := ccargs.Classify(ccargs.Invocation{Compiler: args[0], Args: args[1:], Cwd: "/b"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.RemoteCompileArgs("x86_64-pc-linux-gnu")
		if got := argumentsCause(err); err == nil || got != want {
			t.Errorf("%s: %v is cause %s, want %s", line, err, got, want)
		}
	}
}

// TestRemoteDiagnosticsReplayOnlyWhatIsExact: a bundle's diagnostics are mapped back; the
// conditions under which a worker's would not be the local compile's keep them from replay.
func TestRemoteDiagnosticsReplayOnlyWhatIsExact(t *testing.T) {
	built := &tubundle.Built{Names: []string{"src/m.c"}, Bundle: &tubundle.Bundle{Files: []tubundle.File{{Base: "m.c"}}}}
	stderr := []byte("pace-f/000000/m.c:3:5: warning: unused variable 'x' [-Wunused-variable]\n")
	newRun := func(line string, env ...string) *run {
		args := strings.Fields(line)
		c, err := ccargs.Classify(ccargs.Invocation{Compiler: args[0], Args: args[1:], Cwd: "/b"})
		if err != nil {
			t.Fatal(err)
		}
		return &run{comp: c, args: args[1:], cfg: Config{KeyEnv: env}}
	}
	exact := remoteSource{built: built, exactLocale: true}
	out, why := newRun("gcc -Wall -c m.c -o m.o").remoteDiagnostics(stderr, exact)
	if want := "src/m.c:3:5: warning: unused variable 'x' [-Wunused-variable]\n"; string(out) != want {
		t.Errorf("replayed %q (%s), want %q", out, why, want)
	}
	for name, tc := range map[string]struct {
		r   *run
		src remoteSource
	}{
		"preprocessed text":     {newRun("gcc -c m.c -o m.o"), remoteSource{exactLocale: true}},
		"another locale":        {newRun("gcc -c m.c -o m.o"), remoteSource{built: built}},
		"GCC_COLORS and colour": {newRun("gcc -fdiagnostics-color=always -c m.c -o m.o", "GCC_COLORS=error=01;35"), exact},
		"JSON diagnostics":      {newRun("gcc -fdiagnostics-format=json -c m.c -o m.o"), exact},
		"URLs forced":           {newRun("gcc -fdiagnostics-urls=always -c m.c -o m.o"), exact},
	} {
		if out, why := tc.r.remoteDiagnostics(stderr, tc.src); out != nil || why == "" {
			t.Errorf("%s: replayed %q", name, out)
		}
	}
	if out, _ := newRun("gcc -fdiagnostics-color=always -c m.c -o m.o").remoteDiagnostics(stderr, exact); out == nil {
		t.Error("forced colour without GCC_COLORS is the worker's colour too")
	}
}

func TestLandsExactly(t *testing.T) {
	built := remoteSource{built: &tubundle.Built{}}
	if !landsExactly([]byte("\x7fELF...main.c..."), built) || landsExactly([]byte("..pace-f/000001/m.c.."), built) ||
		landsExactly([]byte("..q/pace-r/000000.."), built) || !landsExactly([]byte("pace-f/"), remoteSource{}) {
		t.Error("landsExactly misjudges")
	}
}
