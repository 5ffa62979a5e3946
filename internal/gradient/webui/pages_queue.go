package webui

import (
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Bounds of the queue page: it looks at the newest unfinished evaluations of each project
// and lists at most maxQueueItems jobs.
const (
	queueEvalsPerProject = 20
	maxQueueItems        = 500
)

type queueItem struct {
	ID, Label, Href, Project, Status, State, Why string
	Since                                        time.Time
}

type queueView struct {
	Items []queueItem
	More  bool
}

// queuePage lists what waits: queued evaluations and the builds of unfinished evaluations
// that wait to run, each with the server's reason nothing takes it (LiveView.WaitReason).
func (u *UI) queuePage(w http.ResponseWriter, r *http.Request, v viewer, live api.LiveView) {
	if !u.mayAdminister(w, r, v) {
		return
	}
	ps, err := u.cfg.Store.ListProjects(r.Context())
	if err != nil {
		u.failErr(w, r, v, err)
		return
	}
	var view queueView
	seen := map[string]bool{}
	for _, p := range ps {
		if err := u.queueOf(r, p, live, &view, seen); err != nil {
			u.failErr(w, r, v, err)
			return
		}
	}
	u.render(w, r, v, http.StatusOK, "queue", view)
}

func (u *UI) queueOf(r *http.Request, p store.Project, live api.LiveView, view *queueView, seen map[string]bool) error {
	evals, err := u.cfg.Store.ListEvaluations(r.Context(), p.ID, queueEvalsPerProject)
	if err != nil {
		return err
	}
	for _, e := range evals {
		if e.Status.Terminal() {
			continue
		}
		if e.Status == store.EvalQueued {
			view.add(queueItem{ID: e.ID, Label: "evaluation " + short(e.Commit), Href: "/evaluations/" + e.ID, Project: p.Name,
				Status: e.Status.String(), State: stateQueued, Since: e.UpdatedAt, Why: live.WaitReason(p.ID, store.JobEval, "")})
			continue
		}
		if len(view.Items) >= maxQueueItems {
			view.More = true
			return nil
		}
		// one page of the waiting builds only: a big evaluation is not read whole
		builds, err := u.cfg.Store.EvaluationBuildsPage(r.Context(), store.BuildPage{EvaluationID: e.ID, Limit: maxQueueItems,
			Statuses: []store.BuildStatus{store.BuildQueued, store.BuildFailedTransient, store.BuildCreated}})
		if err != nil {
			return err
		}
		for _, b := range builds {
			if seen[b.ID] {
				continue
			}
			seen[b.ID] = true
			view.add(queueItem{ID: b.ID, Label: "build " + name(b), Href: "/builds/" + b.ID, Project: p.Name,
				Status: b.Status.String(), State: stateQueued, Since: b.QueuedAt, Why: whyWaits(b, p.ID, live)})
		}
	}
	return nil
}

// whyWaits says what a waiting build waits for.
func whyWaits(b store.BuildInfo, project string, live api.LiveView) string {
	switch b.Status {
	case store.BuildCreated:
		return "its dependencies have not all been built yet"
	case store.BuildFailedTransient:
		return "retried after a transient failure, not before " + stamp(b.NotBefore)
	}
	return live.WaitReason(project, store.JobBuild, b.System)
}

func (q *queueView) add(it queueItem) {
	if len(q.Items) >= maxQueueItems {
		q.More = true
		return
	}
	q.Items = append(q.Items, it)
}
