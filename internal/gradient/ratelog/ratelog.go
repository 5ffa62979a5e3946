// Package ratelog bounds how fast what strangers do can reach gradient-server's log: a
// slog.Handler in front of another that lets a burst of records through and then one per
// interval, drops the rest, and says how many it dropped on the next record it passes. The
// server logs malformed openings, protocol violations and refused connections through it, so
// a flood of them costs a bounded number of lines.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a handler's budget.
type Config struct {
	// Burst records may pass at once (at least 1).
	Burst int
	// Every is how often the budget regains one record (a zero Every never refills).
	Every time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Handler passes records to the next handler within its budget. Handlers made by WithAttrs
// and WithGroup share the budget of the one they came from.
type Handler struct {
	next slog.Handler
	b    *bucket
}

// bucket is a token bucket counting what it refused.
type bucket struct {
	cfg        Config
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	pending    uint64 // dropped since the last record passed
	suppressed atomic.Uint64
}

// New wraps next with the budget cfg.
func New(next slog.Handler, cfg Config) *Handler {
	cfg.Burst = max(cfg.Burst, 1)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handler{next: next, b: &bucket{cfg: cfg, tokens: float64(cfg.Burst), last: cfg.Now()}}
}

// Suppressed is how many records the budget has dropped so far.
func (h *Handler) Suppressed() uint64 { return h.b.suppressed.Load() }

// SuppressedCounter is the counter behind Suppressed, for exporting it as a metric.
func (h *Handler) SuppressedCounter() *atomic.Uint64 { return &h.b.suppressed }

// Enabled is the next handler's answer: a record below its level costs no budget.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle passes r when the budget allows, with a "suppressed" attribute counting the records
// dropped since the previous one passed.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	dropped, ok := h.b.take()
	if !ok {
		return nil
	}
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Uint64("suppressed", dropped))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs shares the budget.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), b: h.b}
}

// WithGroup shares the budget.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), b: h.b}
}

// take spends one record of the budget; it returns how many were dropped before it.
func (b *bucket) take() (dropped uint64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	if b.cfg.Every > 0 && now.After(b.last) {
		b.tokens = min(float64(b.cfg.Burst), b.tokens+float64(now.Sub(b.last))/float64(b.cfg.Every))
	}
	if now.After(b.last) {
		b.last = now
	}
	if b.tokens < 1 {
		b.pending++
		b.suppressed.Add(1)
		return 0, false
	}
	b.tokens--
	dropped, b.pending = b.pending, 0
	return dropped, true
}
