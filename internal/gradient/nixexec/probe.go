package nixexec

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Probe is what this machine's Nix was found able to do. A nil problem means the capability
// works.
type Probe struct {
	Version   string // `nix --version`, e.g. "nix (Nix) 2.8.0"; empty when nix did not answer
	ConfigKey string // digest of the version and of `nix show-config`: a remembered pass holds while it does
	Fetch     *Problem
	Eval      *Problem
	Build     *Problem
	// BuiltNow is whether the trivial build ran in this probe (false: a remembered pass).
	BuiltNow bool
}

// Healthy is whether every capability works.
func (p Probe) Healthy() bool { return p.Fetch == nil && p.Eval == nil && p.Build == nil }

// probeTimeout bounds each step of a probe.
const probeTimeout = 2 * time.Minute

// RunProbe checks, in order: nix answers and its version; git is there (fetch); a trivial
// derivation instantiates, which needs evaluation and a writable store (eval, and fetch, which
// adds sources to the store); the derivation builds (build). The build step, the slow one, is
// skipped when passedBefore says this ConfigKey passed already. Each failing step names the
// problem and its fix; later steps that need it fail with the same problem.
func (n *Nix) RunProbe(ctx context.Context, passedBefore func(configKey string) bool) Probe {
	var p Probe
	version, key, err := n.identify(ctx)
	if err != nil {
		prob := problemOf(err, "nix does not run", "install nix (apt-get install nix-bin)")
		p.Fetch, p.Eval, p.Build = prob, prob, prob
		return p
	}
	p.Version, p.ConfigKey = version, key
	if _, err := n.output(ctx, "git", "--version"); err != nil {
		p.Fetch = problemOf(err, "git does not run", "install git (apt-get install git)")
	}
	drv, err := n.instantiateProbe(ctx)
	if err != nil {
		prob := problemOf(err, "nix cannot instantiate a derivation", "check that this user can write the Nix store")
		p.Eval, p.Build = prob, prob
		p.Fetch = firstProblem(p.Fetch, prob)
		return p
	}
	if passedBefore != nil && passedBefore(key) {
		return p
	}
	p.BuiltNow = true
	if _, err := n.Realise(ctx, drv, BuildOptions{Timeout: probeTimeout}); err != nil {
		p.Build = problemOf(err, "nix cannot build", "see nix's message")
	}
	return p
}

// identify reads nix's version and digests it with the whole effective configuration.
func (n *Nix) identify(ctx context.Context) (version, key string, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := n.output(ctx, "nix", "--version")
	if err != nil {
		return "", "", err
	}
	version = strings.TrimSpace(string(out))
	conf, err := n.output(ctx, "nix", n.nixArgs("show-config", "--json")...)
	if err != nil {
		return version, "", err
	}
	sum := sha256.Sum256(append([]byte(version+"\n"), conf...))
	return version, hex.EncodeToString(sum[:]), nil
}

// probeExpr is a derivation that needs nothing but /bin/sh in the sandbox; the nonce makes
// every probe build it anew.
const probeExpr = `derivation { name = "gradient-worker-probe"; system = builtins.currentSystem;
  builder = "/bin/sh"; args = [ "-c" "echo ok > $out" ]; nonce = "%s"; }`

// instantiateProbe writes a fresh probe derivation into the store and returns its path.
func (n *Nix) instantiateProbe(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := n.output(ctx, "nix-instantiate", n.storeArgs("--expr", fmt.Sprintf(probeExpr, rand.Text()))...)
	if err != nil {
		return "", err
	}
	drv := strings.TrimSpace(string(out))
	if !strings.HasSuffix(drv, ".drv") {
		return "", fmt.Errorf("nix-instantiate printed %.200q, not a derivation", drv)
	}
	return drv, nil
}

// problemOf names a failed step: the set-up problem nix's message shows when it is a known
// one, otherwise what failed and nix's last line.
func problemOf(err error, what, fix string) *Problem {
	if p, ok := Environmental(err); ok {
		return p
	}
	msg := messageOf(err)
	var be *BuildError
	if errors.As(err, &be) {
		msg = be.Message
	}
	if last := lastLine(msg); last != "" {
		what += ": " + last
	}
	return &Problem{What: what, Fix: fix}
}

// firstProblem keeps the first problem found.
func firstProblem(first, next *Problem) *Problem {
	if first != nil {
		return first
	}
	return next
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(oneLine(lines[len(lines)-1]), "error: ")
}
