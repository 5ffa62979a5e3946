package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/upstream"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// errNoSubstitute: some path of the outputs' closure is in neither the cache nor an upstream
// the server trusts; the derivation is built.
var errNoSubstitute = errors.New("no substitute")

// substitute tries to make a build's outputs valid without building them
// (gradient-server §14): each output, and whatever of its closure the store lacks, is asked
// for in the cache and then, one path at a time, with an external query the server answers
// from the caches' upstreams; the NARs are pulled from the cache or fetched from the URL the
// server gave, checked and imported. Any failure leaves the build to nix.
func (r *run) substitute(ctx context.Context, outputs []string) error {
	infos, err := r.resolveSubstitutes(ctx, outputs)
	if err != nil {
		return err
	}
	end := r.phase(wire.JobPhaseSubstituteFetch)
	files, err := r.fetchSubstitutes(ctx, infos)
	end(len(files), pulledBytes(infos, files))
	if err != nil {
		return err
	}
	end = r.phase(wire.JobPhaseNarImport)
	err = r.importPulled(ctx, infos, files)
	end(len(files), 0)
	if err != nil {
		return err
	}
	fromUpstream := 0
	for _, c := range infos {
		if c.URL.Valid {
			fromUpstream++
		}
	}
	r.s.log.Info("worker: outputs substituted, not built", "job", r.j.id, "paths", len(files),
		"from_upstream", fromUpstream, "from_cache", len(files)-fromUpstream)
	return r.hold(slices.Collect(maps.Keys(files)))
}

// resolveSubstitutes finds every invalid path of the outputs' closure in the cache or, by
// external query, upstream.
func (r *run) resolveSubstitutes(ctx context.Context, outputs []string) (map[string]wire.CachedPath, error) {
	queue, err := r.s.w.nix.Invalid(ctx, outputs)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range outputs {
		seen[p] = true
	}
	infos := map[string]wire.CachedPath{}
	for len(queue) > 0 {
		own, err := r.cacheQuery(ctx, queue, wire.QueryModePull, nil)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, p := range queue {
			c, ok := own[p]
			if !ok || !c.Cached {
				if c, err = r.externalQuery(ctx, p); err != nil {
					return nil, err
				}
			}
			infos[p] = c
			refs, _ := c.References.Get()
			for _, ref := range refs {
				if full := nixexec.FullStorePath(ref); !seen[full] {
					seen[full] = true
					next = append(next, full)
				}
			}
		}
		if queue, err = r.s.w.nix.Invalid(ctx, next); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// externalQuery asks for one path with CacheQuery{Pull, external} (gradient-protocol §7.2).
// An answer with a url must say how to check what it points at: the NAR's hash and size,
// and a compression the worker reads.
func (r *run) externalQuery(ctx context.Context, p string) (wire.CachedPath, error) {
	reply, err := r.ask(ctx, func(id string) wire.ClientMessage {
		return &wire.CacheQuery{JobID: r.j.id, QueryID: id, Paths: []string{p}, Mode: wire.QueryModePull, External: true}
	})
	if err != nil {
		return wire.CachedPath{}, err
	}
	status, ok := reply.(*wire.CacheStatus)
	if !ok {
		return wire.CachedPath{}, fmt.Errorf("%w: %s: the server could not tell", errNoSubstitute, p)
	}
	for _, c := range status.Cached {
		if c.Path != p || !c.Cached {
			continue
		}
		if u, ok := c.URL.Get(); ok && (!c.NarHash.Valid || !c.NarSize.Valid || upstream.CompressionOf(u) == "") {
			return wire.CachedPath{}, fmt.Errorf("%w: %s: upstream answer without NAR hash, size or known compression", errNoSubstitute, p)
		}
		return c, nil
	}
	return wire.CachedPath{}, fmt.Errorf("%w: %s", errNoSubstitute, p)
}

// fetchSubstitutes pulls the cache's paths (NarRequest) and downloads the upstream ones.
func (r *run) fetchSubstitutes(ctx context.Context, infos map[string]wire.CachedPath) (map[string]string, error) {
	own := map[string]wire.CachedPath{}
	files := map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(infos)) {
		c := infos[p]
		u, ok := c.URL.Get()
		if !ok {
			own[p] = c
			continue
		}
		file, err := r.download(ctx, p, u, c)
		if err != nil {
			return nil, err
		}
		files[p] = file
	}
	if len(own) == 0 {
		return files, nil
	}
	pulled, missing, err := r.pull(ctx, own)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d paths left the cache", errNoSubstitute, len(missing))
	}
	maps.Copy(files, pulled)
	return files, nil
}
