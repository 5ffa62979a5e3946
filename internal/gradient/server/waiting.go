package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/health"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// sessionView is one live session as the wait reasons see it.
type sessionView struct {
	id          string
	projects    []string
	negotiated  wire.GradientCapabilities
	systems     []string // WorkerCapabilities.architectures; nil before the worker sent them
	draining    bool
	quarantined string             // the server's quarantine: assigned nothing
	unavailable health.Unavailable // what the worker withholds, and why
}

// maxQuarantinedNamed bounds how many quarantined workers a wait reason names.
const maxQuarantinedNamed = 3

// waitReason says what a startable job of project waits for (gradient-server §6.1: the
// server assigns only to a session that asks and may run it). kind is store.JobEval or
// store.JobBuild; system matters for builds. Pure: the caller snapshots the sessions.
func waitReason(sessions []sessionView, project string, kind store.JobKind, system string) string {
	if len(sessions) == 0 {
		return "no worker is connected"
	}
	var registered, able, ready []sessionView
	for _, s := range sessions {
		if !slices.Contains(s.projects, project) {
			continue
		}
		registered = append(registered, s)
		if !offers(s, kind, system) {
			continue
		}
		able = append(able, s)
		if !s.draining && s.quarantined == "" {
			ready = append(ready, s)
		}
	}
	switch {
	case len(registered) == 0:
		return "no connected worker is registered for this project"
	case len(able) == 0:
		return "no connected worker offers " + what(kind, system) + whyNot(registered, kind)
	case len(ready) == 0:
		return "the workers that offer " + what(kind, system) + " are draining or quarantined" + whyNot(able, kind)
	}
	return fmt.Sprintf("a free slot on %d worker(s) that offer %s", len(ready), what(kind, system))
}

// offers: flake jobs need fetch and eval; builds need build and the system (dispatch.go).
func offers(s sessionView, kind store.JobKind, system string) bool {
	if kind == store.JobEval {
		return s.negotiated.Fetch && s.negotiated.Eval
	}
	return s.negotiated.Build && slices.Contains(s.systems, system)
}

// withheld is why a worker withholds what kind needs, or "".
func withheld(u health.Unavailable, kind store.JobKind) string {
	if kind == store.JobEval {
		return cmp.Or(u[health.Fetch], u[health.Eval])
	}
	return u[health.Build]
}

func what(kind store.JobKind, system string) string {
	if kind == store.JobEval {
		return "eval"
	}
	return "build for " + system
}

// whyNot names up to maxQuarantinedNamed workers among ss that are quarantined or withhold
// what kind needs, with why.
func whyNot(ss []sessionView, kind store.JobKind) string {
	var notes []string
	for _, s := range ss {
		reason := s.quarantined
		if reason == "" {
			reason = withheld(s.unavailable, kind)
		}
		if reason != "" && len(notes) < maxQuarantinedNamed {
			notes = append(notes, s.id+" is quarantined: "+reason)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// WaitReason says what a startable job of project waits for, from the live sessions now.
func (s *Server) WaitReason(project string, kind store.JobKind, system string) string {
	sessions := s.sessions.all()
	views := make([]sessionView, 0, len(sessions))
	for _, w := range sessions {
		views = append(views, w.view())
	}
	return waitReason(views, project, kind, system)
}

func (w *worker) view() sessionView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := sessionView{id: w.id, projects: slices.Clone(w.grants.projects), negotiated: w.negotiated,
		draining: w.draining, quarantined: w.srv.quarantine.reason(w.id), unavailable: w.unavailable}
	if w.caps != nil {
		v.systems = slices.Clone(w.caps.Architectures)
	}
	return v
}
