package tier

import (
	"context"
	"errors"
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
)

// kvUpstream is a pace-kv reached over 0xFC through a connection pool.
type kvUpstream struct {
	pool *connPool
}

func newKVUpstream(p *connPool) *kvUpstream { return &kvUpstream{pool: p} }

func (u *kvUpstream) Fetch(ctx context.Context, key []byte) ([]byte, bool, error) {
	var (
		v   []byte
		hit bool
	)
	err := u.do(ctx, func(c *kvclient.Conn) error {
		var err error
		v, hit, err = c.FetchAppend(ctx, nil, string(key))
		return err
	})
	return v, hit, err
}

func (u *kvUpstream) Store(ctx context.Context, key, group, value []byte) error {
	return u.do(ctx, func(c *kvclient.Conn) error {
		return c.Store(ctx, string(key), kvclient.StoreArgs{PrefetchGroup: string(group)}, value)
	})
}

func (u *kvUpstream) Close() error {
	u.pool.close()
	return nil
}

// do runs one exchange. A pooled connection that fails without a timeout was most likely
// closed by the upstream while idle, which says nothing about the upstream's health, so the
// exchange is retried once on a fresh connection (both verbs are idempotent: keys are
// content-addressed). A timeout is not retried: the upstream stalled.
func (u *kvUpstream) do(ctx context.Context, exchange func(*kvclient.Conn) error) error {
	c, reused, err := u.pool.get(ctx)
	if err != nil {
		return err
	}
	err = exchange(c)
	if reused && isDown(err) && !errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
		u.pool.discard(c)
		if c, err = u.pool.dial(ctx); err != nil {
			return err
		}
		err = exchange(c)
	}
	u.pool.put(c, err)
	return err
}
