package kvclient

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// FetchAppend asks for key and, on a hit, appends the value to dst (reusing its capacity).
func (c *Conn) FetchAppend(ctx context.Context, dst []byte, key string) ([]byte, bool, error) {
	if c.broken {
		return dst, false, fmt.Errorf("%w: connection broken by an earlier exchange", ErrUnavailable)
	}
	auth := c.begin(ctx)
	c.wbuf = wire.AppendRequest(c.wbuf, wire.OpFetch, []byte(key))
	if err := c.send(nil); err != nil {
		return dst, false, err
	}
	var authErr *AuthError
	if auth {
		var err error
		if authErr, err = c.readAuth(); err != nil {
			return dst, false, err
		}
	}
	out, hit, err := c.readValue(dst)
	return out, hit, finish(authErr, err)
}

// readValue reads a FETCH reply into dst without an intermediate buffer.
func (c *Conn) readValue(dst []byte) ([]byte, bool, error) {
	info, _ := wire.Lookup(wire.OpFetch)
	var scratch [wire.ReplyHeaderLen]byte
	h, err := wire.ReadReplyHeader(c.br, &scratch)
	if err != nil {
		return dst, false, c.fail(err)
	}
	if err := wire.CheckReplyHeader(info, h, c.opts.MaxValue); err != nil {
		return dst, false, c.fail(err)
	}
	return c.readValueBody(h, dst)
}

// readValueBody reads a checked FETCH reply's payload: the value on Ok, nothing on Miss, the
// refusal on Error.
func (c *Conn) readValueBody(h wire.ReplyHeader, dst []byte) ([]byte, bool, error) {
	start := len(dst)
	dst = grow(dst, int(h.PayloadLen))
	if _, err := io.ReadFull(c.br, dst[start:]); err != nil {
		return dst[:start], false, c.fail(err)
	}
	switch h.Status {
	case wire.StatusOk:
		return dst, true, nil
	case wire.StatusMiss:
		if h.PayloadLen != 0 {
			return dst[:start], false, c.fail(errors.New("miss reply carries a payload"))
		}
		return dst, false, nil
	}
	r, perr := wire.ParseErrorPayload(dst[start:])
	if perr != nil {
		return dst[:start], false, c.fail(perr)
	}
	return dst[:start], false, r
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n)
	copy(nb, b)
	return nb
}

// StoreArgs are STORE's fields besides the key and the value.
type StoreArgs struct {
	PrefetchGroup string
	SourceRoot    string // the producer's source root, for server-side canonicalization
	BuildTree     string
}

// Store offers value under key.
func (c *Conn) Store(ctx context.Context, key string, args StoreArgs, value []byte) error {
	if c.broken {
		return fmt.Errorf("%w: connection broken by an earlier exchange", ErrUnavailable)
	}
	auth := c.begin(ctx)
	payload := 5*wire.FieldPrefixLen + len(key) + len(args.PrefetchGroup) + len(args.SourceRoot) + len(args.BuildTree) + len(value)
	c.wbuf = wire.AppendRequestHeader(c.wbuf, wire.NewRequestHeader(wire.OpStore, uint32(payload)))
	for _, f := range []string{key, args.PrefetchGroup, args.SourceRoot, args.BuildTree} {
		c.wbuf = wire.AppendStringField(c.wbuf, f)
	}
	c.wbuf = appendLen(c.wbuf, len(value))
	if err := c.send(value); err != nil {
		return err
	}
	return c.simpleReply(auth, wire.OpStore)
}

// Drop removes key from the answering tier; it reports whether the key was there.
func (c *Conn) Drop(ctx context.Context, key string) (bool, error) {
	if c.broken {
		return false, fmt.Errorf("%w: connection broken by an earlier exchange", ErrUnavailable)
	}
	auth := c.begin(ctx)
	c.wbuf = wire.AppendRequest(c.wbuf, wire.OpCacheDrop, []byte(key))
	if err := c.send(nil); err != nil {
		return false, err
	}
	var authErr *AuthError
	if auth {
		var err error
		if authErr, err = c.readAuth(); err != nil {
			return false, err
		}
	}
	status, _, err := wire.ReadReply(c.br, wire.OpCacheDrop, wire.MaxReportReply, nil)
	if err != nil && !isRefusal(err) {
		return false, c.fail(err)
	}
	return status == wire.StatusOk, finish(authErr, err)
}

func (c *Conn) simpleReply(auth bool, op wire.Op) error {
	var authErr *AuthError
	if auth {
		var err error
		if authErr, err = c.readAuth(); err != nil {
			return err
		}
	}
	_, _, err := wire.ReadReply(c.br, op, wire.MaxReportReply, nil)
	if err != nil && !isRefusal(err) {
		return c.fail(err)
	}
	return finish(authErr, err)
}

func isRefusal(err error) bool {
	var r wire.Refusal
	return errors.As(err, &r)
}

func appendLen(dst []byte, n int) []byte {
	return append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// FetchStream asks for key and, on a hit, hands the value to consume as a reader of exactly n
// bytes, so a large value can go straight to a file without a buffer the size of it. Whatever
// consume leaves unread is drained; an error from consume is returned and leaves the connection
// usable only if the value was read to its end.
func (c *Conn) FetchStream(ctx context.Context, key string, consume func(body io.Reader, n uint32) error) (bool, error) {
	if c.broken {
		return false, fmt.Errorf("%w: connection broken by an earlier exchange", ErrUnavailable)
	}
	auth := c.begin(ctx)
	c.wbuf = wire.AppendRequest(c.wbuf, wire.OpFetch, []byte(key))
	if err := c.send(nil); err != nil {
		return false, err
	}
	var authErr *AuthError
	if auth {
		var err error
		if authErr, err = c.readAuth(); err != nil {
			return false, err
		}
	}
	hit, err := c.streamValue(consume)
	return hit, finish(authErr, err)
}

func (c *Conn) streamValue(consume func(io.Reader, uint32) error) (bool, error) {
	info, _ := wire.Lookup(wire.OpFetch)
	var scratch [wire.ReplyHeaderLen]byte
	h, err := wire.ReadReplyHeader(c.br, &scratch)
	if err != nil {
		return false, c.fail(err)
	}
	if err := wire.CheckReplyHeader(info, h, c.opts.MaxValue); err != nil {
		return false, c.fail(err)
	}
	if h.Status != wire.StatusOk {
		_, _, err := c.readValueBody(h, nil)
		return false, err
	}
	body := &io.LimitedReader{R: c.br, N: int64(h.PayloadLen)}
	cerr := consume(body, h.PayloadLen)
	if body.N > 0 {
		if err := wire.Drain(body, uint64(body.N)); err != nil {
			return true, c.fail(err)
		}
	}
	return true, cerr
}
