package tier

import (
	"context"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"log/slog"
	"net"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// notLocalPayload is the not-a-member refusal, built once: off-box callers are refused on
// every request, so the refusal should cost nothing. The sentence says why, and where a shared
// cache lives.
var notLocalPayload = wire.AppendErrorPayload(nil, wire.Refusal{Code: wire.CodeNotAMember,
	Message: "this node's cache tier serves this machine only; a cache several machines share is a pace-kv (a node's --upstream)"})

// Tier is a node's private cache tier. It is safe for concurrent use.
type Tier struct {
	cfg    Config
	log    *slog.Logger
	st     *store.Store
	local  *thismachine.Set
	up     upstream    // nil without --upstream
	window *downWindow // the same upstream, for its state; nil without --upstream
	offers *offers     // nil without --upstream
	kv     *kvUpstream // the pace-kv client, for a password reload; nil without one
	c      counters

	refusals refusalLog
}

// New opens the local store (taking its directory's exclusive lock) and prepares the
// upstream, which is dialled only when first needed. A configuration with neither half is
// ErrDisabled.
func New(cfg Config) (*Tier, error) { return open(cfg, nil) }

// open is New with the upstream supplied; nil builds the pace-kv client cfg names. Tests pass
// an in-memory twin.
func open(cfg Config, up upstream) (*Tier, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("cache tier: %w", err)
	}
	cfg = cfg.withDefaults()
	st, err := store.Open(store.Options{Dir: cfg.Dir, MaxDisk: cfg.MaxDisk, MaxMemory: cfg.MaxMemory,
		Sync: cfg.Sync, FS: cfg.FS, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("cache tier: %w", err)
	}
	t := &Tier{cfg: cfg, log: cfg.Logger, st: st,
		local:    cfg.local(),
		refusals: refusalLog{log: cfg.Logger, now: cfg.Now, every: refusalLogInterval}}
	if up == nil && cfg.Upstream != "" {
		t.kv = newKVUpstream(newConnPool(kvclient.Options{
			Addr: cfg.Upstream, ConnectTimeout: cfg.ConnectTimeout, Timeout: cfg.UpstreamTimeout,
			Username: cfg.UpstreamUsername, Password: cfg.UpstreamPassword, MaxValue: cfg.MaxValue,
		}, cfg.UpstreamConns, cfg.Now))
		up = t.kv
	}
	if up != nil {
		t.window = newDownWindow(up, cfg.DownWindow, cfg.Now, cfg.Logger, cfg.Upstream)
		t.up = t.window
		t.offers = newOffers(t.up, cfg.UpstreamConns, cfg.OfferQueue, cfg.OfferQueueBytes, t.offered)
	}
	return t, nil
}

// SetUpstreamPassword makes the tier present password to its pace-kv from the next exchange on
// (SIGHUP with a changed --requirepass); without a pace-kv upstream it does nothing.
func (t *Tier) SetUpstreamPassword(password string) {
	if t.kv != nil {
		t.kv.pool.setPassword(password)
	}
}

// Serve answers FETCH, STORE and CACHE-DROP for the node's frame handler: it is a
// frameserver.Handler for exactly those three verbs.
func (t *Tier) Serve(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	return t.ServeFrom(ctx, c.RemoteAddr(), req)
}

// ServeFrom answers a cache verb from peer. A peer that is not this machine is refused
// not-a-member, whatever the verb's payload; any verb other than the three cache verbs is
// unknown-opcode (the node routes only those here).
func (t *Tier) ServeFrom(ctx context.Context, peer net.Addr, req *frameserver.Request) frameserver.Reply {
	if !t.local.IsPeer(peer) {
		t.c.refusedNotLocal.Add(1)
		return frameserver.Reply{Status: wire.StatusError, Payload: notLocalPayload}
	}
	switch req.Op() {
	case wire.OpFetch:
		return t.fetch(ctx, req.Fields[0])
	case wire.OpStore:
		return t.store(req)
	case wire.OpCacheDrop:
		return t.drop(req.Fields[0])
	}
	return frameserver.RefuseCode(wire.CodeUnknownOpcode)
}

// CountFrameRefusal counts a cache verb the frame server refused before the tier saw it
// (payload-too-large, or a field split that failed), under the tier's refusal series.
func (t *Tier) CountFrameRefusal(kind frameserver.RefusalKind) {
	switch kind {
	case frameserver.RefusedPayloadTooLarge:
		t.c.refusedTooLarge.Add(1)
	case frameserver.RefusedMalformedPayload:
		t.c.refusedMalformed.Add(1)
	}
}

// Snapshot reads the tier's counters.
func (t *Tier) Snapshot() Snapshot { return t.c.snapshot(t.up != nil) }

// Stats reads the local store's gauges (pace_items, pace_tier_*), which the node exports.
func (t *Tier) Stats() store.Stats { return t.st.Stats() }

// UpstreamDown reports whether the upstream is remembered down right now (false without one).
func (t *Tier) UpstreamDown() bool { return t.window != nil && t.window.down() }

// Close stops offering stores upstream (those still queued get until ctx ends), closes the
// upstream connections and then the store, releasing its directory lock. Call it after the
// frame server has stopped calling Serve.
func (t *Tier) Close(ctx context.Context) error {
	var errs []error
	if t.offers != nil {
		if err := t.offers.close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cache tier: stores still queued for the upstream abandoned: %w", err))
		}
		t.up.Close()
		t.offers.wait()
	}
	if err := t.st.Close(); err != nil {
		errs = append(errs, fmt.Errorf("cache tier: %w", err))
	}
	return errors.Join(errs...)
}
