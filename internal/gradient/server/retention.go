package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/cachegc"
	"github.com/buildfleet/buildfleet/internal/gradient/cacheserve"
	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/retention"
)

// Defaults of gradient-server §15.
const (
	DefaultSweepEvery    = time.Minute     // partial uploads and expired leases
	DefaultDiskCheck     = 2 * time.Second // the disk cap's estimate against the cap
	diskCapCollectionGap = time.Minute     // the cap collects at most this often
)

// RetentionConfig is the cache's garbage collection, its disk cap and the sweeps
// (gradient-server §15). The zero value sweeps and never collects unless asked.
type RetentionConfig struct {
	Policy retention.Policy
	// KeepLogs prunes settled evaluations and build logs older than this that no kept
	// evaluation needs, at each collection; 0 keeps them.
	KeepLogs time.Duration
	// Interval collects this often; 0 only on the disk cap or on demand.
	Interval time.Duration
	// MaxDisk collects when the NAR objects take more bytes than this; 0 is no cap.
	MaxDisk int64
	// SweepEvery sweeps stale partial uploads and expired upload leases (0:
	// DefaultSweepEvery); DiskCheck compares the disk estimate with the cap (0:
	// DefaultDiskCheck).
	SweepEvery, DiskCheck time.Duration
}

// retentionCounters count what the retention passes did.
type retentionCounters struct {
	collections, pathsDeleted, bytesDeleted, leasesSwept, partialsSwept atomic.Uint64
}

func (c *retentionCounters) metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_cache_gc_runs_total", Help: "Cache collections run (not dry runs): interval, disk cap or admin.", Value: &c.collections},
		{Name: "gradient_cache_gc_paths_deleted_total", Help: "Cached paths a collection deleted, row and object.", Value: &c.pathsDeleted},
		{Name: "gradient_cache_gc_bytes_deleted_total", Help: "Bytes of NAR objects collections deleted.", Value: &c.bytesDeleted},
		{Name: "gradient_upload_leases_swept_total", Help: "Upload leases the sweep reclaimed after they made no progress for the lease.", Value: &c.leasesSwept},
		{Name: "gradient_partial_uploads_swept_total", Help: "Partial uploads the sweep deleted after no one wrote them for the lease.", Value: &c.partialsSwept},
	}
}

// diskMeter estimates the NAR objects' bytes between measurements: the last measured size
// plus what uploads committed since.
type diskMeter struct {
	mu          sync.Mutex
	measured    int64
	committedAt uint64
	lastCap     time.Time // the last collection the cap started
}

func newCollector(s *Server) *cachegc.Collector {
	return cachegc.New(cachegc.Config{Store: s.cfg.Store, NARs: s.cfg.NARs, Policy: s.cfg.Retention.Policy,
		KeepLogs: s.cfg.Retention.KeepLogs, Hold: s.holdUploads, Now: s.now, Logger: s.log})
}

// holdUploads keeps uploads of a path away while the collection deletes it, with a lease of
// no bytes; a path an upload holds is left alone.
func (s *Server) holdUploads(storeHash string) (func(), bool) {
	l, err := s.uploads.Acquire(storeHash, 0, nil)
	if err != nil {
		return nil, false
	}
	return l.Release, true
}

// CollectGarbage runs one collection of the cache (a dry run only plans), for the API.
func (s *Server) CollectGarbage(ctx context.Context, dryRun bool) (api.GCReport, error) {
	rep, err := s.gc.Run(ctx, dryRun)
	if !dryRun {
		s.retained.collections.Add(1)
		s.retained.pathsDeleted.Add(uint64(len(rep.Deleted)))
		s.retained.bytesDeleted.Add(uint64(rep.DeletedBytes))
		if s.cfg.Retention.MaxDisk > 0 {
			s.measureDisk()
		}
	}
	return gcReport(rep), err
}

func gcReport(r cachegc.Report) api.GCReport {
	out := api.GCReport{DryRun: r.DryRun, KeptEvaluations: r.KeptEvaluations, Roots: r.Roots, KeptPaths: r.KeptPaths,
		KeptBytes: r.KeptBytes, DeletedBytes: r.DeletedBytes, Busy: r.Busy, EvaluationsPruned: r.EvaluationsPruned,
		LogsPruned: r.LogsPruned, Deleted: make([]api.GCDeleted, 0, len(r.Deleted))}
	for _, d := range r.Deleted {
		out.Deleted = append(out.Deleted, api.GCDeleted{StorePath: d.StorePath, Size: d.Size, Since: d.Since, Reason: d.Reason})
	}
	return out
}

// runRetention sweeps, collects on the interval and watches the disk cap until ctx ends.
func (s *Server) runRetention(ctx context.Context) {
	rc := s.cfg.Retention
	sweep := time.NewTicker(cmpOr(rc.SweepEvery, DefaultSweepEvery))
	defer sweep.Stop()
	var interval, disk <-chan time.Time
	if rc.Interval > 0 {
		t := time.NewTicker(rc.Interval)
		defer t.Stop()
		interval = t.C
	}
	if rc.MaxDisk > 0 {
		s.measureDisk()
		t := time.NewTicker(cmpOr(rc.DiskCheck, DefaultDiskCheck))
		defer t.Stop()
		disk = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-sweep.C:
			s.sweep()
		case <-interval:
			s.collect(ctx, "interval")
		case <-disk:
			if s.overDiskCap() {
				s.collect(ctx, "disk cap")
			}
		}
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// sweep reclaims expired upload leases (their uploads are aborted), then deletes partial
// uploads no one wrote for a lease.
func (s *Server) sweep() {
	if n := s.uploads.Sweep(); n > 0 {
		s.retained.leasesSwept.Add(uint64(n))
		s.log.Info("upload leases expired", "uploads", n)
	}
	n, err := s.cfg.NARs.SweepPartials(cacheserve.DefaultLease)
	s.retained.partialsSwept.Add(uint64(n))
	if err != nil {
		s.log.Warn("sweeping partial uploads", "err", err)
	}
	if n > 0 {
		s.log.Info("stale partial uploads deleted", "partials", n)
	}
}

// collect runs a collection for why, and says so when the cap is still exceeded after it.
func (s *Server) collect(ctx context.Context, why string) {
	rep, err := s.CollectGarbage(ctx, false)
	if err != nil {
		s.log.Warn("cache gc", "trigger", why, "err", err)
	}
	if why == "disk cap" && rep.KeptBytes > s.cfg.Retention.MaxDisk {
		s.log.Warn("the cache's kept paths alone exceed the disk cap; nothing reachable from a root is deleted",
			"kept_bytes", rep.KeptBytes, "cap", s.cfg.Retention.MaxDisk)
	}
}

// measureDisk measures the NAR objects again.
func (s *Server) measureDisk() {
	bytes, _, err := s.cfg.NARs.Usage()
	if err != nil {
		s.log.Warn("measuring the NAR objects", "err", err)
		return
	}
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	s.disk.measured, s.disk.committedAt = bytes, s.cacheCounters.CommittedBytes.Load()
}

// overDiskCap reports whether the estimate exceeds the cap and the cap may collect now.
func (s *Server) overDiskCap() bool {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	estimate := s.disk.measured + int64(s.cacheCounters.CommittedBytes.Load()-s.disk.committedAt)
	now := s.now()
	if estimate <= s.cfg.Retention.MaxDisk || now.Sub(s.disk.lastCap) < diskCapCollectionGap {
		return false
	}
	s.disk.lastCap = now
	return true
}
