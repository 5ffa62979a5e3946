package kv

import (
	"context"
	"log/slog"

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
	st   *store.Store
	pass *password
	m    *metrics
	log  *slog.Logger
}

func (h *handler) Serve(_ context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	switch req.Op() {
	case wire.OpFetch:
		return h.fetch(req.Fields[0])
	case wire.OpStore:
		return h.store(req)
	case wire.OpCacheDrop:
		return h.drop(req.Fields[0])
	case wire.OpAuth:
		return h.auth(c, req.Fields)
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

// auth checks a password AUTH. A failure is answered and the connection kept (pace-node §11).
func (h *handler) auth(c *frameserver.Conn, f [][]byte) frameserver.Reply {
	kind, err := wire.U8(f[0])
	if err != nil || (kind != authKindPass && kind != authKindTicket) || (kind == authKindTicket && len(f[1]) != 0) {
		h.m.refused("malformed_credential")
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeMalformedFrame, Message: "AUTH kind must be one byte: 01 password or 02 machine ticket (with an empty username)"})
	}
	if !h.pass.required() && kind == authKindPass {
		return frameserver.Ok(nil) // nothing to check; the connection is not marked verified
	}
	if kind == authKindPass && h.pass.accepts(f[1], f[2]) {
		c.SetAuthenticated(true)
		return frameserver.Ok(nil)
	}
	h.m.credentialsRejected.Add(1)
	msg := "authentication failed"
	if kind == authKindTicket {
		msg = "authentication failed: pace-kv accepts a password (--requirepass), not machine tickets"
	}
	return frameserver.Refuse(wire.Refusal{Code: wire.CodeUnauthenticated, Message: msg})
}
