package frameserver

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestRefusalsAnsweredAndCounted covers the receiver order of pace-wire §1.7
// over real TCP: each refusal is answered with its code, counted through the
// Observer, and leaves the connection usable (a follow-up FETCH on it is
// served) or closed, as pace-wire §1.7 says.
func TestRefusalsAnsweredAndCounted(t *testing.T) {
	tests := []struct {
		name      string
		locked    bool
		send      []byte
		op        wire.Op // the op whose reply shape the client expects
		code      wire.Code
		message   string
		kind      RefusalKind
		keepsOpen bool
	}{
		{"unknown opcode", false, rawFrame(1, 0x99, 10, make([]byte, 10)), wire.OpFetch,
			wire.CodeUnknownOpcode, "unknown opcode 0x99", RefusedUnknownOpcode, true},
		{"retired opcode", false, rawFrame(1, 0x17, 3, []byte("abc")), wire.OpFetch,
			wire.CodeUnknownOpcode, "opcode 0x17 (cluster-forget-client) is retired", RefusedUnknownOpcode, true},
		{"over the cap is drained", false, rawFrame(1, wire.OpAuth, 5000, make([]byte, 5000)), wire.OpAuth,
			wire.CodePayloadTooLarge, "AUTH payload of 5000 bytes exceeds its cap of 4096 bytes", RefusedPayloadTooLarge, true},
		{"beyond 4x the cap ends", false, rawFrame(1, wire.OpAuth, 4*4096+1, make([]byte, 100)), wire.OpAuth,
			wire.CodePayloadTooLarge, "AUTH payload of 16385 bytes exceeds its cap of 4096 bytes", RefusedPayloadTooLarge, false},
		{"missing credential is drained", true, fetch("k"), wire.OpFetch,
			wire.CodeUnauthenticated, "authentication required", RefusedUnauthenticated, true},
		{"wrong arity", false, wire.AppendRequest(nil, wire.OpFetch, []byte("a"), []byte("b")), wire.OpFetch,
			wire.CodeMalformedFrame, "malformed frame: 5 bytes after the 1 fields the verb takes", RefusedMalformedPayload, true},
		{"trailing byte", false, rawFrame(1, wire.OpFetch, 6, []byte{0, 0, 0, 1, 'k', 0}), wire.OpFetch,
			wire.CodeMalformedFrame, "malformed frame: 1 bytes after the 1 fields the verb takes", RefusedMalformedPayload, true},
		{"unsupported version", false, rawFrame(15, wire.OpFetch, 5, []byte{0, 0, 0, 1, 'k'}), wire.OpFetch,
			wire.CodeUnsupportedVersion, "unsupported wire version 15; this server speaks 1..1", RefusedUnsupportedVersion, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := newCountingObserver()
			var locked atomic.Bool
			locked.Store(tt.locked)
			_, addr := startServer(t, Config{Observer: obs, CredentialRequired: locked.Load})
			c := dial(t, addr)
			c.send(tt.send)
			r := c.expectRefusal(tt.op, tt.code)
			if r.Message != tt.message {
				t.Fatalf("message %q, want %q", r.Message, tt.message)
			}
			if got := obs.refusals(tt.kind); got != 1 {
				t.Fatalf("%s counted %d times, want 1", tt.kind, got)
			}
			if !tt.keepsOpen {
				c.expectClosed()
				c.conn.Close()
				if reason := obs.waitClosed(t); reason != ClosedProtocol {
					t.Fatalf("closed for %s, want protocol", reason)
				}
				return
			}
			locked.Store(false)
			c.send(fetch("after"))
			c.expectOk(wire.OpFetch, "after")
		})
	}
}

func TestBadMagicClosesWithoutReply(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs})
	c := dial(t, addr)
	c.send([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	c.expectClosed()
	if obs.waitClosed(t) != ClosedProtocol || obs.refusals(RefusedBadMagic) != 1 {
		t.Fatalf("bad magic not counted: %+v", obs.refused)
	}
}

func TestBadMagicAfterValidRequest(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs})
	c := dial(t, addr)
	c.send(fetch("one"), []byte{0x00, 1, 2, 0, 0, 0, 0})
	c.expectOk(wire.OpFetch, "one")
	c.expectClosed()
	if obs.refusals(RefusedBadMagic) != 1 {
		t.Fatal("a second frame with bad magic must close the connection")
	}
}

func TestVersionChangeMidConnectionRefused(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Observer: obs})
	c := dial(t, addr)
	c.send(fetch("first"))
	c.expectOk(wire.OpFetch, "first")
	c.send(rawFrame(2, wire.OpFetch, 5, []byte{0, 0, 0, 1, 'k'}))
	r := c.expectRefusal(wire.OpFetch, wire.CodeUnsupportedVersion)
	if r.Message != "unsupported wire version 2; this server speaks 1..1" {
		t.Fatalf("message %q", r.Message)
	}
	c.expectClosed()
}

func TestCredentialFlipGatesOpenConnection(t *testing.T) {
	var locked atomic.Bool
	_, addr := startServer(t, Config{CredentialRequired: locked.Load})
	c := dial(t, addr)
	c.send(fetch("open"))
	c.expectOk(wire.OpFetch, "open")
	locked.Store(true) // a SIGHUP that enables a password
	c.send(fetch("gated"))
	c.expectRefusal(wire.OpFetch, wire.CodeUnauthenticated)
	c.send(auth("wrong"))
	if r := c.expectRefusal(wire.OpAuth, wire.CodeUnauthenticated); r.Message != "authentication failed" {
		t.Fatalf("failed AUTH message %q", r.Message)
	}
	c.send(auth("sesame"), fetch("verified"))
	c.expectOk(wire.OpAuth, "")
	c.expectOk(wire.OpFetch, "verified")
}

func TestPipelinedAuthAndRequestInOneWrite(t *testing.T) {
	var locked atomic.Bool
	locked.Store(true)
	_, addr := startServer(t, Config{CredentialRequired: locked.Load})
	c := dial(t, addr)
	c.send(auth("sesame"), fetch("k1"), fetch("miss"), wire.AppendRequest(nil, wire.OpStore,
		[]byte("k"), nil, nil, nil, []byte("v")))
	c.expectOk(wire.OpAuth, "")
	c.expectOk(wire.OpFetch, "k1")
	if status, _, err := c.reply(wire.OpFetch); status != wire.StatusMiss || err != nil {
		t.Fatalf("third reply %s %v, want Miss", status, err)
	}
	c.expectOk(wire.OpStore, "")
}

func TestOverCapDrainDoesNotBuffer(t *testing.T) {
	// A refused 64 MiB STORE against a 16 MiB session cap is drained
	// through, and the next request on the connection is served.
	_, addr := startServer(t, Config{SessionCap: 16 << 20})
	c := dial(t, addr)
	payload := bytes.Repeat([]byte{0xAB}, 64<<20)
	sent := make(chan error, 1)
	go func() {
		_, err := c.conn.Write(append(rawFrame(1, wire.OpStore, uint32(len(payload)), payload), fetch("next")...))
		sent <- err
	}()
	c.expectRefusal(wire.OpStore, wire.CodePayloadTooLarge)
	c.expectOk(wire.OpFetch, "next")
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
