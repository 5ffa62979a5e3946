package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Apply acts on what a state change did: startable and re-queued jobs are offered at once,
// assignments it closed get AbortJob on their worker's session, demoted cache rows lose
// their objects.
func (s *Server) Apply(ctx context.Context, e store.Effects) {
	if len(e.Startable) > 0 || len(e.Requeued) > 0 {
		s.Kick()
	}
	if len(e.Settled) > 0 {
		s.statuses.Kick() // their final statuses are queued (gradient-server §12.2)
	}
	for _, a := range e.Closed {
		w := s.sessions.get(a.WorkerID)
		if w == nil {
			continue
		}
		w.forget(a.AssignmentID)
		// Counted only when sent: the counter is AbortJob messages sent, not attempted.
		w.abortJob(ctx, a.Job, "aborted by the server")
	}
	for _, hash := range e.Demoted {
		if err := s.cfg.NARs.Remove(hash); err != nil {
			s.log.Warn("removing a demoted NAR", "store_hash", hash, "err", err)
		}
	}
	for _, ev := range e.Settled {
		s.log.Info("evaluation settled", "evaluation", ev.EvaluationID, "status", ev.Status)
	}
	for _, b := range e.Builds { // an attempt ended or the build did (gradient-server §16)
		s.logs.Changed(b.BuildID)
	}
}

// errSilent ends a session the liveness pass found silent.
var errSilent = errors.New("silent past the heartbeat timeout")

// dropSilentWorkers ends every session silent longer than the heartbeat timeout
// (gradient-server §6.5); the session's end abandons its assignments.
func (s *Server) dropSilentWorkers() {
	cutoff := s.now().Add(-s.cfg.HeartbeatTimeout).UnixNano()
	for _, w := range s.sessions.all() {
		if w.lastSeen.Load() < cutoff {
			s.counters.WorkersSilent.Add(1)
			w.log.Warn("no frame within the heartbeat timeout: dropping the worker", "timeout", s.cfg.HeartbeatTimeout)
			w.cancelCause(errSilent)
			w.conn.Abort()
		}
	}
}

// capabilitiesJSON is WorkerCapabilities as the worker table stores it.
func capabilitiesJSON(m *wire.WorkerCapabilities) []byte {
	b, _ := json.Marshal(map[string]any{
		"architectures": m.Architectures, "system_features": m.SystemFeatures,
		"max_concurrent_builds": m.MaxConcurrentBuilds, "cpu_count": m.CPUCount, "ram_total_mb": m.RAMTotalMB,
		"cpu_core_score": m.CPUCoreScore, "zone": m.Zone.Value, "endpoint": m.Endpoint.Value,
	})
	return b
}

// LiveWorkers lists the running sessions for the API's worker list.
func (s *Server) LiveWorkers() map[string]api.LiveWorker {
	out := map[string]api.LiveWorker{}
	for _, w := range s.sessions.all() {
		w.mu.Lock()
		out[w.id] = api.LiveWorker{ConnectedAt: w.connectedAt,
			Authorized:   append(append([]string(nil), w.grants.projects...), w.grants.directCaches...),
			Capabilities: w.negotiated, Remote: w.remote, Quarantined: w.quarantineReason()}
		w.mu.Unlock()
	}
	return out
}
