package frameserver

import (
	"crypto/hmac"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// handleFrame reads one request header and follows the receiver order.
func (c *Conn) handleFrame() closing {
	h, err := wire.ReadRequestHeader(c.br, &c.hdr)
	if err != nil {
		return closing{reason: c.readFailure(err)}
	}
	c.setPhase(phaseBusy)
	if end := c.interrupted(); end.reason != 0 {
		return end // Shutdown or a newcomer woke the header's read just as it completed
	}
	c.startReadMAC()
	d := wire.Decide(h, c.state())
	if c.version == 0 && (d.Action == wire.ActionReadPayload || d.Action == wire.ActionRefuseAndDrain) {
		c.version = h.Version
	}
	switch d.Action {
	case wire.ActionReadPayload:
		return c.serveAdmitted(h, d)
	case wire.ActionRefuseAndDrain:
		return c.refuseAndDrain(h, d)
	case wire.ActionRefuseAndClose, wire.ActionRefuseAndEnd:
		c.observeRefusal(d.Refusal.Code)
		if c.writeRefusal(d.Refusal) != nil {
			return closing{reason: ClosedWriteFailed}
		}
		return closing{reason: ClosedProtocol, linger: true}
	}
	c.srv.cfg.Observer.Refused(RefusedBadMagic)
	return closing{reason: ClosedProtocol}
}

func (c *Conn) state() wire.ConnState {
	return wire.ConnState{
		Version:            c.version,
		Authenticated:      c.authed.Load(),
		CredentialRequired: c.srv.cfg.CredentialRequired(),
		SessionCap:         c.srv.cfg.SessionCap,
	}
}

func (c *Conn) observeRefusal(code wire.Code) {
	kind := RefusedMalformedPayload
	switch code {
	case wire.CodeUnsupportedVersion:
		kind = RefusedUnsupportedVersion
	case wire.CodeUnknownOpcode:
		kind = RefusedUnknownOpcode
	case wire.CodePayloadTooLarge:
		kind = RefusedPayloadTooLarge
	case wire.CodeUnauthenticated:
		kind = RefusedUnauthenticated
	case wire.CodeEndpointBusy:
		kind = RefusedEndpointBusy
	}
	c.srv.cfg.Observer.Refused(kind)
}

// refuseAndDrain answers a refusal decided from the header and discards
// exactly the declared payload, keeping the connection in sync.
func (c *Conn) refuseAndDrain(h wire.RequestHeader, d wire.Decision) closing {
	c.observeRefusal(d.Refusal.Code)
	if c.writeRefusal(d.Refusal) != nil {
		return closing{reason: ClosedWriteFailed}
	}
	c.armPayload(h.PayloadLen)
	var err error
	if c.readMAC != nil {
		_, err = io.CopyN(c.readMAC, c.br, int64(h.PayloadLen))
	} else {
		err = wire.Drain(c.br, uint64(h.PayloadLen))
	}
	if err != nil {
		return closing{reason: c.readFailure(err)}
	}
	return c.checkTag()
}

// armPayload sets the whole-frame deadline of the rest of a frame whose
// header is in: payload and tag at the floor rate plus the fixed allowance.
func (c *Conn) armPayload(n uint32) {
	c.startFrame(payloadAllowance(n, c.srv.cfg.FrameTimeout, c.srv.cfg.MinFrameRate))
}

// serveAdmitted charges the payload budget (a frame that does not fit is
// refused and drained unread), reads the payload (only now, after the cap
// check), splits it with the op's exact arity, runs the handler and writes
// its reply. The charge is held until the reply is written.
func (c *Conn) serveAdmitted(h wire.RequestHeader, d wire.Decision) closing {
	if b := c.srv.budget; b != nil && h.PayloadLen > largePayload {
		n := int64(h.PayloadLen)
		if refusal, ok := b.admit(c.ctx, n); !ok {
			return c.refuseAndDrain(h, wire.Decision{Refusal: refusal})
		}
		defer b.release(n)
	}
	c.armPayload(h.PayloadLen)
	payload, pooled, err := c.readPayload(int(h.PayloadLen))
	if err != nil {
		return closing{reason: c.readFailure(err)}
	}
	if end := c.checkTag(); end.reason != 0 {
		if pooled != nil {
			recycle(pooled)
		}
		return end
	}
	return c.dispatch(h, d.Info, payload, pooled)
}

func (c *Conn) readPayload(n int) ([]byte, *[]byte, error) {
	payload, pooled := pooledBuffer(n)
	var err error
	if pooled != nil {
		_, err = io.ReadFull(c.br, payload)
	} else {
		payload, err = readGrowing(c.br, n)
	}
	if err != nil {
		if pooled != nil {
			recycle(pooled)
		}
		return nil, nil, err
	}
	if c.readMAC != nil {
		c.readMAC.Write(payload)
	}
	return payload, pooled, nil
}

// dispatch splits fields and calls the handler; a wrong arity is answered
// malformed-frame and the connection stays open.
func (c *Conn) dispatch(h wire.RequestHeader, info wire.OpInfo, payload []byte, pooled *[]byte) closing {
	fields, err := wire.SplitFields(c.fields, payload, info.Arity)
	if err != nil {
		forget(fields)
		if pooled != nil {
			recycle(pooled)
		}
		c.srv.cfg.Observer.Refused(RefusedMalformedPayload)
		if c.writeRefusal(wire.Refusal{Code: wire.CodeMalformedFrame, Message: err.Error()}) != nil {
			return closing{reason: ClosedWriteFailed}
		}
		return closing{}
	}
	if c.flushBeforeHandler(info) != nil {
		return closing{reason: ClosedWriteFailed}
	}
	c.req = Request{Header: h, Info: info, Fields: fields}
	reply, ok := c.runHandler(&c.req)
	end := c.writeHandlerReply(info, reply, ok)
	if c.req.kept {
		c.fields = nil // the handler owns the old slice now
	} else {
		forget(fields)
		c.fields = fields
		if pooled != nil {
			recycle(pooled)
		}
	}
	c.req = Request{}
	return end
}

// forget drops the references a reused field slice holds into the payload just
// served: kept there, a 200 MiB payload would stay live, uncharged, for as long
// as its connection waits for the next request.
func forget(fields [][]byte) { clear(fields[:cap(fields)]) }

// interimStatuses marks ops whose handlers run long by design.
var interimStatuses = wire.Statuses(wire.StatusProgress, wire.StatusPush)

// flushBeforeHandler sends replies held for batching before a handler
// that may take a while: when no further request is buffered (the replies
// would be flushed right after it anyway) or when the op is a long-running
// one. Batches of buffered quick requests still go out in one write.
func (c *Conn) flushBeforeHandler(info wire.OpInfo) error {
	if c.br.Buffered() == 0 || info.Statuses&interimStatuses != 0 {
		return c.flush()
	}
	return nil
}

// runHandler calls the handler with interim frames enabled for the op; a
// panic is logged and ends the connection (its state is unknown).
func (c *Conn) runHandler(req *Request) (reply Reply, ok bool) {
	c.setInterim(req.Info.Statuses & interimStatuses)
	defer func() {
		c.setInterim(0)
		if p := recover(); p != nil {
			c.srv.cfg.Logger.Error("frameserver: handler panic", "op", req.Info.Name,
				"remote", c.RemoteAddr().String(), "panic", fmt.Sprint(p))
			ok = false
		}
	}()
	return c.srv.cfg.Handler.Serve(c.ctx, c, req), true
}

func (c *Conn) setInterim(allowed wire.StatusSet) {
	c.wmu.Lock()
	c.interimOK = allowed
	c.wmu.Unlock()
}

// writeHandlerReply writes the handler's terminal reply. A reply the op
// can never carry is a handler bug: it is logged and the connection ends
// rather than desynchronising the client.
func (c *Conn) writeHandlerReply(info wire.OpInfo, reply Reply, ok bool) closing {
	if reply.Release != nil {
		defer reply.Release()
	}
	if !ok {
		return closing{reason: ClosedByHandler}
	}
	if !reply.Status.Terminal() || !info.Statuses.Has(reply.Status) {
		c.srv.cfg.Logger.Error("frameserver: handler reply status not legal for op",
			"op", info.Name, "status", reply.Status.String())
		return closing{reason: ClosedByHandler}
	}
	if err := c.writeReply(reply); err != nil {
		return closing{reason: ClosedWriteFailed}
	}
	if reply.Close {
		return closing{reason: ClosedByHandler, linger: true}
	}
	return closing{}
}

// startReadMAC begins authenticating a frame when the connection is sealed.
func (c *Conn) startReadMAC() {
	c.wmu.Lock()
	s := c.sealer
	c.wmu.Unlock()
	c.readMAC = nil
	if s != nil {
		c.readMAC = s.NextReadMAC()
		c.readMAC.Write(c.hdr[:])
	}
}

// checkTag reads and verifies a sealed frame's tag; a bad tag closes the
// connection unanswered.
func (c *Conn) checkTag() closing {
	if c.readMAC == nil {
		return closing{}
	}
	if _, err := io.ReadFull(c.br, c.tag[:]); err != nil {
		return closing{reason: c.readFailure(err)}
	}
	if !hmac.Equal(c.readMAC.Sum(nil), c.tag[:]) {
		return closing{reason: ClosedBadTag}
	}
	return closing{}
}
