package worker

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/health"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// DefaultProbeInterval is how often a worker whose Nix cannot do everything probes it again.
const DefaultProbeInterval = time.Minute

// probeFile, in the base directory, holds the configuration key of the last probe that built:
// while nix's version and configuration stay the same, a restart does not build again.
const probeFile = "nix-probe"

// nixHealth is what the worker knows of its own Nix (gradient-server §8.3): the last probe, and
// whether a set-up failure in a job since then makes it stale. The worker offers only what
// the probe found working and tells the server why it withholds the rest.
type nixHealth struct {
	nix  *nixexec.Nix
	log  *slog.Logger
	file string

	mu      sync.Mutex
	probe   nixexec.Probe
	probed  bool
	stale   bool
	offered wire.GradientCapabilities // what the live session offered; a probe that changes it ends the session

	recheck chan struct{} // a set-up failure asks for a probe now
	changed chan struct{} // the probe changed what the worker can offer
}

func newNixHealth(nix *nixexec.Nix, log *slog.Logger, baseDir string) *nixHealth {
	return &nixHealth{nix: nix, log: log, file: filepath.Join(baseDir, probeFile),
		recheck: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
}

// ensure probes when nothing was probed yet or a failure made the last probe stale.
func (h *nixHealth) ensure(ctx context.Context) {
	h.mu.Lock()
	due := !h.probed || h.stale
	h.mu.Unlock()
	if due {
		h.check(ctx)
	}
}

// check probes now, logs one line per capability that does not work (what and how to fix
// it), and remembers a probe that built.
func (h *nixHealth) check(ctx context.Context) nixexec.Probe {
	p := h.nix.RunProbe(ctx, h.passedBefore)
	if ctx.Err() != nil {
		return p // a stop cut the probe short: keep what was known
	}
	h.mu.Lock()
	was, known := h.probe, h.probed
	h.probe, h.probed, h.stale = p, true, false
	h.mu.Unlock()
	for prob, caps := range byProblem(p) {
		h.log.Error("worker: nix cannot "+strings.Join(caps, ", ")+"; not offering it", "problem", prob.What, "fix", prob.Fix, "nix", p.Version)
	}
	if p.Healthy() && (!known || !was.Healthy()) {
		h.log.Info("worker: nix can fetch, evaluate and build", "nix", p.Version, "built", p.BuiltNow)
	}
	if p.Healthy() && p.BuiltNow {
		if err := writeFileAtomic(h.file, []byte(p.ConfigKey+"\n")); err != nil {
			h.log.Warn("worker: cannot remember the probe", "err", err)
		}
	}
	return p
}

// passedBefore is whether the remembered probe built with this configuration key.
func (h *nixHealth) passedBefore(key string) bool {
	b, err := os.ReadFile(h.file)
	return err == nil && string(bytes.TrimSpace(b)) == key
}

// problems are the last probe's failing capabilities by name.
func problems(p nixexec.Probe) map[string]*nixexec.Problem {
	out := map[string]*nixexec.Problem{}
	for c, prob := range map[string]*nixexec.Problem{health.Fetch: p.Fetch, health.Eval: p.Eval, health.Build: p.Build} {
		if prob != nil {
			out[c] = prob
		}
	}
	return out
}

// byProblem groups the last probe's failing capabilities by their problem, so one broken set-up
// is one log line.
func byProblem(p nixexec.Probe) map[nixexec.Problem][]string {
	out := map[nixexec.Problem][]string{}
	for _, c := range []string{health.Fetch, health.Eval, health.Build} {
		if prob := problems(p)[c]; prob != nil {
			out[*prob] = append(out[*prob], c)
		}
	}
	return out
}

// offer is base without what the last probe found broken: flake jobs need fetch and eval,
// build jobs need build.
func (h *nixHealth) offer(base wire.GradientCapabilities) wire.GradientCapabilities {
	h.mu.Lock()
	defer h.mu.Unlock()
	return offerFor(base, h.probe)
}

func offerFor(base wire.GradientCapabilities, p nixexec.Probe) wire.GradientCapabilities {
	base.Fetch = base.Fetch && p.Fetch == nil
	base.Eval = base.Eval && p.Eval == nil
	base.Build = base.Build && p.Build == nil
	return base
}

// unavailable is the report the server shows: each capability the worker withholds and why.
func (h *nixHealth) unavailable(base wire.GradientCapabilities) health.Unavailable {
	h.mu.Lock()
	defer h.mu.Unlock()
	u := health.Unavailable{}
	wanted := map[string]bool{health.Fetch: base.Fetch, health.Eval: base.Eval, health.Build: base.Build}
	for c, prob := range problems(h.probe) {
		if wanted[c] {
			u[c] = prob.Error()
		}
	}
	return u
}

// offering records what a session offered, so a later probe knows whether it changed.
func (h *nixHealth) offering(c wire.GradientCapabilities) {
	h.mu.Lock()
	h.offered = c
	h.mu.Unlock()
}

// setupFailed records a job's set-up failure: the last probe no longer holds (nor does the
// remembered one), and a probe runs now.
func (h *nixHealth) setupFailed(p *nixexec.Problem) {
	h.log.Warn("worker: a job failed on this machine's Nix set-up; probing again", "problem", p.What, "fix", p.Fix)
	h.mu.Lock()
	h.stale = true
	h.mu.Unlock()
	_ = os.Remove(h.file)
	select {
	case h.recheck <- struct{}{}:
	default:
	}
}

// watch probes after every set-up failure, and every interval while something does not
// work; when a probe changes what the worker can offer, it says so on changed.
func (h *nixHealth) watch(ctx context.Context, base wire.GradientCapabilities, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.recheck:
		case <-t.C:
			h.mu.Lock()
			healthy := h.probe.Healthy()
			h.mu.Unlock()
			if healthy {
				continue
			}
		}
		h.check(ctx)
		h.mu.Lock()
		differs := offerFor(base, h.probe) != h.offered
		h.mu.Unlock()
		if differs {
			select {
			case h.changed <- struct{}{}:
			default:
			}
		}
	}
}
