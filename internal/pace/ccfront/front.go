package ccfront

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/hitmemo"
)

// FullName is the program the front hands over to, looked for beside the front unless
// PACE_CC_FULL names it.
const FullName = "pace-cc-full"

// FrontEnv tells pace-cc-full the path of the front that handed over, so that it skips the
// front's masquerade links when it looks for the real compiler.
const FrontEnv = "PACE_CC_FRONT"

// IO is the process's surroundings, injected so tests can drive Main.
type IO struct {
	Args    []string // argv, argv[0] included
	Lookup  func(string) (string, bool)
	Environ []string // the environment handed on by exec
	Stdout  io.Writer
	Stderr  io.Writer
	Cwd     string
	Self    string // path of the running front binary
	// Exec replaces the process (syscall.Exec); it returns only on failure.
	Exec func(path string, argv, env []string) error
	Now  func() time.Time
}

// ProcessIO is the real process's IO.
func ProcessIO() IO {
	cwd, _ := os.Getwd()
	self, _ := os.Executable()
	return IO{Args: os.Args, Lookup: os.LookupEnv, Environ: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
		Cwd: cwd, Self: self, Exec: syscall.Exec, Now: time.Now}
}

// Main serves the invocation from the hit memo and exits 0, or hands it to pace-cc-full,
// whose exit status becomes this process's.
func Main(p IO) int {
	f := &front{p: p, start: p.Now()}
	why := f.serve()
	if why == "" {
		return 0
	}
	return f.handOver(why)
}

// front is one invocation of the front.
type front struct {
	p        IO
	start    time.Time
	cfg      config
	compiler string // the real compiler, once resolved
	args     []string
}

// serve returns "" after a hit, else why the invocation goes to pace-cc-full. Nothing is
// written to an output or a stream before the hit is certain.
func (f *front) serve() string {
	cfg, why := configFrom(f.p.Lookup)
	if why != "" {
		return why
	}
	f.cfg = cfg
	name, args, why := f.command()
	if why != "" {
		return why
	}
	path, _ := f.p.Lookup("PATH")
	real, err := FindCompiler(name, f.p.Self, path)
	if err != nil {
		return "compiler not resolved"
	}
	f.compiler, f.args = real, args
	key := hitmemo.Key(hitmemo.Invocation{Compiler: real, Cwd: f.p.Cwd, Args: args, Env: hitmemo.EnvLines(f.p.Lookup)})
	e, why := f.memo(key)
	if why != "" {
		f.passThroughIfNotACompile()
		return why
	}
	return f.hit(e)
}

// command splits argv like pace-cc: a masquerade link, or the launcher form with the compiler
// first. Launcher flags and usage errors are pace-cc-full's.
func (f *front) command() (string, []string, string) {
	argv := f.p.Args
	if len(argv) == 0 {
		return "", nil, "no arguments"
	}
	if name := filepath.Base(argv[0]); name != "pace-cc" && ccargs.IsDriverName(name) {
		return name, argv[1:], ""
	}
	if len(argv) < 2 || strings.HasPrefix(argv[1], "-") {
		return "", nil, "not a compile"
	}
	return argv[1], argv[2:], ""
}

// handOver execs pace-cc-full with this process's arguments and environment. Should that
// fail, the compile still runs: the real compiler, uncached.
func (f *front) handOver(why string) int {
	if f.cfg.verbose {
		fmt.Fprintf(f.p.Stderr, "pace-cc: front: %s: handing over to %s\n", why, FullName)
	}
	full := f.fullPath()
	env := make([]string, 0, len(f.p.Environ)+1)
	for _, kv := range f.p.Environ {
		if !strings.HasPrefix(kv, FrontEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, FrontEnv+"="+f.p.Self)
	err := f.p.Exec(full, f.p.Args, env)
	fmt.Fprintf(f.p.Stderr, "pace-cc: cannot run %s: %v\n", full, err)
	if f.compiler == "" {
		return 1
	}
	fmt.Fprintf(f.p.Stderr, "pace-cc: compiling uncached\n")
	err = f.p.Exec(f.compiler, append([]string{f.compiler}, f.args...), f.p.Environ)
	fmt.Fprintf(f.p.Stderr, "pace-cc: cannot run %s: %v\n", f.compiler, err)
	return 1
}

func (f *front) fullPath() string {
	if p, _ := f.p.Lookup("PACE_CC_FULL"); p != "" {
		return p
	}
	return filepath.Join(filepath.Dir(f.p.Self), FullName)
}
