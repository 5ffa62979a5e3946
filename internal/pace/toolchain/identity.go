package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Flavor is the compiler driver's kind, from its own banner.
type Flavor int

const (
	GCC Flavor = iota
	Clang
)

func (f Flavor) String() string {
	if f == Clang {
		return "clang"
	}
	return "gcc"
}

// Identity is what a cache key records about the compiler.
type Identity struct {
	Compiler string // resolved path of the driver
	Banner   string // first line of --version
	Target   string // -dumpmachine
	Flavor   Flavor
}

// String is the identity as it enters a cache key: banner, newline, target.
func (id Identity) String() string { return id.Banner + "\n" + id.Target }

// ErrNoBanner reports a compiler that printed no version banner.
var ErrNoBanner = errors.New("toolchain: compiler printed no version banner")

// probeTimeout bounds each run of the compiler made to identify it.
const probeTimeout = 10 * time.Second

// Identify returns the identity of compiler (a path), from cacheDir when the compiler's witnesses
// still hold, else by running it. An empty cacheDir disables the cache.
func Identify(ctx context.Context, compiler, cacheDir string) (Identity, error) {
	real, err := filepath.EvalSymlinks(compiler)
	if err != nil {
		return Identity{}, fmt.Errorf("toolchain: resolving %s: %w", compiler, err)
	}
	file := ""
	if cacheDir != "" {
		file = cachePath(cacheDir, "id", real)
		if c, ok := loadCached(file); ok && c.values["banner"] != "" {
			return identityFrom(real, c.values), nil
		}
	}
	w, err := statWitness(real)
	if err != nil {
		return Identity{}, err
	}
	id, err := probeIdentity(ctx, real)
	if err != nil {
		return Identity{}, err
	}
	if file != "" {
		vals := map[string]string{"banner": id.Banner, "target": id.Target, "flavor": id.Flavor.String()}
		_ = storeCached(file, cached{witnesses: []witness{w}, values: vals}) // a failed write costs a re-probe
	}
	return id, nil
}

func identityFrom(real string, v map[string]string) Identity {
	id := Identity{Compiler: real, Banner: v["banner"], Target: v["target"]}
	if v["flavor"] == "clang" {
		id.Flavor = Clang
	}
	return id
}

func probeIdentity(ctx context.Context, real string) (Identity, error) {
	out, err := run(ctx, real, "--version")
	if err != nil {
		return Identity{}, err
	}
	banner, _, _ := strings.Cut(out, "\n")
	banner = strings.TrimSpace(banner)
	if banner == "" {
		return Identity{}, fmt.Errorf("%w: %s", ErrNoBanner, real)
	}
	target, err := run(ctx, real, "-dumpmachine")
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Compiler: real, Banner: banner, Target: strings.TrimSpace(target)}
	if strings.Contains(out, "clang version") {
		id.Flavor = Clang
	}
	return id, nil
}

// run executes the compiler with a fixed locale and returns its standard output.
func run(ctx context.Context, prog string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("toolchain: %s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
