package cc

import (
	"context"
	"errors"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
)

func (r *run) cacheOptions() kvclient.Options {
	o := kvclient.Options{Addr: r.cfg.Addr, ConnectTimeout: r.cfg.ConnectTimeout, Timeout: r.cfg.Timeout}
	if r.cfg.Token != "" { // a username without a token sends nothing (pace-wire §3.9.3)
		o.Username, o.Password = r.cfg.User, r.cfg.Token
	}
	return o
}

// conn is this invocation's one connection to the cache, dialled on first use: a direct hit
// asks twice (manifest, object) and a second dial would cost as much as the exchange.
func (r *run) conn(ctx context.Context) (*kvclient.Conn, error) {
	if r.cache != nil {
		return r.cache, nil
	}
	c, err := kvclient.Dial(ctx, r.cacheOptions())
	if err == nil {
		r.cache = c
	}
	return c, err
}

// closeCache ends the invocation's cache connection.
func (r *run) closeCache() {
	if r.cache != nil {
		r.cache.Close()
	}
}

// fetch asks the cache for key. Any failure is a miss: an unreachable, slow, refusing or
// garbled cache never fails a build. After one failure the cache is not asked again, and
// nothing is stored, for the rest of this invocation (pace-wire §3.8, pace-wire §3.11).
func (r *run) fetch(ctx context.Context, key cachekey.Digest) ([]byte, bool) {
	if r.cacheDown {
		return nil, false
	}
	defer r.lookupTime(time.Now())
	c, err := r.conn(ctx)
	if err != nil {
		r.cacheFailed(err)
		return nil, false
	}
	v, hit, err := c.FetchAppend(ctx, nil, key.Hex())
	if err != nil {
		r.cacheFailed(err)
		return nil, false
	}
	return v, hit
}

// store offers a value; failures are noted and otherwise ignored.
func (r *run) store(ctx context.Context, key cachekey.Digest, v []byte) {
	if r.cacheDown {
		return
	}
	if r.cfg.MaxStoreBytes > 0 && uint64(len(v)) > r.cfg.MaxStoreBytes {
		r.verbosef("not stored: %d bytes exceed PACE_MAX_STORE_BYTES", len(v))
		return
	}
	defer r.storeTime(time.Now())
	args := kvclient.StoreArgs{PrefetchGroup: r.cfg.PrefetchGroup, SourceRoot: r.cfg.SourceDir, BuildTree: r.cfg.BinaryDir}
	reused := r.cache != nil
	c, err := r.conn(ctx)
	if err == nil {
		err = c.Store(ctx, key.Hex(), args, v)
	}
	if err != nil && reused && errors.Is(err, kvclient.ErrUnavailable) {
		// The connection sat idle through the compile, and a node closes idle connections
		// after 5 s (pace-wire §4): one fresh connection, then the failure stands.
		r.closeCache()
		r.cache = nil
		if c, err = r.conn(ctx); err == nil {
			err = c.Store(ctx, key.Hex(), args, v)
		}
	}
	if err != nil {
		r.cacheFailed(err)
	}
}

// lookupTime and storeTime add the time since t0 to the invocation's cache I/O, which the
// statistics report apart (pace-wire §3.13); a dial counts toward whichever came first.
func (r *run) lookupTime(t0 time.Time) {
	d := ms(time.Since(t0))
	r.rec.LookupMS += d
	r.rec.CacheMS += d
}

func (r *run) storeTime(t0 time.Time) {
	d := ms(time.Since(t0))
	r.rec.StoreMS += d
	r.rec.CacheMS += d
}

func (r *run) cacheFailed(err error) {
	r.cacheDown = true
	r.closeCache()
	r.cache = nil
	var ae *kvclient.AuthError
	switch {
	case errors.As(err, &ae):
		r.verbosef("cache at %s refused PACE_TOKEN: %v", r.cfg.Addr, ae.Refusal)
	case errors.Is(err, kvclient.ErrUnavailable):
		r.verbosef("cache at %s not reached: %v", r.cfg.Addr, err)
	default:
		r.verbosef("cache at %s refused: %v", r.cfg.Addr, err)
	}
}
