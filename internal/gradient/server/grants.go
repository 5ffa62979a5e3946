package server

import (
	"context"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
)

// grants is what a session's authorized peers let its worker do (gradient-protocol §4.2): jobs
// of projects, and reading and pushing the caches of those projects and of caches that
// registered it directly.
type grants struct {
	projects     []string
	directCaches []string // caches that registered the worker themselves
	caches       []string // directCaches plus every cache the projects subscribe to
}

// grantsOf sorts a session's authorized peer IDs by kind. A team worker's authorized peers are
// the projects granting its team (the gradient-protocol §4.4 decision expands the team); the
// team ID itself expands to every granting project.
func grantsOf(res session.Result, facts session.WorkerFacts) grants {
	var g grants
	for _, peer := range res.Authorized {
		if t := facts.Team; t != nil {
			// The decision names the granting projects; a dialed session may name the team.
			for _, gr := range t.Grants {
				if peer == t.TeamID || peer == gr.ProjectID {
					g.projects = append(g.projects, gr.ProjectID)
				}
			}
			continue
		}
		for _, r := range facts.Registrations {
			if r.PeerID != peer || !r.Active {
				continue
			}
			switch r.Kind {
			case session.PeerProject:
				g.projects = append(g.projects, peer)
			case session.PeerCache:
				g.directCaches = append(g.directCaches, peer)
			}
		}
	}
	slices.Sort(g.projects)
	g.projects = slices.Compact(g.projects)
	g.caches = slices.Clone(g.directCaches)
	return g
}

// loadCaches adds the caches the session's projects subscribe to.
func (w *worker) loadCaches(ctx context.Context) error {
	w.mu.Lock()
	projects := slices.Clone(w.grants.projects)
	w.mu.Unlock()
	subscribed, err := w.srv.cfg.Store.CachesOfProjects(ctx, projects)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.grants.caches = sortedUnion(w.grants.directCaches, subscribed)
	return nil
}

// cacheScope is what cacheserve may read and push for this session: the same caches both
// ways for a worker session.
func (w *worker) cacheScope() (readable, pushable []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.grants.caches, w.grants.caches
}

// projects is a copy of the projects the worker may take jobs from.
func (w *worker) projects() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.grants.projects)
}
