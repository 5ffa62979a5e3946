package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// claimTries is how many candidates one RequestJob may lose to other claimers
// (gradient-server §6.1), and claimRounds how many times it reads fresh candidates after
// losing all it read.
const (
	claimTries  = 3
	claimRounds = 4
)

// requestJob answers a RequestJob: assign the oldest startable job this worker may run, or
// remember the slot as idle so the next kick or pool pass fills it.
func (w *worker) requestJob(kind wire.JobKind) error {
	if kind != wire.JobKindFlake && kind != wire.JobKindBuild {
		return fmt.Errorf("%w: RequestJob of kind %d", errProtocol, kind)
	}
	w.mu.Lock()
	w.idle[kind] = min(w.idle[kind]+1, w.slotCap(kind))
	w.mu.Unlock()
	w.fillIdle(w.ctx, kind)
	return nil
}

// slotCap bounds the remembered idle slots of a kind: one evaluation at a time, and the
// worker's advertised concurrent builds (the worker repeats RequestJob every 10 s per free
// slot, so counting every repeat would overstate them).
func (w *worker) slotCap(kind wire.JobKind) int {
	if kind == wire.JobKindFlake {
		return 1
	}
	if w.caps == nil || w.caps.MaxConcurrentBuilds == 0 {
		return 1
	}
	return int(w.caps.MaxConcurrentBuilds)
}

// fillIdle assigns jobs to this session's idle slots of a kind until none is idle or nothing
// is startable.
func (w *worker) fillIdle(ctx context.Context, kind wire.JobKind) {
	w.fillMu.Lock()
	defer w.fillMu.Unlock()
	for {
		q, ok := w.query(kind)
		if !ok {
			return
		}
		a, err := w.claimOne(ctx, q)
		if err != nil {
			if !errors.Is(err, errNothingToAssign) && ctx.Err() == nil {
				w.log.Warn("assigning a job", "kind", kind, "err", err)
			}
			return
		}
		if err := w.assign(ctx, kind, a); err != nil {
			return
		}
	}
}

// query is the candidate query for an idle slot of kind, if this session has one and may run
// that kind at all.
func (w *worker) query(kind wire.JobKind) (store.CandidateQuery, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.draining || w.idle[kind] == 0 || len(w.grants.projects) == 0 || !w.negotiatedFor(kind) ||
		w.srv.quarantine.reason(w.id) != "" {
		return store.CandidateQuery{}, false
	}
	q := store.CandidateQuery{Projects: append([]string(nil), w.grants.projects...), Limit: claimTries}
	if kind == wire.JobKindBuild {
		if w.caps == nil {
			return q, false // no WorkerCapabilities yet: no architectures to match
		}
		q.Kind, q.Systems, q.Features = store.JobBuild, w.caps.Architectures, w.caps.SystemFeatures
	} else {
		q.Kind = store.JobEval
	}
	return q, true
}

// negotiatedFor: flake jobs need fetch and eval (a flake job fetches unless an earlier
// attempt did), build jobs need build (gradient-protocol §5).
func (w *worker) negotiatedFor(kind wire.JobKind) bool {
	if kind == wire.JobKindFlake {
		return w.negotiated.Fetch && w.negotiated.Eval
	}
	return w.negotiated.Build
}

var errNothingToAssign = errors.New("nothing to assign")

// claimOne claims the best candidate it can. Sessions of this server claim one at a time
// (claimMu): otherwise every idle worker reads the same few oldest candidates, all but one
// lose every race, and their slots stay idle until the next kick or pool pass. The store's
// race check still guards against other claimers of the same database, and a request that
// lost every candidate it read looks again, because losing means the queue moved.
func (w *worker) claimOne(ctx context.Context, q store.CandidateQuery) (store.Assignment, error) {
	w.srv.claimMu.Lock()
	defer w.srv.claimMu.Unlock()
	for range claimRounds {
		a, err := w.claimAmong(ctx, q)
		if !errors.Is(err, store.ErrLostRace) {
			return a, err
		}
	}
	return store.Assignment{}, errNothingToAssign
}

// claimAmong tries the candidates of one query in order, up to claimTries
// (gradient-server §6.1). It ends with ErrLostRace when every one went to another claimer.
func (w *worker) claimAmong(ctx context.Context, q store.CandidateQuery) (store.Assignment, error) {
	st := w.srv.cfg.Store
	cands, err := st.Candidates(ctx, q)
	if err != nil {
		return store.Assignment{}, err
	}
	if len(cands) == 0 {
		return store.Assignment{}, errNothingToAssign
	}
	for _, c := range cands {
		a, err := st.Claim(ctx, c.Job, w.id)
		if errors.Is(err, store.ErrLostRace) {
			w.srv.counters.ClaimsLost.Add(1)
			continue
		}
		return a, err
	}
	return store.Assignment{}, store.ErrLostRace
}

// assign hands a claimed job to the worker: the assignment is recorded on the session first,
// so reports racing the AssignJob are recognised, then AssignJob goes out.
func (w *worker) assign(ctx context.Context, kind wire.JobKind, a store.Assignment) error {
	cred, err := w.srv.credentialFor(ctx, a)
	if err != nil {
		w.failUnopenable(ctx, a, err)
		return nil
	}
	w.mu.Lock()
	w.idle[kind]--
	w.handed[a.ID] = a.Job
	w.byJob[a.Job.String()] = a.ID
	w.mu.Unlock()
	w.srv.counters.JobsAssigned.Add(1)
	if err := w.sendCredential(ctx, cred); err != nil {
		return err
	}
	if err := w.send(ctx, assignJob(a, w.srv.cfg.Limits)); err != nil {
		w.log.Warn("sending AssignJob; the assignment is abandoned with the session", "job", a.Job, "err", err)
		return err
	}
	w.log.Info("assigned", "job", a.Job, "assignment", a.ID)
	return nil
}

// offerIdleSlots gives every live session's idle slots a chance at the queue (a kick or the
// 5 s pool pass).
func (s *Server) offerIdleSlots(ctx context.Context) {
	for _, w := range s.sessions.all() {
		w.fillIdle(ctx, wire.JobKindFlake)
		w.fillIdle(ctx, wire.JobKindBuild)
	}
}
