package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// listWorkers lists every worker the store knows, overlaid with the live sessions: live with
// its connect time, peers and negotiated capabilities, or offline with its last failure.
func (a *api) listWorkers(w http.ResponseWriter, r *http.Request) error {
	stored, err := a.store.ListWorkers(r.Context())
	if err != nil {
		return err
	}
	live := a.live.LiveWorkers()
	out := WorkerList{Workers: make([]Worker, 0, len(stored)+len(live))}
	seen := make(map[string]bool, len(stored))
	for _, sw := range stored {
		lw, isLive := live[sw.WorkerID]
		out.Workers = append(out.Workers, workerOf(sw, lw, isLive))
		seen[sw.WorkerID] = true
	}
	// A session whose row is not written yet still shows (its first stamp may be batched).
	for id, lw := range live {
		if !seen[id] {
			out.Workers = append(out.Workers, workerOf(store.WorkerInfo{WorkerID: id, Registered: true}, lw, true))
		}
	}
	slices.SortFunc(out.Workers, func(x, y Worker) int { return strings.Compare(x.WorkerID, y.WorkerID) })
	writeJSON(w, http.StatusOK, out)
	return nil
}

// showWorker is one worker with its registrations.
func (a *api) showWorker(w http.ResponseWriter, r *http.Request) error {
	id, err := canonicalWorkerID(r.PathValue("worker"))
	if err != nil {
		return err
	}
	stored, err := a.store.ListWorkers(r.Context())
	if err != nil {
		return err
	}
	regs, err := a.store.ListRegistrations(r.Context(), id)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(stored, func(sw store.WorkerInfo) bool { return sw.WorkerID == id })
	lw, isLive := a.live.LiveWorkers()[id]
	if i < 0 && !isLive && len(regs) == 0 {
		return notFound("worker %s is unknown", id)
	}
	info := store.WorkerInfo{WorkerID: id, Registered: len(regs) > 0}
	if i >= 0 {
		info = stored[i]
	}
	out := workerOf(info, lw, isLive)
	names, err := a.peerNames(r.Context())
	if err != nil {
		return err
	}
	out.Registrations = mapSlice(regs, func(reg store.Registration) Registration { return registrationOf(reg, names) })
	writeJSON(w, http.StatusOK, out)
	return nil
}
