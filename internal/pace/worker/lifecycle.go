package worker

import (
	"context"
	"slices"
	"time"
)

// CordonState is the cordon byte of NODE-STATUS and CORDON (pace-wire §1.13):
// serving, draining (cordoned with compiles still running) or drained.
type CordonState uint8

// Cordon states.
const (
	CordonServing  CordonState = 1
	CordonDraining CordonState = 2
	CordonDrained  CordonState = 3
)

// Cordon stops new compiles (answered no-capacity) and lets running ones
// finish and deliver (pace-node §5.7). It lives in memory only: a restart lifts
// it. Whether the caller is on this machine is the node's check
// (CordonsRefusedNotLocal). It returns the state and the compiles still
// running.
func (w *Worker) Cordon() (CordonState, int) {
	if !w.cordoned.Swap(true) {
		w.mu.Lock()
		w.drained = false
		w.mu.Unlock()
		w.cfg.Logger.Info("worker: cordoned; running compiles will finish", "running", w.InFlight())
		w.notify()
	}
	return w.CordonState(), w.InFlight()
}

// Uncordon lifts a cordon.
func (w *Worker) Uncordon() (CordonState, int) {
	if w.cordoned.Swap(false) {
		w.cfg.Logger.Info("worker: cordon lifted")
		w.notify()
	}
	return w.CordonState(), w.InFlight()
}

// CordonState reports serving, draining or drained.
func (w *Worker) CordonState() CordonState {
	switch {
	case !w.cordoned.Load():
		return CordonServing
	case w.InFlight() > 0:
		return CordonDraining
	}
	return CordonDrained
}

// InFlight is the number of compiles holding a slot.
func (w *Worker) InFlight() int { return w.slots.inUse() }

func (w *Worker) isStopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping
}

// leave takes a finished job out of the running set, waking Stop and
// logging a cordon's drain once.
func (w *Worker) leave(j *job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, j)
	if len(w.running) > 0 {
		return
	}
	if w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
	if w.cordoned.Load() && !w.drained {
		w.drained = true
		w.cfg.Logger.Info("worker: cordoned worker drained; no compile is running")
		w.notify()
	}
}

// Status is what the node's heartbeat and status verbs report.
type Status struct {
	Slots         int
	InFlight      int
	Budget        uint64 // B
	BytesInFlight uint64 // charged now
	Ceiling       uint64 // C
	// BudgetLimited: slots are free but the byte budget turned work away
	// within the last heartbeat period while compiles still hold it
	// (verbs.Load.CompileBudgetFull, `limited-by: compile-budget`).
	BudgetLimited         bool
	Cordon                CordonState
	Stopping              bool
	Surveyed              bool
	Toolchains            []Toolchain
	ScratchRoot           string
	ScratchRootUnmappable bool // the latched scratch-root-unmappable condition
	VerifiesLeases        bool
}

// Status reports the worker's figures now.
func (w *Worker) Status() Status {
	inFlight := w.InFlight()
	return Status{
		Slots:                 w.cfg.Slots,
		InFlight:              inFlight,
		Budget:                w.cfg.Budget,
		BytesInFlight:         w.budget.inUse(),
		Ceiling:               w.ceiling,
		BudgetLimited:         inFlight < w.cfg.Slots && w.budget.limited(w.cfg.BudgetLimitWindow),
		Cordon:                w.CordonState(),
		Stopping:              w.isStopping(),
		Surveyed:              w.Surveyed(),
		Toolchains:            w.Toolchains(),
		ScratchRoot:           w.scratch.dir,
		ScratchRootUnmappable: w.scratch.unmappable,
		VerifiesLeases:        w.cfg.VerifyLeases,
	}
}

// DrainReport is how Stop ended.
type DrainReport struct {
	// Abandoned names the compiles still running at the drain timeout,
	// which were killed; non-empty means the node exits 75.
	Abandoned []string
}

// drainLogEvery is how often Stop logs what it still waits for.
const drainLogEvery = 5 * time.Second

// abandonGrace bounds the wait for killed compiles to unwind.
const abandonGrace = 5 * time.Second

// Stop refuses every new compile (counted RefusedStopping) and waits for
// the running ones up to timeout (0 waits for ever; ctx cancels the wait
// as a timeout would), logging the count while it waits. The node closes
// its listener first. Compiles still running then are killed and named.
func (w *Worker) Stop(ctx context.Context, timeout time.Duration) DrainReport {
	w.mu.Lock()
	w.stopping = true
	w.mu.Unlock()
	w.notify()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(drainLogEvery)
	defer tick.Stop()
	for {
		idle := w.idleSignal()
		if idle == nil {
			return DrainReport{}
		}
		select {
		case <-idle:
		case <-tick.C:
			w.cfg.Logger.Info("worker: draining; waiting for running compiles", "running", w.InFlight())
		case <-deadline:
			return w.abandon()
		case <-ctx.Done():
			return w.abandon()
		}
	}
}

// idleSignal returns a channel closed when no job runs, or nil when none
// runs now.
func (w *Worker) idleSignal() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.running) == 0 {
		return nil
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	return w.idle
}

// abandon kills every running compile and names them.
func (w *Worker) abandon() DrainReport {
	w.mu.Lock()
	var r DrainReport
	for j := range w.running {
		j.abandoned.Store(true)
		j.cancel()
		r.Abandoned = append(r.Abandoned, j.desc)
	}
	w.mu.Unlock()
	slices.Sort(r.Abandoned)
	if len(r.Abandoned) > 0 {
		w.cfg.Logger.Warn("worker: drain timeout; abandoned running compiles", "count", len(r.Abandoned), "compiles", r.Abandoned)
		if idle := w.idleSignal(); idle != nil {
			select {
			case <-idle:
			case <-time.After(abandonGrace):
			}
		}
	}
	return r
}
