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
	builds, err := u.cfg.Store.EvaluationBuilds(ctx, e.ID)
	if err != nil {
		return view, err
	}
	view.Total = len(builds)
	view.Filter = r.URL.Query().Get("state")
	view.Filters = filters(e.ID, builds, view.Filter)
	u.pageOf(&view, r, builds, live)
	if len(builds) > maxGraphBuilds {
		view.GraphOmitted = fmt.Sprintf("The graph is drawn for evaluations of at most %d builds; this one has %d. Filter the table by state instead.", maxGraphBuilds, len(builds))
		return view, nil
	}
	edges, err := u.cfg.Store.EvaluationEdges(ctx, e.ID)
	if err != nil {
		return view, err
	}
	g := layoutGraph(builds, edges)
	view.Graph = &g
	return view, nil
}

// filters are the state links with their counts; "all" first.
func filters(evalID string, builds []store.BuildInfo, current string) []filterLink {
	counts := map[string]int{}
	for _, b := range builds {
		counts[stateOf(b.Status)]++
	}
	base := "/evaluations/" + url.PathEscape(evalID)
	out := []filterLink{{Name: "all", Label: "all", Href: base, Count: len(builds), Current: current == ""}}
	for _, s := range states {
		out = append(out, filterLink{Name: s, Label: s, Href: base + "?state=" + s, Count: counts[s], Current: current == s})
	}
	return out
}

// pageOf fills in the page of builds the request asks for (?state=, ?page=).
func (u *UI) pageOf(view *evaluationView, r *http.Request, builds []store.BuildInfo, live api.LiveView) {
	var picked []store.BuildInfo
	for _, b := range builds {
		if view.Filter == "" || stateOf(b.Status) == view.Filter {
			picked = append(picked, b)
		}
	}
	size := u.cfg.PageSize
	view.Pages = max(1, (len(picked)+size-1)/size)
	view.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	view.Page = min(max(view.Page, 1), view.Pages)
	from := (view.Page - 1) * size
	for _, b := range picked[from:min(from+size, len(picked))] {
		row := buildRow{ID: b.ID, Name: name(b), Status: b.Status.String(), State: stateOf(b.Status), System: b.System, EntryPoints: b.EntryPoints}
		if b.Status == store.BuildQueued {
			row.Waiting = live.WaitReason(view.Eval.ProjectID, store.JobBuild, b.System)
		}
		view.Rows = append(view.Rows, row)
	}
	link := func(page int) string {
		q := url.Values{}
		if view.Filter != "" {
			q.Set("state", view.Filter)
		}
		q.Set("page", strconv.Itoa(page))
		return "/evaluations/" + url.PathEscape(view.Eval.ID) + "?" + q.Encode()
	}
	if view.Page > 1 {
		view.PrevHref = link(view.Page - 1)
	}
	if view.Page < view.Pages {
		view.NextHref = link(view.Page + 1)
	}
}
