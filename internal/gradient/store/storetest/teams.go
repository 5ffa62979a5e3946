package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// teamTests cover the reads the API needs to manage team workers
// (gradient-protocol §4.2).
var teamTests = []test{
	{"TeamsAreListedByName/4.2", func(t *testing.T, e *env) {
		if got := must(e.s.ListTeams(e.ctx)); len(got) != 0 {
			t.Fatalf("ListTeams on an empty store = %+v", got)
		}
		ops := must(e.s.CreateTeam(e.ctx, "ops"))
		build := must(e.s.CreateTeam(e.ctx, "build"))
		_, err := e.s.CreateTeam(e.ctx, "ops")
		wantErr(t, err, store.ErrConflict)
		got := must(e.s.ListTeams(e.ctx))
		if diff := cmp.Diff([]store.Team{build, ops}, got); diff != "" {
			t.Errorf("ListTeams (-want +got):\n%s", diff)
		}
	}},
	{"TeamGrantsAreListedWithRevokedOnes/4.2", func(t *testing.T, e *env) {
		ops := must(e.s.CreateTeam(e.ctx, "ops"))
		other := must(e.s.CreateTeam(e.ctx, "other"))
		second := e.newProject("second")
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: ops.ID, ProjectID: e.project.ID, Workers: true}))
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: ops.ID, ProjectID: second.ID, Workers: true}))
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: other.ID, ProjectID: second.ID, Workers: true}))
		check(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: ops.ID, ProjectID: second.ID, Workers: false}))
		got := must(e.s.ListTeamGrants(e.ctx, ops.ID))
		want := []store.TeamGrant{{TeamID: ops.ID, ProjectID: e.project.ID, Workers: true},
			{TeamID: ops.ID, ProjectID: second.ID, Workers: false}}
		sortGrants(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListTeamGrants(ops) (-want +got):\n%s", diff)
		}
		if all := must(e.s.ListTeamGrants(e.ctx, "")); len(all) != 3 {
			t.Errorf("ListTeamGrants(all) = %+v, want 3 grants", all)
		}
		if none := must(e.s.ListTeamGrants(e.ctx, "not-a-uuid")); len(none) != 0 {
			t.Errorf("ListTeamGrants(unknown) = %+v", none)
		}
		wantErr(t, e.s.SetTeamGrant(e.ctx, store.TeamGrant{TeamID: ops.ID, ProjectID: workerA, Workers: true}), store.ErrNotFound)
	}},
}

// sortGrants orders grants as ListTeamGrants of one team does: by project ID.
func sortGrants(gs []store.TeamGrant) {
	slices.SortFunc(gs, func(a, b store.TeamGrant) int { return strings.Compare(a.ProjectID, b.ProjectID) })
}
