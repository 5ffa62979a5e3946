// Package kvclient speaks the 0xFC cache verbs (FETCH, STORE, CACHE-DROP) as a client: pace-cc
// against a node's tier or pace-kv, a node's tier against its --upstream, and the benchmarks.
//
// A password, when set, travels as AUTH kind 01 pipelined in the same write as the first command
// on a connection (pace-wire §3.9.3), so authentication costs no round trip. Errors come in two
// kinds callers must tell apart: ErrUnavailable (the cache could not be reached or the exchange
// broke; pace-cc treats it as a miss and stops talking to that cache) and a wire.Refusal (the
// cache answered and said no).
package kvclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ErrUnavailable wraps every failure to reach the cache or to finish an exchange with it.
var ErrUnavailable = errors.New("cache unavailable")

// AuthError reports a credential the cache refused; the command's own reply follows it.
type AuthError struct{ Refusal wire.Refusal }

func (e *AuthError) Error() string { return "cache refused the credential: " + e.Refusal.Error() }

// Options configure a connection.
type Options struct {
	Addr           string
	ConnectTimeout time.Duration // 0: the operating system's default
	Timeout        time.Duration // bound on each whole exchange; 0: none
	Username       string
	Password       string // empty: send no AUTH
	MaxValue       uint32 // largest FETCH reply accepted; 0: wire.DefaultSessionCap
}

// Conn is one connection to a cache. It is not safe for concurrent use.
type Conn struct {
	nc       net.Conn
	br       *bufio.Reader
	opts     Options
	wbuf     []byte
	authSent bool
	broken   bool
}

// Dial connects to opts.Addr.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	d := net.Dialer{Timeout: opts.ConnectTimeout}
	nc, err := d.DialContext(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if opts.MaxValue == 0 {
		opts.MaxValue = wire.DefaultSessionCap
	}
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), opts: opts}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Broken reports whether an earlier exchange left the connection unusable.
func (c *Conn) Broken() bool { return c.broken }

// begin arms the exchange deadline and starts the write buffer, with a pipelined AUTH first when
// this connection has not sent one.
func (c *Conn) begin(ctx context.Context) (authPending bool) {
	deadline, ok := ctx.Deadline()
	if c.opts.Timeout > 0 {
		if d := time.Now().Add(c.opts.Timeout); !ok || d.Before(deadline) {
			deadline, ok = d, true
		}
	}
	if ok {
		c.nc.SetDeadline(deadline)
	} else {
		c.nc.SetDeadline(time.Time{})
	}
	c.wbuf = c.wbuf[:0]
	if c.opts.Password == "" || c.authSent {
		return false
	}
	c.authSent = true
	c.wbuf = wire.AppendRequest(c.wbuf, wire.OpAuth, []byte{1}, []byte(c.opts.Username), []byte(c.opts.Password))
	return true
}

// readAuth reads the pipelined AUTH reply. unknown-opcode means the server runs no auth (a node's
// tier) and is fine; any other refusal is reported after the command's own reply is read.
func (c *Conn) readAuth() (*AuthError, error) {
	_, _, err := wire.ReadReply(c.br, wire.OpAuth, wire.MaxRefusalReply, nil)
	var r wire.Refusal
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &r) && r.Code == wire.CodeUnknownOpcode:
		return nil, nil
	case errors.As(err, &r):
		return &AuthError{Refusal: r}, nil
	}
	return nil, c.fail(err)
}

func (c *Conn) fail(err error) error {
	c.broken = true
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// send writes the buffered frames followed by tail (a large value, written without copying).
func (c *Conn) send(tail []byte) error {
	bufs := net.Buffers{c.wbuf}
	if len(tail) > 0 {
		bufs = append(bufs, tail)
	}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return c.fail(err)
	}
	return nil
}

// finish combines an AUTH refusal with the command's outcome: the command's transport failure
// wins, then the credential problem, then the command's refusal.
func finish(authErr *AuthError, err error) error {
	if err != nil && errors.Is(err, ErrUnavailable) {
		return err
	}
	if authErr != nil {
		return authErr
	}
	return err
}

var _ io.Closer = (*Conn)(nil)
