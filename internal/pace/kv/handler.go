package kv

import (
	"context"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cacheverbs"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Refusal messages for verbs pace-kv does not serve (pace-wire §1.12, pace-wire §1.16).
const (
	msgNoScheduler = "pace-kv runs no scheduler: send scheduler verbs to a pace-node's node port (the fleet leader's, :6674 by default)"
	msgNoWorker    = "this endpoint runs no compile worker: pace-kv is a shared cache; COMPILE goes to the worker a lease names"
	authKindPass   = 1
	authKindTicket = 2
)

// handler answers pace-kv's verbs.
type handler struct {
	st    *store.Store
	pass  *password
	guard *authGuard
	logs  *logLimiter
	m     *metrics
	log   *slog.Logger
}

func (h *handler) Serve(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	switch req.Op() {
	case wire.OpFetch:
		return h.fetch(req.Fields[0])
	case wire.OpStore:
		return h.store(req)
	case wire.OpCacheDrop:
		return h.drop(req.Fields[0])
	case wire.OpAuth:
		return h.auth(ctx, c, req.Fields)
	}
	switch req.Info.Family {
	case wire.FamilyScheduler:
		h.m.refused("not_permitted")
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeDispatchNotPermitted, Message: msgNoScheduler})
	case wire.FamilyCompile:
		h.m.refused("not_permitted")
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeDispatchNotPermitted, Message: msgNoWorker})
	}
	h.m.refused("unknown_opcode")
	return frameserver.RefuseCode(wire.CodeUnknownOpcode)
}

// refuse answers a cache verb's failure, counting a refused request under its kind. A storage
// failure is counted by the verb that met it (a failed STORE is pace_cache_stores_failed_total).
func (h *handler) refuse(err error) frameserver.Reply {
	switch cacheverbs.Classify(err) {
	case cacheverbs.FailureMalformedFrame:
		h.m.refused("malformed_payload")
	case cacheverbs.FailureNotAValue:
		h.m.storesNotValue.Add(1)
	case cacheverbs.FailureForeignGeneration:
		h.m.storesForeign.Add(1)
	case cacheverbs.FailureStorageWrite:
		h.log.Warn("storage write failed", "err", err)
	}
	return frameserver.Refuse(cacheverbs.Refusal(err))
}

func (h *handler) fetch(key []byte) frameserver.Reply {
	v, hit, err := cacheverbs.Fetch(h.st, key)
	switch {
	case err != nil:
		return h.refuse(err)
	case !hit:
		h.m.misses.Add(1)
		return frameserver.Miss()
	}
	h.m.hits.Add(1)
	return frameserver.Ok(v)
}

func (h *handler) store(req *frameserver.Request) frameserver.Reply {
	r, err := cacheverbs.ParseStore(req.Keep()) // the value stays referenced by the memory tier
	if err != nil {
		return h.refuse(err)
	}
	if err := cacheverbs.Put(h.st, r); err != nil {
		h.m.storesFailed.Add(1)
		return h.refuse(err)
	}
	return frameserver.Ok(nil)
}

func (h *handler) drop(key []byte) frameserver.Reply {
	present, err := cacheverbs.Drop(h.st, key)
	switch {
	case err != nil:
		return h.refuse(err)
	case !present:
		return frameserver.Miss()
	}
	return frameserver.Ok(nil)
}

// auth checks a password AUTH. A failure is answered and, until the connection's
// authConnMax-th, the connection kept; every check from a source with failures on record waits
// for its slot (guard.go), so guessing is slow however it is spread over connections
// (pace-node §11).
func (h *handler) auth(ctx context.Context, c *frameserver.Conn, f [][]byte) frameserver.Reply {
	kind, err := wire.U8(f[0])
	if err != nil || (kind != authKindPass && kind != authKindTicket) || (kind == authKindTicket && len(f[1]) != 0) {
		h.m.refused("malformed_credential")
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeMalformedFrame, Message: "AUTH kind must be one byte: 01 password or 02 machine ticket (with an empty username)"})
	}
	if !h.pass.required() && kind == authKindPass {
		return frameserver.Ok(nil) // nothing to check; the connection is not marked verified
	}
	st := connAuth(c)
	match, checked := h.checkAuth(ctx, c, st.failures, func() bool {
		return kind == authKindPass && h.pass.accepts(f[1], f[2])
	})
	switch {
	case !checked:
		h.m.authThrottled.Add(1)
		h.logAuth("AUTH refused unchecked: too many failures from this address", c, st.failures)
		r := frameserver.Refuse(wire.Refusal{Code: wire.CodeUnauthenticated, Message: "authentication refused: too many failed attempts from this address; try again later"})
		r.Close = true
		return r
	case match:
		c.SetAuthenticated(true)
		return frameserver.Ok(nil)
	}
	st.failures++
	h.m.credentialsRejected.Add(1)
	h.logAuth("AUTH failed", c, st.failures)
	msg := "authentication failed"
	if kind == authKindTicket {
		msg = "authentication failed: pace-kv accepts a password (--requirepass), not machine tickets"
	}
	r := frameserver.Refuse(wire.Refusal{Code: wire.CodeUnauthenticated, Message: msg})
	if st.failures >= authConnMax {
		h.m.authConnsClosed.Add(1)
		r.Close = true
	}
	return r
}

// checkAuth waits for the check's slot and runs compare; false when the source's queue is
// too long or the server is stopping.
func (h *handler) checkAuth(ctx context.Context, c *frameserver.Conn, connFailures int, compare func() bool) (match, checked bool) {
	for {
		t, ok := h.guard.reserve(c.Source(), connFailures)
		if !ok || !sleep(ctx, t.wait) {
			return false, false
		}
		if match, run := h.guard.check(t, compare); run {
			return match, true
		}
	}
}

// logAuth logs a failed or refused AUTH with its source, at most logBurst lines a minute; it
// never logs the username or secret.
func (h *handler) logAuth(msg string, c *frameserver.Conn, connFailures int) {
	ok, suppressed := h.logs.allow(h.guard.now())
	if !ok {
		return
	}
	h.log.Warn(msg, "remote", c.RemoteAddr().String(), "address_failures", h.guard.failures(c.Source()),
		"connection_failures", connFailures, "lines_suppressed", suppressed)
}

// authState is a connection's own AUTH record.
type authState struct{ failures int }

func connAuth(c *frameserver.Conn) *authState {
	if st, ok := c.Data().(*authState); ok {
		return st
	}
	st := &authState{}
	c.SetData(st)
	return st
}

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
