package tier

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// downWindow decorates an upstream with the memory of its failure (pace-node §4 rule 4). After
// an exchange fails as unreachable, every operation for the window is answered errUpstreamDown
// without touching the network, so a dead upstream costs a build nothing. When the window has
// passed, exactly one operation goes through as a probe while the others keep answering at
// once; the probe's failure opens a new window. Any answer, from the probe or from an exchange
// begun before the window opened, ends it.
type downWindow struct {
	next   upstream
	now    func() time.Time
	window time.Duration
	log    *slog.Logger
	addr   string

	mu        sync.Mutex
	downUntil time.Time // zero while the upstream is up
	probing   bool
}

func newDownWindow(next upstream, window time.Duration, now func() time.Time, log *slog.Logger, addr string) *downWindow {
	return &downWindow{next: next, now: now, window: window, log: log, addr: addr}
}

func (d *downWindow) Fetch(ctx context.Context, key []byte) ([]byte, bool, error) {
	probe, ok := d.admit()
	if !ok {
		return nil, false, errUpstreamDown
	}
	v, hit, err := d.next.Fetch(ctx, key)
	d.record(ctx, probe, err)
	return v, hit, err
}

func (d *downWindow) Store(ctx context.Context, key, group, value []byte) error {
	probe, ok := d.admit()
	if !ok {
		return errUpstreamDown
	}
	err := d.next.Store(ctx, key, group, value)
	d.record(ctx, probe, err)
	return err
}

func (d *downWindow) Close() error { return d.next.Close() }

// down reports whether the upstream is remembered down now.
func (d *downWindow) down() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.downUntil.IsZero()
}

// admit decides whether an operation may reach the upstream, and whether it is the probe.
func (d *downWindow) admit() (probe, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.downUntil.IsZero():
		return false, true
	case d.probing || d.now().Before(d.downUntil):
		return false, false
	}
	d.probing = true
	return true, true
}

// record learns from an exchange's outcome. One abandoned by its own caller (a cancelled
// context) teaches nothing about the upstream.
func (d *downWindow) record(ctx context.Context, probe bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if probe {
		d.probing = false
	}
	switch {
	case ctx.Err() != nil:
	case isDown(err):
		if d.downUntil.IsZero() {
			d.log.Warn("cache tier: upstream unreachable; answering misses without it for a while",
				"upstream", d.addr, "window", d.window, "err", err)
		}
		d.downUntil = d.now().Add(d.window)
	case !d.downUntil.IsZero():
		d.log.Info("cache tier: upstream answers again", "upstream", d.addr)
		d.downUntil = time.Time{}
	}
}
