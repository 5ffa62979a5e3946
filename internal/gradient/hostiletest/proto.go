package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Outcome is how the server ended a connection.
type Outcome struct {
	Error   *wire.ServerError // the Error it sent before closing, if any
	Close   int               // the close frame's code; 0 when the connection ended without one
	Reason  string            // the close frame's reason
	Elapsed time.Duration     // from the last message sent to the end of the connection
}

func (o Outcome) String() string {
	e := "no Error"
	if o.Error != nil {
		e = fmt.Sprintf("Error %d %q", o.Error.Code, o.Error.Message)
	}
	return fmt.Sprintf("%s, close %d %q after %v", e, o.Close, o.Reason, o.Elapsed.Round(time.Millisecond))
}

// FirstMessage is one malformed opening of a /proto connection and the answer the server
// owes it (gradient-protocol §1.4).
type FirstMessage struct {
	Name      string
	WantError bool // Error{400, "malformed message"} before the close
	WantClose int
	send      func(*Raw) error
}

const v30 = 30

// FirstMessages are the malformed openings: each undecodable first message after a valid
// version frame earns Error 400 and a close; a text frame or a header declaring 2^62 bytes
// is refused by the socket layer at once.
func FirstMessages() []FirstMessage {
	init, _ := wire.Encode(&wire.InitConnection{ID: "hostile"}, v30)
	afterVersion := func(frame []byte) func(*Raw) error {
		return func(r *Raw) error {
			if err := r.WriteFrame(OpBinary, wire.VersionFrame(wire.ProtoVersions())); err != nil {
				return err
			}
			return r.WriteFrame(OpBinary, frame)
		}
	}
	overlong := append(bytes.Repeat([]byte{0xff}, 10), 0x01)
	return []FirstMessage{
		{Name: "unknown message type", WantError: true, WantClose: 1000, send: afterVersion([]byte{99})},
		{Name: "truncated InitConnection", WantError: true, WantClose: 1000, send: afterVersion(init[:len(init)-1])},
		{Name: "InitConnection with a trailing byte", WantError: true, WantClose: 1000, send: afterVersion(append(init[:len(init):len(init)], 0))},
		{Name: "empty message", WantError: true, WantClose: 1000, send: afterVersion(nil)},
		{Name: "over-long varint", WantError: true, WantClose: 1000, send: afterVersion(overlong)},
		{Name: "text frame first", WantClose: wsconn.CloseUnsupportedData, send: func(r *Raw) error {
			return r.WriteFrame(OpText, []byte(`{"hello":"server"}`))
		}},
		{Name: "header declaring 2^62 bytes first", WantClose: wsconn.CloseProtocolError, send: func(r *Raw) error {
			return r.WriteHeader(OpBinary, 1<<62)
		}},
		{Name: "header declaring 2^62 bytes after the version frame", WantClose: wsconn.CloseProtocolError, send: func(r *Raw) error {
			if err := r.WriteFrame(OpBinary, wire.VersionFrame(wire.ProtoVersions())); err != nil {
				return err
			}
			return r.WriteHeader(OpBinary, 1<<62)
		}},
	}
}

// Run opens /proto at url from laddr ("" for any), sends the malformed opening and reads
// until the server ends the connection or ctx does.
func (fm FirstMessage) Run(ctx context.Context, url, laddr string) (Outcome, error) {
	r, err := DialRaw(ctx, url, laddr)
	if err != nil {
		return Outcome{}, err
	}
	defer r.Close()
	if err := fm.send(r); err != nil {
		return Outcome{}, fmt.Errorf("hostiletest: %s: %w", fm.Name, err)
	}
	return r.ReadToEnd(ctx)
}

// Check compares an outcome with what the opening is owed.
func (fm FirstMessage) Check(o Outcome) error {
	gotError := o.Error != nil && o.Error.Code == session.CodeUnexpected && o.Error.Message == session.MessageMalformed
	if gotError != fm.WantError || (o.Error != nil && !gotError) || o.Close != fm.WantClose {
		return fmt.Errorf("%s: got %v, want Error 400 %v and close %d", fm.Name, o, fm.WantError, fm.WantClose)
	}
	return nil
}

// ReadToEnd reads the server's frames (its version frame, an Error, the close) until the
// connection ends; Elapsed counts from the call.
func (r *Raw) ReadToEnd(ctx context.Context) (Outcome, error) {
	start := time.Now()
	var o Outcome
	for {
		wait := 30 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = time.Until(dl)
		}
		f, err := r.ReadFrame(wait)
		if err != nil {
			o.Elapsed = time.Since(start)
			if ctx.Err() != nil || isTimeout(err) {
				return o, fmt.Errorf("hostiletest: the server kept the connection open: %w", err)
			}
			return o, nil // ended without a close frame
		}
		switch {
		case f.Op == OpClose:
			o.Close, o.Reason = f.CloseCode()
			o.Elapsed = time.Since(start)
			return o, nil
		case f.Op == OpBinary && bytes.HasPrefix(f.Payload, []byte("GRAD")) && len(f.Payload) == 8:
			// the server's version frame
		case f.Op == OpBinary:
			if m, err := wire.DecodeServerMessage(f.Payload, v30); err == nil {
				if e, ok := m.(*wire.ServerError); ok {
					o.Error = e
				}
			}
		}
	}
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

// Violate opens a worker session on url with a valid token, then sends InitConnection a
// second time, as the violating worker did, and reports how the server ended it.
func Violate(ctx context.Context, url, workerID string, tokens ...wire.PeerToken) (Outcome, error) {
	c, err := wsconn.DialServer(ctx, url, wsconn.DialOptions{})
	if err != nil {
		return Outcome{}, err
	}
	defer c.Abort()
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID, Tokens: session.NewPeerTokens(tokens)})
	if _, _, err := handshake.Run(ctx, c, role, out, nil); err != nil {
		return Outcome{}, fmt.Errorf("hostiletest: handshake: %w", err)
	}
	if err := c.Send(ctx, &wire.InitConnection{ID: workerID}); err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	var o Outcome
	for {
		m, release, err := c.Read(ctx)
		if err != nil {
			o.Elapsed = time.Since(start)
			if ctx.Err() != nil {
				return o, fmt.Errorf("hostiletest: the server kept the session open: %w", err)
			}
			o.Close = int(websocket.CloseStatus(err))
			if o.Close < 0 {
				o.Close = 0
			}
			return o, nil
		}
		if e, ok := m.(*wire.ServerError); ok {
			o.Error = e
		}
		release()
	}
}
