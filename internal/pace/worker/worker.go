package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
)

// Worker answers COMPILE. Safe for concurrent use.
type Worker struct {
	cfg      Config
	ceiling  uint64
	counters Counters
	budget   *budget
	slots    slots
	verifier *lease.Verifier
	scratch  *scratchRoot
	// spawn runs one compiler; tests replace it to measure the pipeline
	// without a compiler.
	spawn func(context.Context, compileRun) (runResult, error)

	policy     atomic.Pointer[argvet.Policy]
	toolchains atomic.Pointer[toolchainSet]
	surveyed   chan struct{} // closed when the first survey ends
	surveyRes  SurveyResult  // the first survey's, set before surveyed closes
	surveyErr  error
	startOnce  sync.Once

	cordoned atomic.Bool
	changes  chan struct{}
	utf8     sync.Map // compiler path → whether it prints C.UTF-8's quotes (bool)

	mu       sync.Mutex
	stopping bool
	running  map[*job]struct{}
	idle     chan struct{} // closed when running empties, while someone waits
	drained  bool          // the cordon drain was logged
}

// New builds a worker: it validates cfg, builds the argument policy and
// claims the scratch root (startup refusals ErrScratchRootsExhausted,
// ErrScratchUnavailable, argvet.ErrInvalidExtension). The toolchain survey
// starts with Start; until it ends every COMPILE is refused
// worker-toolchain-survey-in-flight.
func New(cfg Config) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	policy, err := argvet.NewPolicy(cfg.AllowCompileArgs)
	if err != nil {
		return nil, err
	}
	parent := cfg.ScratchParent
	if parent == "" {
		parent = os.TempDir()
	}
	root, reclaimed, err := claimScratchRoot(parent)
	if err != nil {
		return nil, err
	}
	w := &Worker{
		cfg:      cfg,
		ceiling:  Ceiling(cfg.SessionCap, cfg.Budget),
		budget:   newBudget(cfg.Budget, cfg.Now),
		slots:    slots{max: cfg.Slots},
		verifier: lease.NewVerifier(cfg.SpentLeases),
		scratch:  root,
		surveyed: make(chan struct{}),
		changes:  make(chan struct{}, 1),
		running:  map[*job]struct{}{},
		spawn:    func(ctx context.Context, r compileRun) (runResult, error) { return r.run(ctx) },
	}
	w.counters.ScratchRootsReclaimed.Add(uint64(reclaimed))
	w.policy.Store(policy)
	w.logStartup(policy)
	return w, nil
}

func (w *Worker) logStartup(policy *argvet.Policy) {
	log := w.cfg.Logger
	if ext := policy.Extensions(); len(ext) > 0 {
		log.Warn("worker: argument allowlist extended by --allow-compile-arg", "arguments", ext)
	}
	if w.scratch.unmappable {
		log.Warn("worker: scratch-root-unmappable: the scratch root cannot be named in a prefix map; objects may record it",
			"root", w.scratch.dir)
	}
	if !w.cfg.VerifyLeases {
		log.Warn("worker: lease tokens are not verified; nothing but this machine can reach the compile port")
	}
}

// Start runs the first toolchain survey in the background. Call it once;
// WaitSurvey reports how it ended.
func (w *Worker) Start(ctx context.Context) {
	w.startOnce.Do(func() {
		go func() {
			res, err := Survey(ctx, w.cfg.Toolchains)
			w.surveyRes, w.surveyErr = res, err
			w.toolchains.Store(newToolchainSet(res.Served))
			w.logSurvey(res, err)
			close(w.surveyed)
			w.notify()
		}()
	})
}

// WaitSurvey waits for the first survey. An error wrapping ErrNoToolchains
// is the startup refusal of pace-node §5.6: the node exits naming where the
// survey looked.
func (w *Worker) WaitSurvey(ctx context.Context) (SurveyResult, error) {
	select {
	case <-w.surveyed:
		return w.surveyRes, w.surveyErr
	case <-ctx.Done():
		return SurveyResult{}, ctx.Err()
	}
}

// Surveyed reports whether the first survey has ended.
func (w *Worker) Surveyed() bool {
	select {
	case <-w.surveyed:
		return true
	default:
		return false
	}
}

// Resurvey surveys again (a reload of --toolchain, a witness that moved,
// the periodic sweep) and swaps the served set whole: an old fingerprint
// stops being served at once. A survey that finds nothing leaves the
// worker running and serving nothing, and returns ErrNoToolchains for the
// node to WARN about. It must not run before the first survey ended.
func (w *Worker) Resurvey(ctx context.Context, cfg SurveyConfig) (SurveyResult, error) {
	res, err := Survey(ctx, cfg)
	if err != nil && !errors.Is(err, ErrNoToolchains) {
		return res, err // cancelled: keep serving what was served
	}
	w.toolchains.Store(newToolchainSet(res.Served))
	w.logSurvey(res, err)
	w.notify()
	return res, err
}

func (w *Worker) logSurvey(res SurveyResult, err error) {
	for _, d := range res.Dropped {
		w.cfg.Logger.Info("worker: compiler not served", "compiler", d.Compiler, "reason", d.Reason)
	}
	for _, tc := range res.Served {
		w.cfg.Logger.Info("worker: serving toolchain", "label", tc.Label, "path", tc.Path,
			"fingerprint", tc.Fingerprint, "pinned", tc.Pinned)
	}
	if err != nil {
		w.cfg.Logger.Warn("worker: toolchain survey", "err", err)
	}
}

// Toolchains are the toolchains served now, one REGISTER each.
func (w *Worker) Toolchains() []Toolchain {
	set := w.toolchains.Load()
	if set == nil {
		return nil
	}
	return slices.Clone(set.list)
}

// SetAllowCompileArgs replaces the --allow-compile-arg extensions (SIGHUP
// reload). An entry that can never be admitted refuses the whole reload.
// A changed set is logged at WARN.
func (w *Worker) SetAllowCompileArgs(extensions []string) error {
	policy, err := argvet.NewPolicy(extensions)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	old := w.policy.Swap(policy)
	if !slices.Equal(old.Extensions(), policy.Extensions()) {
		w.cfg.Logger.Warn("worker: argument allowlist extensions changed", "arguments", policy.Extensions())
	}
	return nil
}

// Counters are the worker's counters; the node registers Metrics() and
// increments the fields its own listener and admission decide.
func (w *Worker) Counters() *Counters { return &w.counters }

// Changes is signalled when something a heartbeat or registration reports
// changed (cordon, the served toolchains), so the node need not wait for
// its next period.
func (w *Worker) Changes() <-chan struct{} { return w.changes }

func (w *Worker) notify() {
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// Close releases the scratch root. Call it after Stop.
func (w *Worker) Close() error {
	return w.scratch.close()
}
