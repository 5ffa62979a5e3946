package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Cache query limits of gradient-protocol §1.3 and gradient-protocol §7.2.
const (
	maxQueriesInFlight = 4
	cacheQueryMaxPaths = 1000
	// maxQueryAttempts bounds the retries of a query answered with CacheError or not at all;
	// CacheError is retried and never read as "uncached".
	maxQueryAttempts = 5
)

// errCacheUnavailable: the cache could not answer a query after every retry.
var errCacheUnavailable = errors.New("cache state could not be determined")

// cacheQuery asks the cache about paths in mode, in queries of at most 1000 paths, and
// returns the answers by path. A path the answer leaves out is absent from the map.
func (r *run) cacheQuery(ctx context.Context, paths []string, mode wire.QueryMode, narSizes map[string]uint64) (map[string]wire.CachedPath, error) {
	out := make(map[string]wire.CachedPath, len(paths))
	for chunk := range slices.Chunk(paths, cacheQueryMaxPaths) {
		q := &wire.CacheQuery{JobID: r.j.id, Paths: chunk, Mode: mode}
		if narSizes != nil {
			q.NarSizes = make([]wire.Option[uint64], len(chunk))
			for i, p := range chunk {
				if size, ok := narSizes[p]; ok {
					q.NarSizes[i] = wire.Some(size)
				}
			}
		}
		status, err := r.queryWithRetries(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, c := range status.Cached {
			out[c.Path] = c
		}
	}
	return out, nil
}

func (r *run) queryWithRetries(ctx context.Context, q *wire.CacheQuery) (*wire.CacheStatus, error) {
	defer r.phase(wire.JobPhaseCacheQueryWait)(len(q.Paths), 0)
	delay := r.s.w.cfg.RetryDelay
	var last error
	for attempt := 1; ; attempt++ {
		reply, err := r.ask(ctx, func(id string) wire.ClientMessage { q.QueryID = id; return q })
		switch m := reply.(type) {
		case *wire.CacheStatus:
			return m, nil
		case *wire.CacheError:
			last = fmt.Errorf("%w: %s", errCacheUnavailable, m.Message)
		default:
			last = err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if attempt == maxQueryAttempts {
			return nil, failed(wire.BuildFailureKindTransient, fmt.Errorf("cache query failed %d times: %w", attempt, last))
		}
		r.s.log.Warn("worker: cache query failed, retrying", "job", r.j.id, "err", last, "in", delay)
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay *= 2
	}
}

// ask sends one query (CacheQuery or QueryKnownDerivations) under a fresh UUIDv7 query id,
// holding one of the session's 4 query slots, and waits for its answer.
func (r *run) ask(ctx context.Context, build func(queryID string) wire.ClientMessage) (wire.ServerMessage, error) {
	select {
	case r.s.queries <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-r.s.queries }()
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	replies, done := r.s.routes.awaitQuery(id.String())
	defer done()
	if err := r.s.send(build(id.String())); err != nil {
		return nil, err
	}
	timer := time.NewTimer(r.s.w.cfg.CacheReplyTimeout)
	defer timer.Stop()
	select {
	case m := <-replies:
		return m, nil
	case <-timer.C:
		return nil, fmt.Errorf("no answer to query %s within %s", id, r.s.w.cfg.CacheReplyTimeout)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// knownDerivations asks which .drv paths the server already holds with complete closures
// (gradient-server §6.2 step 5). A failure counts as "none known".
func (r *run) knownDerivations(ctx context.Context, drvs []string) map[string]bool {
	defer r.phase(wire.JobPhaseKnownDerivationsWait)(len(drvs), 0)
	known := map[string]bool{}
	for chunk := range slices.Chunk(drvs, cacheQueryMaxPaths) {
		reply, err := r.ask(ctx, func(id string) wire.ClientMessage {
			return &wire.QueryKnownDerivations{JobID: r.j.id, QueryID: id, DrvPaths: chunk}
		})
		kd, ok := reply.(*wire.KnownDerivations)
		if err != nil || !ok {
			continue
		}
		for _, d := range kd.Known {
			known[d] = true
		}
	}
	return known
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// topological orders path infos so that references come first.
func topological(infos []nixexec.PathInfo) ([]nixexec.PathInfo, error) {
	items := make([]nixexec.ImportItem, len(infos))
	byPath := make(map[string]nixexec.PathInfo, len(infos))
	for i, in := range infos {
		items[i] = nixexec.ImportItem{Path: in.Path, References: in.References}
		byPath[in.Path] = in
	}
	ordered, err := nixexec.ImportOrder(items)
	if err != nil {
		return nil, err
	}
	out := make([]nixexec.PathInfo, len(ordered))
	for i, it := range ordered {
		out[i] = byPath[it.Path]
	}
	return out, nil
}
