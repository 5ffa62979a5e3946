package cachegc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/retention"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// deleteBatch is how many paths one delete transaction removes (and how many uploads a
// batch holds off at once).
const deleteBatch = 32

// Config wires a Collector.
type Config struct {
	Store  store.Retention
	NARs   *narstore.Store
	Policy retention.Policy
	// KeepLogs prunes settled evaluations and build logs older than this that no kept
	// evaluation needs; 0 keeps them all.
	KeepLogs time.Duration
	// Hold keeps uploads of a store hash away while it is deleted and reports false when one
	// is in progress (the path is then left alone). Nil holds nothing.
	Hold   func(storeHash string) (release func(), ok bool)
	Now    func() time.Time
	Logger *slog.Logger
}

// Collector runs collections; it is safe for concurrent use.
type Collector struct {
	cfg Config
	mu  sync.Mutex // one collection at a time
}

// New returns a collector.
func New(cfg Config) *Collector {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Hold == nil {
		cfg.Hold = func(string) (func(), bool) { return func() {}, true }
	}
	return &Collector{cfg: cfg}
}

// Report is what a collection found and did.
type Report struct {
	DryRun          bool
	KeptEvaluations int
	Roots           int
	KeptPaths       int
	KeptBytes       int64
	// Deleted lists what went (a dry run: what would go), by store hash.
	Deleted      []Deleted
	DeletedBytes int64
	// Busy counts paths left alone because an upload of them was in progress.
	Busy              int
	EvaluationsPruned int
	LogsPruned        int
}

// Deleted is one path the collection removed.
type Deleted struct {
	StorePath string
	Size      int64 // bytes on disk
	Since     time.Time
	Reason    string
}

// Run collects once; a dry run plans and deletes nothing.
func (c *Collector) Run(ctx context.Context, dryRun bool) (Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	g, err := c.cfg.Store.RetentionGraph(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("cache gc: %w", err)
	}
	evals, paths, names := plannerInput(g)
	plan := retention.Make(now, c.cfg.Policy, evals, paths)
	r := Report{DryRun: dryRun, KeptEvaluations: len(plan.KeptEvaluations), Roots: plan.Roots,
		KeptPaths: plan.KeptPaths, KeptBytes: plan.KeptBytes}
	if dryRun {
		for _, d := range plan.Delete {
			r.add(d, names[d.Hash])
		}
		return r, nil
	}
	if err := c.delete(ctx, plan.Delete, names, &r); err != nil {
		return r, err
	}
	if c.cfg.KeepLogs > 0 {
		err = c.prune(ctx, now.Add(-c.cfg.KeepLogs), plan.KeptEvaluations, &r)
	}
	c.cfg.Logger.Info("cache gc", "deleted", len(r.Deleted), "deleted_bytes", r.DeletedBytes, "kept", r.KeptPaths,
		"kept_bytes", r.KeptBytes, "busy", r.Busy, "evaluations_pruned", r.EvaluationsPruned, "logs_pruned", r.LogsPruned)
	return r, err
}

func (r *Report) add(d retention.Deletion, storePath string) {
	r.Deleted = append(r.Deleted, Deleted{StorePath: storePath, Size: d.Size, Since: d.Since, Reason: d.Reason})
	r.DeletedBytes += d.Size
}

// delete removes the plan's paths in batches: uploads held off, rows deleted, objects removed.
func (c *Collector) delete(ctx context.Context, plan []retention.Deletion, names map[string]string, r *Report) error {
	for start := 0; start < len(plan); start += deleteBatch {
		batch := plan[start:min(start+deleteBatch, len(plan))]
		if err := c.deleteBatch(ctx, batch, names, r); err != nil {
			return err
		}
	}
	return nil
}

func (c *Collector) deleteBatch(ctx context.Context, batch []retention.Deletion, names map[string]string, r *Report) error {
	var hashes []string
	byHash := map[string]retention.Deletion{}
	for _, d := range batch {
		release, ok := c.cfg.Hold(d.Hash)
		if !ok {
			r.Busy++
			continue
		}
		defer release()
		hashes = append(hashes, d.Hash)
		byHash[d.Hash] = d
	}
	if len(hashes) == 0 {
		return nil
	}
	gone, err := c.cfg.Store.DeleteCachedPaths(ctx, hashes)
	if err != nil {
		return fmt.Errorf("cache gc: %w", err)
	}
	var errs []error
	for _, h := range gone { // rows first: no row ever names a missing object
		if err := c.cfg.NARs.Remove(h); err != nil {
			errs = append(errs, err)
		}
		r.add(byHash[h], names[h])
	}
	if len(errs) > 0 {
		return fmt.Errorf("cache gc: removing objects: %w", errors.Join(errs...))
	}
	return nil
}

// prune removes settled evaluations and logs older than before that no kept evaluation
// needs.
func (c *Collector) prune(ctx context.Context, before time.Time, kept []string, r *Report) error {
	var err error
	if r.LogsPruned, err = c.cfg.Store.PruneBuildLogs(ctx, before, kept); err != nil {
		return fmt.Errorf("cache gc: %w", err)
	}
	if r.EvaluationsPruned, err = c.cfg.Store.PruneEvaluations(ctx, before, kept); err != nil {
		return fmt.Errorf("cache gc: %w", err)
	}
	return nil
}

// plannerInput turns the store's graph into the planner's terms (store hashes), with the
// store path of each cached hash.
func plannerInput(g store.RetentionGraph) ([]retention.Evaluation, []retention.Path, map[string]string) {
	evals := make([]retention.Evaluation, 0, len(g.Evaluations))
	for _, e := range g.Evaluations {
		evals = append(evals, retention.Evaluation{ID: e.ID, Project: e.ProjectID, Branch: e.Branch,
			Created: e.CreatedAt, Settled: e.Status.Terminal(), Paths: hashes(e.StorePaths)})
	}
	paths := make([]retention.Path, 0, len(g.Paths))
	names := make(map[string]string, len(g.Paths))
	for _, p := range g.Paths {
		names[p.StoreHash] = p.StorePath
		paths = append(paths, retention.Path{Hash: p.StoreHash, Size: p.FileSize, Refs: hashes(p.References),
			Stored: p.CreatedAt, Fetched: p.LastFetchedAt})
	}
	return evals, paths, names
}

// hashes maps store paths (or hash-name references) to store hashes, skipping malformed ones.
func hashes(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if h, err := store.StoreHash(p); err == nil {
			out = append(out, h)
		}
	}
	return out
}
