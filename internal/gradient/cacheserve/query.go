package cacheserve

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// defaultStoreDir prefixes references when a query names a path in reference form.
const defaultStoreDir = "/nix/store"

// query answers a CacheQuery (gradient-protocol §7.2) on a session goroutine; the checks
// that need no store are answered at once.
func (s *Session) query(ctx context.Context, q *wire.CacheQuery) error {
	s.cfg.Counters.Queries.Add(1)
	switch {
	case len(q.Paths) > MaxQueryPaths:
		s.cfg.Counters.QueryErrTooMany.Add(1)
		return s.send(ctx, cacheError(q, fmt.Sprintf("%d paths in one query, at most %d", len(q.Paths), MaxQueryPaths)))
	case q.External && (len(q.Paths) != 1 || q.Mode == wire.QueryModePush):
		s.cfg.Counters.QueryErrInvalid.Add(1)
		return s.send(ctx, cacheError(q, "an external query names exactly one path and is never a Push"))
	}
	select {
	case s.queries <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ctx.Done():
		return ErrClosed
	}
	if !s.spawn(func() { defer func() { <-s.queries }(); s.answer(q) }) {
		<-s.queries
		return ErrClosed
	}
	return nil
}

// answer looks the paths up and replies within the query timeout, whatever the store does.
func (s *Session) answer(q *wire.CacheQuery) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.QueryTimeout)
	defer cancel()
	done := make(chan wire.ServerMessage, 1)
	go func() { done <- s.lookup(ctx, q) }()
	var reply wire.ServerMessage
	select {
	case reply = <-done:
	case <-ctx.Done():
		if s.ctx.Err() != nil {
			return
		}
		s.cfg.Counters.QueryErrTimeout.Add(1)
		reply = cacheError(q, fmt.Sprintf("the cache state could not be read within %s", s.cfg.QueryTimeout))
	}
	err := s.send(s.ctx, reply)
	if _, isStatus := reply.(*wire.CacheStatus); err != nil && isStatus && s.ctx.Err() == nil {
		// Most likely over the message cap (a Pull of 1000 paths with huge reference lists).
		s.cfg.Counters.QueryErrTooLarge.Add(1)
		err = s.send(s.ctx, cacheError(q, "the answer is too large for one message; query fewer paths"))
	}
	s.logSendErr("CacheStatus", err)
}

// lookup builds the CacheStatus, or a CacheError when the state cannot be read: never a
// false "uncached".
func (s *Session) lookup(ctx context.Context, q *wire.CacheQuery) wire.ServerMessage {
	readable, pushable := s.cfg.Scope()
	caches := readable
	if q.Mode == wire.QueryModePush {
		caches = pushable
	}
	rows, err := s.cfg.Paths.LookupCachedPaths(ctx, caches, q.Paths)
	if err != nil {
		s.cfg.Counters.QueryErrStore.Add(1)
		s.cfg.Logger.Warn("cache query failed", "query_id", q.QueryID, "err", err)
		return cacheError(q, "the cache state could not be read")
	}
	status := &wire.CacheStatus{QueryID: q.QueryID, Cached: make([]wire.CachedPath, 0, len(q.Paths))}
	for _, p := range q.Paths {
		row, ok := rows[p]
		if ok {
			if ok, err = s.objectPresent(ctx, row); err != nil {
				s.cfg.Counters.QueryErrStore.Add(1)
				return cacheError(q, "the NAR storage could not be read")
			}
		}
		switch {
		case ok && q.Mode == wire.QueryModePull:
			status.Cached = append(status.Cached, pullEntry(p, row))
		case ok:
			status.Cached = append(status.Cached, wire.CachedPath{Path: p, Cached: true})
		case q.External && s.cfg.Upstream != nil:
			c, err := s.upstream(ctx, readable, p, q.Mode)
			if err != nil {
				s.cfg.Counters.QueryErrStore.Add(1)
				return cacheError(q, "the upstream caches could not be consulted")
			}
			if c.Cached || q.Mode != wire.QueryModeNormal {
				status.Cached = append(status.Cached, c)
			}
		case q.Mode != wire.QueryModeNormal: // Normal lists only the cached paths
			status.Cached = append(status.Cached, wire.CachedPath{Path: p})
		}
	}
	return status
}

// upstream answers an external query's one path from the caches' upstreams
// (gradient-server §14): in Pull mode the upstream's metadata with url set to its NAR.
func (s *Session) upstream(ctx context.Context, caches []string, p string, mode wire.QueryMode) (wire.CachedPath, error) {
	c, ok, err := s.cfg.Upstream.Lookup(ctx, caches, p)
	switch {
	case err != nil:
		s.cfg.Logger.Warn("upstream lookup failed", "path", p, "err", err)
		return wire.CachedPath{}, err
	case !ok:
		s.cfg.Counters.UpstreamMisses.Add(1)
		return wire.CachedPath{Path: p}, nil
	}
	s.cfg.Counters.UpstreamHits.Add(1)
	if mode == wire.QueryModeNormal {
		return wire.CachedPath{Path: p, Cached: true}, nil
	}
	c.Path = p
	return c, nil
}

// objectPresent checks that a row's object is stored whole; a row whose object is gone
// or damaged is demoted, so it answers uncached and the path is uploaded again.
func (s *Session) objectPresent(ctx context.Context, row store.CachedPath) (bool, error) {
	ok, size, err := s.cfg.NARs.Has(row.StoreHash)
	if err != nil {
		return false, err
	}
	if ok && size == row.FileSize {
		return true, nil
	}
	s.demote(ctx, row.StoreHash)
	return false, nil
}

// demote deletes a stale row, unless an upload of the path is underway (its commit will
// replace the row).
func (s *Session) demote(ctx context.Context, storeHash string) {
	if s.cfg.Admission.InProgress(storeHash) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout)
	defer cancel()
	if err := s.cfg.Paths.DemoteCachedPath(ctx, storeHash); err != nil {
		s.cfg.Logger.Warn("demoting a stale cache row failed", "store_hash", storeHash, "err", err)
		return
	}
	s.cfg.Counters.Demoted.Add(1)
}

// pullEntry is a cached path's full Pull answer: hashes as sha256:nix32, references as full
// store paths, url None (the worker uses NarRequest).
func pullEntry(p string, row store.CachedPath) wire.CachedPath {
	dir := defaultStoreDir
	if strings.HasPrefix(p, "/") {
		dir = path.Dir(p)
	}
	refs := make([]string, len(row.References))
	for i, r := range row.References {
		refs[i] = dir + "/" + path.Base(r)
	}
	sigs := []string{}
	for _, sig := range row.Signatures {
		if sig.Signature != "" {
			sigs = append(sigs, sig.Signature)
		}
	}
	return wire.CachedPath{
		Path: p, Cached: true,
		FileSize: wire.Some(uint64(row.FileSize)), NarSize: wire.Some(uint64(row.NarSize)),
		NarHash: wire.Some(canonicalHash(row.NarHash)), FileHash: wire.Some(canonicalHash(row.FileHash)),
		References: wire.Some(refs), Signatures: wire.Some(sigs),
		Deriver: optional(row.Deriver), CA: optional(row.CA),
	}
}

// canonicalHash writes a stored hash as sha256:nix32; a text it cannot read passes as is.
func canonicalHash(h string) string {
	if c, err := nixhash.Canonical(h); err == nil {
		return c
	}
	return h
}

func optional(s string) wire.Option[string] {
	if s == "" {
		return wire.None[string]()
	}
	return wire.Some(s)
}

func cacheError(q *wire.CacheQuery, msg string) *wire.CacheError {
	return &wire.CacheError{QueryID: q.QueryID, Message: msg}
}
