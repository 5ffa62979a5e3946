package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// pool hands out at most max connections, reusing idle ones and dialing on demand.
type pool struct {
	cfg   *pgx.ConnConfig
	slots chan struct{}  // one token per connection in use
	idle  chan *pgx.Conn // idle connections, at most max

	mu     sync.Mutex
	closed bool
}

var errPoolClosed = errors.New("postgres: store closed")

func newPool(cfg *pgx.ConnConfig, max int) *pool {
	return &pool{cfg: cfg, slots: make(chan struct{}, max), idle: make(chan *pgx.Conn, max)}
}

// acquire waits for a free slot, then returns an idle live connection or dials a new one.
func (p *pool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.isClosed() {
		<-p.slots
		return nil, errPoolClosed
	}
	for {
		select {
		case c := <-p.idle:
			if !c.IsClosed() {
				return c, nil
			}
			continue
		default:
		}
		c, err := pgx.ConnectConfig(ctx, p.cfg)
		if err != nil {
			<-p.slots
			return nil, fmt.Errorf("connect: %w", err)
		}
		return c, nil
	}
}

// release returns a connection: broken ones (pgx closes a connection whose query was
// interrupted) are dropped, healthy ones kept idle.
func (p *pool) release(c *pgx.Conn) {
	defer func() { <-p.slots }()
	if c.IsClosed() {
		return
	}
	if p.isClosed() {
		c.Close(context.Background())
		return
	}
	p.idle <- c // never blocks: at most max connections exist
}

func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// close closes the idle connections; connections in use close on release.
func (p *pool) close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	var errs []error
	for {
		select {
		case c := <-p.idle:
			errs = append(errs, c.Close(context.Background()))
		default:
			return errors.Join(errs...)
		}
	}
}
