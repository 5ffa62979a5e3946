package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

type buildRow struct {
	ID, Name, Status, State, System, Waiting string
	EntryPoints                              []string
}

type filterLink struct {
	Name, Label, Href string
	Count             int
	Current           bool
}

type evaluationView struct {
	Eval                         store.Evaluation
	Project, Branch, State, Took string
	Waiting                      string
	Terminal                     bool
	Messages                     []store.Message
	Filters                      []filterLink
	Filter                       string
	Rows                         []buildRow
	Total, Page, Pages           int
	PrevHref, NextHref           string
	Graph                        *graphView
	GraphOmitted                 string
}

// evaluationPage shows an evaluation: its facts, messages, a page of its builds filtered by
// state, and its dependency graph.
func (u *UI) evaluationPage(w http.ResponseWriter, r *http.Request, v viewer, live api.LiveView) {
	if !u.mayRead(w, r, v) {
		return
	}
	view, err := u.evaluationView(r, live)
	if err != nil {
		u.notFoundOr(w, r, v, err, "There is no such evaluation.")
		return
	}
	u.render(w, r, v, http.StatusOK, "evaluation", view)
}

func (u *UI) evaluationView(r *http.Request, live api.LiveView) (evaluationView, error) {
	ctx := r.Context()
	e, err := u.cfg.Store.GetEvaluation(ctx, r.PathValue("id"))
	if err != nil {
		return evaluationView{}, err
	}
	view := evaluationView{Eval: e, State: evalState(e.Status), Took: since(e.CreatedAt, e.UpdatedAt), Terminal: e.Status.Terminal()}
	if p, err := u.cfg.Store.GetProject(ctx, e.ProjectID); err == nil {
		view.Project, view.Branch = p.Name, p.Branch
	}
	if e.Status == store.EvalQueued {
		view.Waiting = live.WaitReason(e.ProjectID, store.JobEval, "")
	}
	if view.Messages, err = u.cfg.Store.EvaluationMessages(ctx, e.ID); err != nil {
		return view, err
	}
	counts, err := u.cfg.Store.EvaluationBuildCounts(ctx, e.ID)
	if err != nil {
		return view, err
	}
	for _, n := range counts {
		view.Total += n
	}
	view.Filter = r.URL.Query().Get("state")
	if len(statusesOf(view.Filter)) == 0 {
		view.Filter = ""
	}
	view.Filters = filters(e.ID, counts, view.Total, view.Filter)
	if err := u.pageOf(&view, r, counts, live); err != nil {
		return view, err
	}
	return view, u.graphOf(r, &view)
}

// graphOf lays out the dependency graph of an evaluation small enough to draw.
func (u *UI) graphOf(r *http.Request, view *evaluationView) error {
	if view.Total > maxGraphBuilds {
		view.GraphOmitted = fmt.Sprintf("The graph is drawn for evaluations of at most %d builds; this one has %d. Filter the table by state instead.", maxGraphBuilds, view.Total)
		return nil
	}
	builds, err := u.cfg.Store.EvaluationBuilds(r.Context(), view.Eval.ID)
	if err != nil {
		return err
	}
	edges, err := u.cfg.Store.EvaluationEdges(r.Context(), view.Eval.ID)
	if err != nil {
		return err
	}
	g := layoutGraph(builds, edges)
	view.Graph = &g
	return nil
}

// filters are the state links with their counts; "all" first.
func filters(evalID string, counts map[store.BuildStatus]int, total int, current string) []filterLink {
	byState := map[string]int{}
	for status, n := range counts {
		byState[stateOf(status)] += n
	}
	base := "/evaluations/" + url.PathEscape(evalID)
	out := []filterLink{{Name: "all", Label: "all", Href: base, Count: total, Current: current == ""}}
	for _, s := range states {
		out = append(out, filterLink{Name: s, Label: s, Href: base + "?state=" + s, Count: byState[s], Current: current == s})
	}
	return out
}

// pageOf reads the page of builds the request asks for (?state=, ?page=): one page from the
// store, never the whole evaluation.
func (u *UI) pageOf(view *evaluationView, r *http.Request, counts map[store.BuildStatus]int, live api.LiveView) error {
	q := store.BuildPage{EvaluationID: view.Eval.ID, Statuses: statusesOf(view.Filter), Limit: u.cfg.PageSize}
	if view.Filter == "" {
		q.Statuses = nil
	}
	picked := view.Total
	if q.Statuses != nil {
		picked = 0
		for _, st := range q.Statuses {
			picked += counts[st]
		}
	}
	size := u.cfg.PageSize
	view.Pages = max(1, (picked+size-1)/size)
	view.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	view.Page = min(max(view.Page, 1), view.Pages)
	q.Offset = (view.Page - 1) * size
	builds, err := u.cfg.Store.EvaluationBuildsPage(r.Context(), q)
	if err != nil {
		return err
	}
	for _, b := range builds {
		row := buildRow{ID: b.ID, Name: name(b), Status: b.Status.String(), State: stateOf(b.Status), System: b.System, EntryPoints: b.EntryPoints}
		if b.Status == store.BuildQueued {
			row.Waiting = live.WaitReason(view.Eval.ProjectID, store.JobBuild, b.System)
		}
		view.Rows = append(view.Rows, row)
	}
	if view.Page > 1 {
		view.PrevHref = pageLink(view.Eval.ID, view.Filter, view.Page-1)
	}
	if view.Page < view.Pages {
		view.NextHref = pageLink(view.Eval.ID, view.Filter, view.Page+1)
	}
	return nil
}

// pageLink is the address of a page of an evaluation's builds in one state ("": all).
func pageLink(evalID, state string, page int) string {
	q := url.Values{}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("page", strconv.Itoa(page))
	return "/evaluations/" + url.PathEscape(evalID) + "?" + q.Encode()
}
