// Package nixexectest makes what tests of gradient's Nix executor and worker need: the
// repository's own Nix configuration for every nix they run (UseProjectConfig, Main), and a
// git repository holding a small flake whose derivations build with /bin/sh alone (no
// nixpkgs), unique per call so that tests never find each other's outputs already built.
package nixexectest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
)

// Flake is a test flake committed to a fresh git repository.
type Flake struct {
	Dir    string // the repository (a git work tree)
	URL    string // file:// URL to clone from
	Commit string // the commit holding the flake
	System string // the local Nix system the derivations are for
	// Nonce makes this flake's derivations unique; SleepArg is the argument the "sleeper"
	// and "slow" builders pass to sleep, unique too, to find leftover processes by.
	Nonce    string
	SleepArg string
	// Gate is the file the "gated" builder waits for: a build a test holds running for as
	// long as it needs (to kill a process mid-build) and then releases with OpenGate.
	Gate string
}

// OpenGate lets every "gated" build of this flake finish.
func (f Flake) OpenGate(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(f.Gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// CloseGate makes "gated" builds that start from now on wait again.
func (f Flake) CloseGate(t testing.TB) {
	t.Helper()
	if err := os.Remove(f.Gate); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// Ref is the flake reference of the repository at Commit.
func (f Flake) Ref() string { return "git+file://" + f.Dir + "?rev=" + f.Commit }

// flakeTemplate has these outputs (SYSTEM, NONCE and SLEEP are replaced):
//
//	packages.SYSTEM.{a,b,c}  c depends on a and b; a has timeout 3600 and maxSilent 600,
//	                          b has pname "bee", c prefers local builds and no substitutes
//	tests.SYSTEM.slow         sleeps 10 s with timeout = 2
//	tests.SYSTEM.silent       prints a line, then is silent 10 s with maxSilent = 2
//	tests.SYSTEM.fail         exits 1
//	tests.SYSTEM.sleeper      prints "started", then sleeps 60 s
//	tests.SYSTEM.fod          a fixed-output derivation (its output is "hello\n")
//	tests.SYSTEM.needy        depends on slow (for dependent-of-a-timeout cases)
//	tests.SYSTEM.gated        prints "waiting", then waits until the file GATE exists
//	tests.SYSTEM.gated2       the same, a second derivation (the gate can be closed again)
//	tests.SYSTEM.ticking      prints "tick N" every 0.2 s until the file GATE exists
//	bad.SYSTEM.{broken,ok,notdrv}  a throw, a derivation (a) and a plain set
const flakeTemplate = `{
  description = "gradient test flake NONCE";
  outputs = { self }: let
    system = "SYSTEM";
    nonce = "NONCE";
    mk = name: script: extra: derivation ({
      inherit name system nonce;
      builder = "/bin/sh";
      args = [ "-c" script ];
      PATH = "/usr/bin:/bin";
    } // extra);
    a = mk "a" "echo building a; echo a-${nonce} > $out" { timeout = 3600; maxSilent = 600; };
    b = mk "b" "echo building b; echo b-${nonce} > $out" { pname = "bee"; };
    c = mk "c" "echo building c; cat ${a} ${b} > $out" { preferLocalBuild = true; allowSubstitutes = false; };
    slow = mk "slow" "echo start; sleep SLEEP; echo > $out" { timeout = 2; };
  in {
    packages.${system} = { inherit a b c; };
    tests.${system} = {
      inherit slow;
      silent = mk "silent" "echo start; sleep 10; echo > $out" { maxSilent = 2; };
      fail = mk "fail" "echo failing >&2; exit 1" { };
      sleeper = mk "sleeper" "echo started; sleep SLEEP; echo > $out" { };
      fod = derivation {
        name = "fod"; inherit system; builder = "/bin/sh"; args = [ "-c" "echo hello > $out" ];
        outputHashMode = "flat"; outputHashAlgo = "sha256";
        outputHash = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
      };
      needy = mk "needy" "cat ${slow} > $out" { };
      gated = mk "gated" "echo waiting; while [ ! -e GATE ]; do sleep 0.2; done; echo opened > $out" { };
      gated2 = mk "gated2" "echo waiting; while [ ! -e GATE ]; do sleep 0.2; done; echo opened > $out" { };
      ticking = mk "ticking" "i=0; while [ ! -e GATE ]; do i=$((i+1)); echo tick $i; sleep 0.2; done; echo opened > $out" { };
    };
    bad.${system} = { broken = throw "boom"; ok = a; notdrv = { x = 1; }; };
  };
}
`

// NewFlake commits a fresh test flake for the local system in a temporary repository.
func NewFlake(t testing.TB) Flake {
	t.Helper()
	RequireNix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := nixexec.New(nixexec.Options{}).ShowConfig(ctx)
	if err != nil {
		t.Fatalf("nix show-config: %v", err)
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	n := binary.LittleEndian.Uint64(r[:]) % 1e9
	f := Flake{Dir: t.TempDir(), System: cfg.System, Nonce: fmt.Sprintf("n%09d", n), SleepArg: fmt.Sprintf("60.%09d", n)}
	// The builder runs in the sandbox, which sees the gate directory and no other host path.
	f.Gate = filepath.Join(gateDir, "gate-"+f.Nonce)
	t.Cleanup(func() { os.Remove(f.Gate) })
	f.URL = "file://" + f.Dir
	text := strings.NewReplacer("SYSTEM", f.System, "NONCE", f.Nonce, "SLEEP", f.SleepArg, "GATE", f.Gate).Replace(flakeTemplate)
	f.Commit = CommitFlake(t, f.Dir, text)
	return f
}

// CommitFlake writes text as dir/flake.nix, commits it in a new git repository there and
// returns the commit.
func CommitFlake(t testing.TB, dir, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "flake.nix"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.email=test@example.invalid", "-c", "user.name=test",
			"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet")
	git("add", "flake.nix")
	git("commit", "--quiet", "-m", "test flake")
	return git("rev-parse", "HEAD")
}

// RequireNix fails the test when nix, nix-store or git is missing: `make test` installs them
// (scripts/deps.sh), so their absence is a broken machine, not a reason to skip. It also fails
// a test whose package runs nix without the project's configuration (see UseProjectConfig).
func RequireNix(t testing.TB) {
	t.Helper()
	if gateDir == "" {
		t.Fatal("nixexectest: the package's TestMain must call UseProjectConfig (or Main) first")
	}
	for _, bin := range []string{"nix", "nix-store", "git"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed (scripts/deps.sh test installs nix-bin and git): %v", bin, err)
		}
	}
}

// SleepersLeft counts live processes running `sleep <arg>`.
func SleepersLeft(arg string) int {
	entries, _ := os.ReadDir("/proc")
	left := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 2 && filepath.Base(args[0]) == "sleep" && args[1] == arg && !zombie(e.Name()) {
			left++
		}
	}
	return left
}

func zombie(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}
