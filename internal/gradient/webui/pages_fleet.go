package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

type jobLink struct{ Label, Href string }

type workerRow struct {
	ID, DisplayName, Remote   string
	State, StateClass, Reason string
	Capabilities              []string
	Systems, Features         []string
	Jobs                      []jobLink
	LastSeen                  time.Time
}

// workersPage lists every worker as the API does (GET /api/v1/workers), with its open jobs.
func (u *UI) workersPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.mayAdminister(w, r, v) {
		return
	}
	var list api.WorkerList
	if _, err := u.callAPI(r.Context(), v.key, http.MethodGet, "/workers", nil, &list); err != nil {
		u.failErr(w, r, v, err)
		return
	}
	open, err := u.cfg.Store.OpenAssignments(r.Context(), "")
	if err != nil {
		u.failErr(w, r, v, err)
		return
	}
	jobs := map[string][]jobLink{}
	for _, a := range open {
		jobs[a.WorkerID] = append(jobs[a.WorkerID], jobLinkOf(a.Job))
	}
	rows := make([]workerRow, 0, len(list.Workers))
	for _, wk := range list.Workers {
		rows = append(rows, workerRowOf(wk, jobs[wk.WorkerID]))
	}
	u.render(w, r, v, http.StatusOK, "workers", rows)
}

func jobLinkOf(j store.JobRef) jobLink {
	if j.Kind == store.JobEval {
		return jobLink{Label: "evaluation " + short(j.ID), Href: "/evaluations/" + url.PathEscape(j.ID)}
	}
	return jobLink{Label: "build " + short(j.ID), Href: "/builds/" + url.PathEscape(j.ID)}
}

// workerRowOf says what state a worker is in and why: live, quarantined (live but given
// nothing it registered for), or offline with the last failure (refused token, unreachable …).
func workerRowOf(wk api.Worker, jobs []jobLink) workerRow {
	row := workerRow{ID: wk.WorkerID, DisplayName: wk.DisplayName, Remote: wk.Remote, State: wk.Status,
		StateClass: stateDone, Jobs: jobs, LastSeen: wk.LastSeenAt}
	switch {
	case wk.Quarantined != "":
		row.State, row.StateClass, row.Reason = "quarantined", stateFailed, wk.Quarantined
	case wk.Status != api.WorkerLive:
		row.StateClass, row.Reason = stateQueued, wk.OfflineReason
		if row.Reason == "" {
			row.Reason = "never connected"
		}
	}
	if c := wk.Capabilities; c != nil {
		for _, f := range []struct {
			on   bool
			name string
		}{{c.Fetch, "fetch"}, {c.Eval, "eval"}, {c.Build, "build"}, {c.Cache, "cache"}, {c.Federate, "federate"}} {
			if f.on {
				row.Capabilities = append(row.Capabilities, f.name)
			}
		}
	}
	var reported struct {
		Architectures  []string `json:"architectures"`
		SystemFeatures []string `json:"system_features"`
	}
	if json.Unmarshal(wk.ReportedCapabilities, &reported) == nil {
		row.Systems, row.Features = reported.Architectures, reported.SystemFeatures
	}
	return row
}
