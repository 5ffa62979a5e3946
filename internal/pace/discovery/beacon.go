package discovery

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
)

func (e *Engine) beaconLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for {
		e.beaconRound(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beaconRound sends this node's beacon to every target, the interface set or the names
// re-read each round so that an address gained or lost is followed.
func (e *Engine) beaconRound(ctx context.Context) {
	b := discoverywire.AppendBeacon(nil, e.refreshSelf())
	if _, err := discoverywire.Parse(b); err != nil {
		if e.logDue("own summary") {
			e.cfg.Log.Warn("discovery is not beaconing: this node's summary is not one its peers would accept", "err", err)
		}
		return
	}
	targets := e.currentTargets(ctx)
	e.mu.Lock()
	e.sentTo = targets
	e.mu.Unlock()
	for _, to := range targets {
		if e.send(b, to) {
			e.counters.BeaconsSent.Add(1)
		}
	}
}

func (e *Engine) currentTargets(ctx context.Context) []netip.AddrPort {
	port := e.BeaconAddr().Port()
	if len(e.targets) == 0 {
		return e.interfaceTargets(port)
	}
	var out []netip.AddrPort
	for _, t := range e.targets {
		a, err := t.resolve(ctx, port)
		if err != nil {
			if e.logDue("resolve " + t.host) {
				e.cfg.Log.Warn("discovery skips a beacon target this round", "target", t.host, "err", err)
			}
			continue
		}
		out = appendNew(out, a)
	}
	return out
}

// interfaceTargets reads the interfaces and logs why none is eligible whenever that set
// of reasons changes, so a machine that beacons nowhere says so once, not every round.
func (e *Engine) interfaceTargets(port uint16) []netip.AddrPort {
	ifaces, err := e.cfg.Interfaces()
	if err != nil {
		if e.logDue("interfaces") {
			e.cfg.Log.Warn("discovery could not list the interfaces; no beacons this round", "err", err)
		}
		return nil
	}
	targets, skipped := broadcastTargets(ifaces, port)
	why := ""
	if len(targets) == 0 {
		why = strings.Join(append(skipped, "no other interface"), "; ")
	}
	e.mu.Lock()
	changed := why != e.lastSkip
	e.lastSkip = why
	e.mu.Unlock()
	switch {
	case changed && why != "":
		e.cfg.Log.Warn("discovery has no interface to beacon on: name a target with --discovery", "skipped", why)
	case changed:
		e.cfg.Log.Info("discovery beacons again", "targets", targets)
	}
	return targets
}
