package node

import (
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/dashboard"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/enrollment"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// dashboardSource is the node as the fleet dashboard reads it (pace-node §10.3): who leads,
// the leader's registry, counters and members, and the history charts.
type dashboardSource struct{ n *Node }

// mountDashboard serves /fleet* on the admin surface's mux when --dashboard is set.
func (n *Node) mountDashboard(mux *http.ServeMux) {
	if !n.plan.Cfg.Dashboard {
		return
	}
	src := &dashboardSource{n: n}
	h, err := dashboard.New(dashboard.Config{Source: src, Token: n.plan.dashboardToken, Now: n.now})
	if err != nil {
		panic(err) // the source above is never nil
	}
	h.Register(mux)
	how := "open to this machine (no token: --admin-listen binds loopback)"
	if n.plan.dashboardToken.Set() {
		how = "behind --dashboard-token-file"
	}
	n.log.Info("fleet dashboard on the admin surface, answered while this node leads", "admin", n.adminLn.Addr().String(), "access", how)
}

func (s *dashboardSource) Leadership() dashboard.Leadership {
	n := s.n
	l := dashboard.Leadership{Leading: n.cons.IsLeader(), NodeID: n.id.NodeID}
	if id, ok := n.cons.Leader(); ok {
		l.LeaderID = id
		if m, ok := n.cons.State().Member(id); ok {
			l.LeaderScheduler = m.SchedulerEndpoint
		}
	}
	return l
}

func (s *dashboardSource) Facts(now time.Time) dashboard.Facts {
	n := s.n
	st, cs := n.cons.State(), n.cons.Status()
	f := dashboard.Facts{Now: now, NodeID: n.id.NodeID, ClusterID: st.ClusterID(), Term: cs.Term,
		Scheduler: n.sched.Snapshot(), Counts: s.counts(),
		LeaseLifetime: st.Settings().LeaseLifetime, FleetOpen: n.fleetOpen()}
	for _, m := range st.Members() {
		f.Members = append(f.Members, dashboard.Member{ID: m.ID, Seat: m.Seat.String(), PromotionPending: m.PromotionPending,
			RaftEndpoint: m.RaftEndpoint, NodeEndpoint: m.NodeEndpoint, Endpoints: m.Endpoints.String(), Key: edkey.Text(m.Key)})
	}
	n.withWindow(func(w *enrollment.Window) {
		w.Expire(now)
		for _, r := range w.Rows() {
			if r.Decision == verbs.RowPending {
				f.Waiting = append(f.Waiting, r.ID)
			}
		}
		f.AutoApproveLeft = w.AutoLeft(now)
	})
	f.ForeignFleets = n.discovered.recentlyVisible(now)
	return f
}

func (s *dashboardSource) counts() dashboard.Counts {
	c := s.n.sched.Counters()
	return dashboard.Counts{
		Granted: c.LeasesGranted.Load(), Released: c.LeasesReleased.Load(), NoWorker: c.LeasesNoWorker.Load(),
		AllExcluded: c.LeasesAllExcluded.Load(), NoCapacity: c.LeasesNoCapacity.Load(), Withdrawn: c.LeasesWithdrawn.Load(),
		Duplicate: c.LeasesDuplicate.Load(), Reclaimed: c.LeasesReclaimed.Load(), Unauthorized: c.LeasesUnauthorized.Load(),
		ReleasedLate: c.LeasesReleasedLate.Load(), Malformed: c.LeasesMalformed.Load(), FieldTooLong: c.LeasesFieldTooLong.Load(),
		Registrations: c.Registrations.Load(), RegistrationsMalformed: c.RegistrationsMalformed.Load(),
		WorkersExpired: c.WorkersExpired.Load(), WorkersWithdrawn: c.WorkersWithdrawn.Load(),
		NodeIdentityRequired: c.RefusedNodeIdentityRequired.Load(), IdentifiedCallerRequired: c.RefusedIdentifiedCallerRequired.Load(),
		NotAMember: s.n.counters.requestsRefusedNotAMember.Load(),
	}
}

func (s *dashboardSource) Series(rangeName string, now time.Time) (any, error) {
	return s.n.fleetSeries(rangeName, now)
}
