package peerconn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// errVerdictUnsent: the dialler went away before an accepting verdict
// reached it. Counted nowhere: nothing was refused.
var errVerdictUnsent = errors.New("the verdict could not be sent")

// Accept runs the accepting end of the handshake on raw, which it owns
// from now on: the challenge at once, then the proof, then the verdict. A
// refusal closes raw, is counted and logged, and comes back as an error
// wrapping peerlink's sentinel for it; so does a cancelled ctx, uncounted.
func (e *Endpoint) Accept(ctx context.Context, raw net.Conn) (*Conn, error) {
	j, br, err := e.accept(ctx, raw)
	if err != nil {
		raw.Close()
		e.counters.Count(peerlink.RoleAcceptor, err)
		e.log.acceptRefused(addrOf(raw), j, err)
		return nil, fmt.Errorf("consensus connection from %s: %w", addrOf(raw), err)
	}
	return newConn(e, raw, br, j.Session), nil
}

func (e *Endpoint) accept(ctx context.Context, raw net.Conn) (peerlink.Judgement, *bufio.Reader, error) {
	h, err := e.member.Accept()
	if err != nil {
		return peerlink.Judgement{}, nil, err
	}
	finish := e.bound(ctx, raw)
	if _, err := raw.Write(h.Challenge()); err != nil {
		finish()
		return peerlink.Judgement{}, nil, classify(ctx, err, peerlink.ErrNoProof, peerlink.ErrNoProof)
	}
	br := bufio.NewReaderSize(raw, readBufferSize)
	frame, err := readHandshake(br)
	if err != nil {
		finish()
		return peerlink.Judgement{}, nil, classify(ctx, err, peerlink.ErrNoProof, peerlink.ErrNotAProof)
	}
	j, err := h.Judge(frame)
	if j.Verdict != nil {
		if _, werr := raw.Write(j.Verdict); werr != nil && err == nil {
			err = classify(ctx, werr, errVerdictUnsent, errVerdictUnsent)
		}
	}
	if ferr := finish(); err == nil && ferr != nil {
		err = ferr
	}
	return j, br, err
}

// Dial runs the dialling end of the handshake on raw, a connection to the
// consensus endpoint recorded for target, asking for dir. raw is owned
// from now on. Nothing but the proof is sent until the verdict verified.
// A refusal closes raw, is counted and logged, and comes back as an error
// wrapping peerlink's sentinel for it; so does a cancelled ctx, uncounted.
func (e *Endpoint) Dial(ctx context.Context, raw net.Conn, target string, dir peerlink.Direction) (*Conn, error) {
	s, br, err := e.dial(ctx, raw, target, dir)
	if err != nil {
		raw.Close()
		e.counters.Count(peerlink.RoleDialler, err)
		e.log.dialRefused(target, addrOf(raw), err)
		return nil, fmt.Errorf("consensus dial of %q at %s: %w", target, addrOf(raw), err)
	}
	return newConn(e, raw, br, s), nil
}

// DialTCP connects to addr, the consensus endpoint recorded for target,
// and runs Dial on the connection. A connection that cannot be opened is
// no refusal and is not counted: the caller's backoff handles it.
func (e *Endpoint) DialTCP(ctx context.Context, addr, target string, dir peerlink.Direction) (*Conn, error) {
	d := net.Dialer{Timeout: e.timeout}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("consensus dial of %q at %s: %w", target, addr, err)
	}
	return e.Dial(ctx, raw, target, dir)
}

func (e *Endpoint) dial(ctx context.Context, raw net.Conn, target string, dir peerlink.Direction) (*peerlink.Session, *bufio.Reader, error) {
	h, err := e.member.Dial(target, dir)
	if err != nil {
		return nil, nil, err
	}
	finish := e.bound(ctx, raw)
	s, br, err := dialExchange(ctx, raw, h)
	if ferr := finish(); err == nil && ferr != nil {
		err = ferr
	}
	return s, br, err
}

// dialExchange reads the challenge, sends the proof and checks the verdict.
func dialExchange(ctx context.Context, raw net.Conn, h *peerlink.DialHandshake) (*peerlink.Session, *bufio.Reader, error) {
	br := bufio.NewReaderSize(raw, readBufferSize)
	frame, err := readHandshake(br)
	if err != nil {
		return nil, nil, classify(ctx, err, peerlink.ErrNoChallenge, peerlink.ErrNoChallenge)
	}
	proof, err := h.Prove(frame)
	if err != nil {
		return nil, nil, err
	}
	if _, err := raw.Write(proof); err != nil {
		return nil, nil, classify(ctx, err, peerlink.ErrEndedByAcceptor, peerlink.ErrEndedByAcceptor)
	}
	if frame, err = readHandshake(br); err != nil {
		return nil, nil, classify(ctx, err, peerlink.ErrEndedByAcceptor, peerlink.ErrAcceptorProof)
	}
	s, err := h.Check(frame)
	return s, br, err
}
