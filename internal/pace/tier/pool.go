package tier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
)

// maxIdleAge retires a pooled connection before pace-kv's idle timeout (30 s by default)
// would close it under us.
const maxIdleAge = 15 * time.Second

var errPoolClosed = fmt.Errorf("%w: cache tier shutting down", kvclient.ErrUnavailable)

// connPool keeps a few idle connections to the upstream so a read-through costs no dial.
// Every open connection is tracked so that close aborts exchanges in flight at once.
type connPool struct {
	opts    kvclient.Options
	maxIdle int
	now     func() time.Time

	mu     sync.Mutex
	idle   []idleConn // most recently used last
	open   map[*kvclient.Conn]struct{}
	closed bool
}

type idleConn struct {
	c     *kvclient.Conn
	since time.Time
}

func newConnPool(opts kvclient.Options, maxIdle int, now func() time.Time) *connPool {
	return &connPool{opts: opts, maxIdle: maxIdle, now: now, open: map[*kvclient.Conn]struct{}{}}
}

// get returns an idle connection (reused true) or dials a new one.
func (p *connPool) get(ctx context.Context) (c *kvclient.Conn, reused bool, err error) {
	if c := p.takeIdle(); c != nil {
		return c, true, nil
	}
	c, err = p.dial(ctx)
	return c, false, err
}

func (p *connPool) takeIdle() *kvclient.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		last := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if p.now().Sub(last.since) < maxIdleAge {
			return last.c
		}
		p.forgetLocked(last.c)
	}
	return nil
}

func (p *connPool) dial(ctx context.Context) (*kvclient.Conn, error) {
	p.mu.Lock()
	closed, opts := p.closed, p.opts
	p.mu.Unlock()
	if closed {
		return nil, errPoolClosed
	}
	c, err := kvclient.Dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil, errPoolClosed
	}
	p.open[c] = struct{}{}
	return c, nil
}

// put returns c after an exchange that ended with err. A broken connection is discarded, and
// so is one whose credential was refused: pace-kv may have gained a password since it was
// opened, and only a new connection presents AUTH again.
func (p *connPool) put(c *kvclient.Conn, err error) {
	var authErr *kvclient.AuthError
	discard := c.Broken() || isDown(err) || errors.As(err, &authErr)
	p.mu.Lock()
	defer p.mu.Unlock()
	if discard || p.closed || len(p.idle) >= p.maxIdle {
		p.forgetLocked(c)
		return
	}
	p.idle = append(p.idle, idleConn{c: c, since: p.now()})
}

// setPassword makes every connection dialled from now on present password (a reload of
// --requirepass), and retires the idle ones, which authenticated with the old one.
func (p *connPool) setPassword(password string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts.Password = password
	for _, ic := range p.idle {
		p.forgetLocked(ic.c)
	}
	p.idle = nil
}

// discard closes c without returning it.
func (p *connPool) discard(c *kvclient.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forgetLocked(c)
}

func (p *connPool) forgetLocked(c *kvclient.Conn) {
	delete(p.open, c)
	c.Close()
}

// close closes every connection, idle or busy: a busy exchange fails at once.
func (p *connPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.open = map[*kvclient.Conn]struct{}{}
	p.idle = nil
}
