package cc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
)

// Version is pace-cc's version.
const Version = "0.1.0"

const usage = `usage: pace-cc <compiler> [compiler arguments...]
       pace-cc --show-stats | -s
       pace-cc --html-stats <file>
       pace-cc --zero-stats | -z
       pace-cc --print-toolchain-fingerprint <compiler>
       pace-cc --version | --help

As a launcher: CC="pace-cc gcc", CMAKE_C_COMPILER_LAUNCHER=pace-cc.
As a masquerade: a symlink named gcc, g++, cc, c++, clang or clang++ (version suffixes allowed)
that runs the real compiler found later on PATH.

Environment: PACE_ADDR (cache, default 127.0.0.1:6674; empty turns caching off),
PACE_SOURCE_DIR and PACE_BINARY_DIR (optional roots: hits shared across checkouts),
PACE_NO_DIRECT, PACE_VERBOSE, PACE_VERIFY=N, PACE_TOKEN/PACE_USER, PACE_CONNECT_TIMEOUT_MS,
PACE_TIMEOUT_MS, PACE_MAX_STORE_BYTES, PACE_PREFETCH_GROUP, PACE_NO_STATS,
PACE_NO_DEPEND (key local misses by the preprocessor instead of the compile's depfile).
`

// IO is the process's surroundings, injected so tests can drive Main.
type IO struct {
	Args   []string // argv, argv[0] included
	Lookup func(string) (string, bool)
	Stdout io.Writer
	Stderr io.Writer
	Cwd    string
	Self   string // path of the running pace-cc binary
}

// Main runs pace-cc and returns its exit status: the compiler's own on a miss, a passthrough or
// a fallback; 0 on a hit; 2 for a usage error (pace-wire §3.13).
func Main(p IO) int {
	// A pace-cc process lives milliseconds and allocates little: collecting garbage would only
	// cost time on the hit path.
	debug.SetGCPercent(-1)
	cfg := ConfigFromEnv(p.Lookup)
	name := filepath.Base(p.Args[0])
	if name != "pace-cc" && ccargs.IsDriverName(name) {
		return compileWith(cfg, p, name, p.Args[1:]) // masquerade
	}
	if len(p.Args) < 2 {
		fmt.Fprint(p.Stderr, usage)
		return 2
	}
	first := p.Args[1]
	if strings.HasPrefix(first, "-") {
		return launcherFlags(cfg, p, p.Args[1:])
	}
	return compileWith(cfg, p, first, p.Args[2:])
}

func compileWith(cfg Config, p IO, compiler string, args []string) int {
	path, _ := p.Lookup("PATH")
	real, err := findCompiler(compiler, p.Self, path)
	if err != nil {
		fmt.Fprintf(p.Stderr, "pace-cc: %v\n", err)
		return 1
	}
	r := &run{cfg: cfg, compiler: real, args: args, cwd: p.Cwd, stdout: p.Stdout, stderr: p.Stderr, start: time.Now()}
	status := r.compile(context.Background())
	r.closeCache()
	if r.hashes != nil {
		_ = r.hashes.Flush() // what this process learned about headers; a failure costs re-reads
	}
	r.rec.TotalMS = ms(time.Since(r.start))
	r.rec.Group = cfg.PrefetchGroup
	_ = ccstats.Append(cfg.StatsDir, r.rec) // statistics never fail a build
	return status
}

func launcherFlags(cfg Config, p IO, args []string) int {
	switch flag, _, _ := strings.Cut(args[0], "="); flag {
	case "--show-stats", "-s":
		return showStats(cfg, p)
	case "--html-stats":
		return htmlStats(cfg, p, args)
	case "--zero-stats", "-z":
		if err := ccstats.Zero(cfg.StatsDir); err != nil {
			fmt.Fprintf(p.Stderr, "pace-cc: %v\n", err)
			return 1
		}
		fmt.Fprintln(p.Stdout, "statistics zeroed")
		return 0
	case "--version":
		fmt.Fprintf(p.Stdout, "pace-cc %s\n", Version)
		return 0
	case "--help", "-h":
		fmt.Fprint(p.Stdout, usage)
		return 0
	case "--print-toolchain-fingerprint":
		return printFingerprint(cfg, p, args[1:])
	}
	fmt.Fprintf(p.Stderr, "pace-cc: unknown option %s\n%s", args[0], usage)
	return 2
}

func showStats(cfg Config, p IO) int {
	rep, err := statsReport(cfg)
	if err == nil {
		err = rep.WriteText(p.Stdout)
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "pace-cc: %v\n", err)
		return 1
	}
	return 0
}

// htmlStats writes the --show-stats report as one HTML page to the file named by
// --html-stats=<file> or the argument after it.
func htmlStats(cfg Config, p IO, args []string) int {
	_, file, inline := strings.Cut(args[0], "=")
	rest := args[1:]
	if !inline && len(rest) > 0 {
		file, rest = rest[0], rest[1:]
	}
	if file == "" || len(rest) > 0 {
		fmt.Fprint(p.Stderr, usage)
		return 2
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(p.Cwd, file)
	}
	rep, err := statsReport(cfg)
	if err == nil {
		err = writeHTMLFile(file, rep)
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "pace-cc: %v\n", err)
		return 1
	}
	fmt.Fprintf(p.Stdout, "statistics written to %s\n", file)
	return 0
}

// statsReport folds the log. Main turned the collector off for a compile's few milliseconds;
// a fold of a large log makes garbage per line, so it gets the collector back and stays in
// bounded memory.
func statsReport(cfg Config) (ccstats.Report, error) {
	debug.SetGCPercent(100)
	s, err := ccstats.Read(cfg.StatsDir)
	if err != nil {
		return ccstats.Report{}, err
	}
	return s.Report(filepath.Join(cfg.StatsDir, ccstats.LogName)), nil
}

func writeHTMLFile(path string, rep ccstats.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html-stats: %w", err)
	}
	werr := rep.WriteHTML(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("--html-stats %s: %w", path, werr)
	}
	return nil
}

func printFingerprint(cfg Config, p IO, args []string) int {
	if len(args) != 1 {
		fmt.Fprint(p.Stderr, usage)
		return 2
	}
	path, _ := p.Lookup("PATH")
	real, err := findCompiler(args[0], p.Self, path)
	if err == nil {
		var id toolchain.Identity
		dir := filepath.Join(cfg.StatsDir, "compilers")
		if id, err = toolchain.Identify(context.Background(), real, dir); err == nil {
			var fp string
			if fp, err = toolchain.Fingerprint(context.Background(), id, dir); err == nil {
				fmt.Fprintf(p.Stdout, "%s %s\n", fp, id.Banner)
				return 0
			}
		}
	}
	fmt.Fprintf(p.Stderr, "pace-cc: %v\n", err)
	return 1
}

// ProcessIO is the real process's IO.
func ProcessIO() IO {
	cwd, _ := os.Getwd()
	self, _ := os.Executable()
	if front := os.Getenv(ccfront.FrontEnv); front != "" {
		// Handed over by the front: its masquerade links are the ones to skip, and the
		// compiler's own children have no use for the variable.
		self = front
		os.Unsetenv(ccfront.FrontEnv)
	}
	return IO{Args: os.Args, Lookup: os.LookupEnv, Stdout: os.Stdout, Stderr: os.Stderr, Cwd: cwd, Self: self}
}
