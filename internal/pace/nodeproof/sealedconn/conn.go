package sealedconn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// DefaultHandshakeTimeout bounds a proof whose context has no deadline
// (the consensus handshake's 5 s, pace-consensus §7.3).
const DefaultHandshakeTimeout = 5 * time.Second

// readBufferSize is the client's read buffer: replies to REGISTER and
// HEARTBEAT are small; a large reply is read straight through it.
const readBufferSize = 16 << 10

// ErrClosed: the Conn was closed, or ended by an earlier failure that left
// the stream out of step (a bad tag, a broken frame, a cancelled request).
var ErrClosed = errors.New("sealed connection closed")

// aLongTimeAgo is a deadline in the past: it wakes a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

// Config is a dialling node's side of the proof.
type Config struct {
	// Prover is this node's identity, the roster it checks the scheduler
	// against and its random source. Required.
	Prover *nodeproof.Client
	// HandshakeTimeout bounds the proof when the context has no deadline;
	// 0 means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxReply caps a reply of an op whose table row sets no ceiling
	// (FETCH, COMPILE); 0 means wire.DefaultSessionCap.
	MaxReply uint32
	// Counters, if set, counts replies refused for a bad tag.
	Counters *nodeproof.Counters
}

// Conn is a proven, sealed 0xFC client connection. Do may be called from
// several goroutines; requests are sent one at a time.
type Conn struct {
	raw      net.Conn
	br       *bufio.Reader
	maxReply uint32
	counters *nodeproof.Counters

	mu     sync.Mutex // one exchange at a time
	sealer *nodeproof.Sealer
	server nodeproof.Peer
	wbuf   []byte
	broken error // first failure; every later Do returns it
}

// Dial connects to a scheduler's node port and proves this node's
// identity. A refused proof is returned as an error wrapping the
// wire.Refusal the scheduler answered.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return Client(ctx, raw, cfg)
}

// Client proves this node's identity over raw, which it owns from now on:
// it is closed if the proof fails.
func Client(ctx context.Context, raw net.Conn, cfg Config) (*Conn, error) {
	if cfg.Prover == nil {
		raw.Close()
		return nil, errors.New("sealedconn: Config.Prover is required")
	}
	c := &Conn{raw: raw, br: bufio.NewReaderSize(raw, readBufferSize), maxReply: cfg.MaxReply, counters: cfg.Counters}
	if c.maxReply == 0 {
		c.maxReply = wire.DefaultSessionCap
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := cfg.HandshakeTimeout
		if timeout <= 0 {
			timeout = DefaultHandshakeTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := c.prove(ctx, cfg.Prover); err != nil {
		raw.Close()
		return nil, fmt.Errorf("node proof with %s: %w", raw.RemoteAddr(), err)
	}
	return c, nil
}

// prove runs NODE-CHALLENGE then PROVE-NODE, both unsealed; the Ok reply
// to PROVE-NODE is the first sealed frame.
func (c *Conn) prove(ctx context.Context, p *nodeproof.Client) error {
	h, err := p.Begin()
	if err != nil {
		return err
	}
	_, answer, err := c.exchange(ctx, wire.OpNodeChallenge, h.Request().Append(nil), unsealed)
	if err != nil {
		return err
	}
	proof, err := h.Prove(answer)
	if err != nil {
		return err
	}
	if _, _, err := c.exchange(ctx, wire.OpProveNode, proof.Request.Append(nil), okSealed(proof.Sealer)); err != nil {
		return err
	}
	c.sealer, c.server = proof.Sealer, proof.Server
	return nil
}

// Do sends one sealed request whose payload is fields and reads its sealed
// reply: the terminal status and payload. An Error reply is returned as a
// wire.Refusal error alongside its payload and leaves the Conn usable; any
// other error ends it.
func (c *Conn) Do(ctx context.Context, op wire.Op, fields ...[]byte) (wire.Status, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return 0, nil, c.broken
	}
	var payload []byte
	for _, f := range fields {
		payload = wire.AppendField(payload, f)
	}
	return c.exchange(ctx, op, payload, allSealed(c.sealer))
}

// Server is the scheduler the proof proved.
func (c *Conn) Server() nodeproof.Peer { return c.server }

// RemoteAddr is the scheduler's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raw.RemoteAddr() }

// Close ends the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = ErrClosed
	}
	c.mu.Unlock()
	return c.raw.Close()
}
