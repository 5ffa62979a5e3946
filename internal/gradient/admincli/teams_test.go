package admincli_test

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
)

const teamWorkerID = "0190b000-0000-7000-8000-00000000000b"

// The team workflow of gradient-protocol §4.2 from the command line: create a team,
// register a worker on it (the token printed once, under the team ID), grant the team to a
// project, see the worker in the project's list, disable it.
func TestTeamWorkflow(t *testing.T) {
	c := bootstrapped(t)
	c.ok("project", "create", "hello", "--repo-url", "https://example.invalid/hello.git", "--wildcard", "packages.*.*")
	var team api.Team
	c.okJSON(&team, "team", "create", "ops")

	r := c.run("team", "register", "ops", teamWorkerID)
	if r.code != admincli.ExitOK || !strings.Contains(r.stderr, "no project grants") {
		t.Fatalf("team register: exit %d, stderr %q", r.code, r.stderr)
	}
	m := tokenLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("team register printed no token:\n%s", r.stdout)
	}
	token := m[1]
	c.secrets = append(c.secrets, token)
	if !strings.Contains(r.stdout, team.ID+":"+token) {
		t.Errorf("team register printed no peers-file line %s:<token>:\n%s", team.ID, r.stdout)
	}
	id, err := c.store.WorkerIdentity(c.ctx, teamWorkerID)
	if err != nil || !peertoken.Verify(id.TokenHashes[team.ID], token) {
		t.Fatalf("the printed token does not verify against the stored hash (%v)", err)
	}
	if stderr := c.expect(admincli.ExitError, "worker", "register", teamWorkerID, "--project", "hello"); !strings.Contains(stderr, "409") {
		t.Errorf("registering a team worker's ID: %s", stderr)
	}

	c.ok("team", "grant", "hello", "ops")
	if out := c.ok("team", "show", "ops"); !strings.Contains(out, "hello") || !strings.Contains(out, teamWorkerID) || strings.Contains(out, token) {
		t.Errorf("team show:\n%s", out)
	}
	var workers api.WorkerList
	c.okJSON(&workers, "project", "workers", "hello")
	if len(workers.Workers) != 1 || workers.Workers[0].WorkerID != teamWorkerID || workers.Workers[0].Status != api.WorkerOffline {
		t.Fatalf("project workers %+v", workers)
	}

	c.ok("team", "disable", "ops", teamWorkerID)
	if id, _ := c.store.WorkerIdentity(c.ctx, teamWorkerID); id.Facts.Team == nil || id.Facts.Team.Enabled {
		t.Fatalf("after disable: %+v", id.Facts.Team)
	}
	c.ok("team", "revoke", "hello", "ops")
	c.expect(admincli.ExitError, "team", "revoke", "hello", "ops")
	if out := c.ok("team", "list"); !strings.Contains(out, "ops") {
		t.Errorf("team list:\n%s", out)
	}
}
