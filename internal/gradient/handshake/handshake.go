// Package handshake drives the pure handshake roles of package session over a wsconn socket:
// it sends what a step says to send, answers the role's questions through the caller's
// Answerer, reads the next message, and ends the socket the way the step ended the session.
// It holds no rules of its own; those live in session.
package handshake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Answerer answers a server or dialed-worker role's Need: facts about a worker id, which
// tokens verify, whether the live-session slot could be claimed.
type Answerer func(ctx context.Context, n session.Need) (session.Event, error)

// EndedError reports a handshake that ended without a running session.
type EndedError struct{ End session.End }

func (e *EndedError) Error() string {
	return fmt.Sprintf("handshake ended (%s): %d %s", e.End.Kind, e.End.Code, e.End.Reason)
}

// Run steps role, starting from its first output, until the session runs (the reader is then
// switched to session limits) or ends (the socket is then closed as the step asked: a Reject
// with close 1008, or a normal close). The whole handshake is bounded by wsconn's 15 s limit.
// Whenever it returns an error the socket is closed or closing: a frame that does not decode
// is answered as Malformed does (errors.As finds the *wire.DecodeError), any other failure
// drops the connection.
func Run[S session.Role[S], Out, In wire.Message](ctx context.Context, c *wsconn.Conn[Out, In],
	role S, out session.Output, answer Answerer) (S, session.Result, error) {
	hctx, cancel := wsconn.HandshakeContext(ctx)
	defer cancel()
	for {
		if err := send(hctx, c, out); err != nil {
			c.Abort()
			return role, session.Result{}, err
		}
		switch out.Status {
		case session.Running:
			c.EnterSession()
			return role, out.Result, nil
		case session.Ended:
			return role, session.Result{}, finish(hctx, c, out)
		}
		ev, err := next(hctx, c, out.Need, answer)
		if err != nil {
			if !Malformed(c, err) {
				c.Abort()
			}
			return role, session.Result{}, err
		}
		role, out = role.Step(ev)
	}
}

// next is the event a role waits for: the answer to its Need, else the next message.
func next[Out, In wire.Message](ctx context.Context, c *wsconn.Conn[Out, In], need session.Need, answer Answerer) (session.Event, error) {
	if need != nil {
		if answer == nil {
			return nil, fmt.Errorf("handshake: role asked %T and no Answerer was given", need)
		}
		return answer(ctx, need)
	}
	m, release, err := c.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("handshake: reading: %w", err)
	}
	release() // handshake messages carry no byte slices a role keeps
	return session.Received{Msg: m}, nil
}

// send sends a step's messages, except a closing Reject, which finish sends with its close.
func send[Out, In wire.Message](ctx context.Context, c *wsconn.Conn[Out, In], out session.Output) error {
	msgs := out.Send
	if out.Status == session.Ended && out.End.Kind == session.EndRejectSent && len(msgs) > 0 {
		msgs = msgs[:len(msgs)-1]
	}
	for _, m := range msgs {
		typed, ok := m.(Out)
		if !ok {
			return fmt.Errorf("handshake: role produced %T, which this side does not send", m)
		}
		if err := c.Send(ctx, typed); err != nil {
			return fmt.Errorf("handshake: sending %T: %w", m, err)
		}
	}
	return nil
}

func finish[Out, In wire.Message](ctx context.Context, c *wsconn.Conn[Out, In], out session.Output) error {
	end := out.End
	var err error
	if end.Kind == session.EndRejectSent {
		err = c.Reject(ctx, end.Code, end.Reason)
	} else {
		err = c.Close(ctx)
	}
	if err != nil && !errors.Is(err, wsconn.ErrClosed) {
		return errors.Join(&EndedError{End: end}, err)
	}
	return &EndedError{End: end}
}

// MalformedCloseTimeout bounds the Error 400 and the close that answer an undecodable frame.
const MalformedCloseTimeout = 2 * time.Second

// Malformed answers a read that failed because the frame did not decode, as
// gradient-protocol §1.4 says: the server sends Error{400, "malformed message"} (a worker has
// no such message and sends nothing), then the socket closes normally within
// MalformedCloseTimeout. It reports false, doing nothing, for any other error.
func Malformed[Out, In wire.Message](c *wsconn.Conn[Out, In], err error) bool {
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), MalformedCloseTimeout)
	defer cancel()
	reply := any(&wire.ServerError{Code: session.CodeUnexpected, Message: session.MessageMalformed})
	if m, ok := reply.(Out); ok {
		_ = c.Send(ctx, m) // a failure means the socket is gone already; Close below is then a no-op
	}
	_ = c.Close(ctx)
	return true
}
