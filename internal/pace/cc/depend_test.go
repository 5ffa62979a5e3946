package cc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
)

// Which misses are compiled here in depend mode and which are keyed by the preprocessor
// (pace-wire §3.6.1).
func TestDependModeDecision(t *testing.T) {
	const sched = "10.0.0.9:6674"
	cases := []struct {
		name string
		line string
		cfg  Config
		want string // "" = depend mode; else a word of the refusal
	}{
		{"no fleet, no depfile", "gcc -O2 -c a.c -o a.o", Config{}, ""},
		{"no fleet, -g", "gcc -O0 -g -c a.c -o a.o", Config{}, ""},
		{"no fleet, the command's own depfile", "gcc -MMD -MP -MF a.dep -MT a -c a.c -o a.o", Config{}, ""},
		{"direct mode off", "gcc -c a.c -o a.o", Config{NoDirect: true}, "PACE_NO_DIRECT"},
		{"depend mode off", "gcc -c a.c -o a.o", Config{NoDepend: true}, "PACE_NO_DEPEND"},
		{"a fleet takes a dispatchable miss", "gcc -O2 -c a.c -o a.o", Config{Scheduler: sched}, "fleet"},
		{"a fleet cannot take assembly output", "gcc -O2 -S a.c -o a.s", Config{Scheduler: sched}, ""},
		{"a fleet cannot take -g3", "gcc -g3 -c a.c -o a.o", Config{Scheduler: sched}, ""},
		{"a fleet cannot take a refused argument", "gcc -fuse-ld=gold -c a.c -o a.o", Config{Scheduler: sched}, ""},
		{"depfile to /dev/null", "gcc -MD -MF /dev/null -c a.c -o a.o", Config{}, "/dev/null"},
		{"clang recording its command line", "clang -grecord-command-line -c a.c -o a.o", Config{}, "records the command line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := strings.Fields(tc.line)
			comp, err := ccargs.Classify(ccargs.Invocation{Compiler: f[0], Args: f[1:], Cwd: "/b"})
			if err != nil {
				t.Fatal(err)
			}
			r := &run{cfg: tc.cfg, comp: comp, id: toolchain.Identity{Target: "x86_64-linux-gnu"}}
			got := r.dependRefusal()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("refusal %q, want one naming %q", got, tc.want)
			}
		})
	}
}

// The race guard: a file stamped at or after the floor may have changed under the compile.
func TestStampedSince(t *testing.T) {
	floor := time.Unix(1000, 500)
	at := func(m, c int64) syscall.Stat_t {
		return syscall.Stat_t{Mtim: syscall.NsecToTimespec(m), Ctim: syscall.NsecToTimespec(c)}
	}
	cases := []struct {
		st   syscall.Stat_t
		want bool
	}{
		{at(999e9, 999e9), false},
		{at(1000e9+499, 1000e9+499), false},
		{at(1000e9+500, 999e9), true}, // modified at the floor itself
		{at(999e9, 1000e9+501), true}, // content put back with an old mtime: ctime moved
		{at(2000e9, 2000e9), true},
	}
	for i, tc := range cases {
		if got := stampedSince(tc.st, floor); got != tc.want {
			t.Errorf("case %d: %v, want %v", i, got, tc.want)
		}
	}
}

// fileClock reads the clock writes are stamped from: a write after reading it is never
// stamped before it (the precise clock could stand a tick ahead of the stamp).
func TestAWriteAfterTheFileClockIsStampedSinceIt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.h")
	for i := 0; i < 200; i++ {
		floor := fileClock()
		if err := os.WriteFile(p, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if !stampedSince(st, floor) {
			t.Fatalf("write %d stamped %v, before the floor %v", i, time.Unix(0, st.Mtim.Nano()), floor)
		}
	}
}

func TestConfigNoDepend(t *testing.T) {
	if c := ConfigFromEnv(envOf(map[string]string{})); c.NoDepend {
		t.Fatal("depend mode off by default")
	}
	if c := ConfigFromEnv(envOf(map[string]string{"PACE_NO_DEPEND": "1"})); !c.NoDepend {
		t.Fatal("PACE_NO_DEPEND=1 ignored")
	}
}
