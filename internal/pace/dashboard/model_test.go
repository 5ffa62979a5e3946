package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

func TestBuildJoinsMembersWithWhatTheSchedulerHeard(t *testing.T) {
	m := Build(sampleFacts())
	if len(m.Machines) != 3 {
		t.Fatalf("%d machines", len(m.Machines))
	}
	want := []struct{ id, role, standing string }{{"n1", "leader", "ok"}, {"n2", "voter", "ok"}, {"n3", "learner", "not heard by this leader"}}
	for i, w := range want {
		r := m.Machines[i]
		if r.ID != w.id || r.Role != w.role || r.Standing != w.standing {
			t.Errorf("machine %d: %+v, want %v", i, r, w)
		}
	}
	if m.Machines[2].LastHeardS != nil || *m.Machines[1].LastHeardS != 40 {
		t.Errorf("last heard: %v %v", m.Machines[2].LastHeardS, m.Machines[1].LastHeardS)
	}
	w := m.Workers[1]
	if w.LimitedBy != "external-cpu" || w.Withdrawn != "external-cpu" || w.LastPickedAgeS != nil {
		t.Errorf("a worker held back by CPU load: %+v", w)
	}
	if m.Workers[0].Withdrawn != "" || *m.Workers[0].LastPickedAgeS != 7 {
		t.Errorf("a worker with free slots: %+v", m.Workers[0])
	}
	k := m.KPI
	checks := map[string][2]float64{"compiling-now": {1, 6}, "refused": {3, 10}, "oldest-heartbeat": {40, 90}, "never-picked": {1, 2}}
	for name, vo := range checks {
		if *k[name].Value != vo[0] || *k[name].Of != vo[1] {
			t.Errorf("%s: %v of %v, want %v", name, *k[name].Value, *k[name].Of, vo)
		}
	}
	if k["leases-outstanding"].Of != nil {
		t.Error("leases-outstanding has an of")
	}
	if c := conditionNamed(m, "members-not-heard"); c.State != "raised" {
		t.Errorf("n3 unheard: %+v", c)
	}
}

func TestAnEmptyFleetHasNoFiguresItCannotKnow(t *testing.T) {
	m := Build(Facts{NodeID: "n1"})
	if m.KPI["cache-hit-rate"].Value != nil || m.KPI["oldest-heartbeat"].Value != nil {
		t.Errorf("figures without a machine: %+v", m.KPI)
	}
	if c := conditionNamed(m, "no-worker-registered"); c.State != "raised" {
		t.Errorf("%+v", c)
	}
}

func TestEveryTableIsBounded(t *testing.T) {
	f := sampleFacts()
	for i := range MaxRows + 7 {
		f.Scheduler.Workers = append(f.Scheduler.Workers, scheduler.WorkerRow{NodeID: fmt.Sprint("w", i)})
	}
	f.Scheduler.LeasesOutstanding = 80
	m := Build(f)
	if len(m.Workers) != MaxRows || m.Omitted["workers"] != 9 || m.Omitted["leases"] != 79 {
		t.Fatalf("%d workers, omitted %v", len(m.Workers), m.Omitted)
	}
}

func conditionNamed(m Model, name string) Condition {
	for _, c := range m.Conditions {
		if c.Name == name {
			return c
		}
	}
	return Condition{}
}

func TestStanding(t *testing.T) {
	for _, c := range []struct {
		m     Member
		heard bool
		want  string
	}{
		{Member{Endpoints: "announced"}, true, "ok"},
		{Member{Endpoints: "never-announced"}, true, "heard; endpoint not recorded yet"},
		{Member{Endpoints: "never-announced"}, false, "never announced"},
		{Member{Endpoints: "cleared"}, false, "moved; not announced since"},
		{Member{Endpoints: "announced"}, false, "not heard by this leader"},
		{Member{Endpoints: "announced", PromotionPending: true}, true, "promotion pending (catching up)"},
	} {
		if got := standing(c.m, c.heard); got != c.want {
			t.Errorf("%+v heard %v: %q, want %q", c.m, c.heard, got, c.want)
		}
	}
}

// TestFormationConditions: machines waiting for an operator, an open automatic window and a
// foreign fleet each raise their condition, naming what to do; none of them is raised on a
// quiet fleet.
func TestFormationConditions(t *testing.T) {
	quiet := Build(sampleFacts())
	for _, name := range []string{"enrollment-requests-waiting", "enrollment-window-open", "foreign-fleet-visible"} {
		if c := conditionNamed(quiet, name); c.State != "clear" {
			t.Errorf("%s on a quiet fleet: %+v", name, c)
		}
	}
	f := sampleFacts()
	f.Waiting, f.AutoApproveLeft, f.ForeignFleets = []string{"laptop-7"}, 90*time.Second, []string{"c0ffee"}
	m := Build(f)
	for name, want := range map[string]string{
		"enrollment-requests-waiting": "laptop-7",
		"enrollment-window-open":      "1m30s more",
		"foreign-fleet-visible":       "c0ffee",
	} {
		if c := conditionNamed(m, name); c.State != "raised" || !strings.Contains(c.Detail, want) {
			t.Errorf("%s: %+v, want raised naming %q", name, c, want)
		}
	}
}
