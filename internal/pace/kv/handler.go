package kv

import (
	"context"
	"errors"
	"log/slog"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Refusal messages for verbs pace-kv does not serve (spec §1.12, §1.16).
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

func (h *handler) malformed(err error) frameserver.Reply {
	h.m.refused("malformed_payload")
	return frameserver.Refuse(wire.Refusal{Code: wire.CodeMalformedFrame, Message: err.Error()})
}

func (h *handler) fetch(key []byte) frameserver.Reply {
	if err := store.CheckKey(key); err != nil {
		return h.malformed(err)
	}
	v, err := h.st.Get(key)
	// A foreign generation is a miss: an older build's value is simply not one we can serve.
	if err != nil || !value.HasCurrentGeneration(v) {
		h.m.misses.Inc()
		return frameserver.Miss()
	}
	h.m.hits.Inc()
	return frameserver.Ok(v)
}

func (h *handler) store(req *frameserver.Request) frameserver.Reply {
	f := req.Keep() // the value stays referenced by the memory tier
	key := f[0]
	if err := store.CheckKey(key); err != nil {
		return h.malformed(err)
	}
	canonical, err := value.CanonicalizeEncoded(f[4], value.Roots{SrcRoot: string(f[2]), BuildTree: string(f[3])})
	switch {
	case errors.Is(err, value.ErrForeignGeneration):
		h.m.storesForeign.Inc()
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeForeignValueGeneration, Message: err.Error()})
	case err != nil:
		h.m.storesNotValue.Inc()
		return frameserver.Refuse(wire.Refusal{Code: wire.CodeMalformedValue, Message: err.Error()})
	}
	if err := h.st.Put(key, canonical); err != nil {
		h.m.storesFailed.Inc()
		h.log.Warn("store failed", "err", err)
		return frameserver.RefuseCode(wire.CodeStorageWriteFailed)
	}
	return frameserver.Ok(nil)
}

func (h *handler) drop(key []byte) frameserver.Reply {
	if err := store.CheckKey(key); err != nil {
		return h.malformed(err)
	}
	present, err := h.st.Delete(key)
	if err != nil {
		h.log.Warn("cache drop failed", "err", err)
		return frameserver.RefuseCode(wire.CodeStorageWriteFailed)
	}
	if !present {
		return frameserver.Miss()
	}
	return frameserver.Ok(nil)
}

// auth checks a password AUTH. A failure is answered and the connection kept (spec §11).
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
	h.m.credentialsRejected.Inc()
	msg := "authentication failed"
	if kind == authKindTicket {
		msg = "authentication failed: pace-kv accepts a password (--requirepass), not machine tickets"
	}
	return frameserver.Refuse(wire.Refusal{Code: wire.CodeUnauthenticated, Message: msg})
}
