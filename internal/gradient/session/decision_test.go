package session_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestAuthorize(t *testing.T) {
	cacheReg := session.Registration{PeerID: "cache-1", Kind: session.PeerCache, Active: true}
	proxyReg := session.Registration{PeerID: "proxy-1", Kind: session.PeerProxy, Active: true}
	team := func(enabled bool, grants ...session.Grant) session.WorkerFacts {
		return session.WorkerFacts{Team: &session.TeamWorker{TeamID: "team-1", Enabled: enabled, Grants: grants}}
	}
	regs := func(rs ...session.Registration) session.WorkerFacts { return session.WorkerFacts{Registrations: rs} }
	reject := func(code uint16, reason string, fails ...wire.FailedPeer) session.Decision {
		return session.Decision{Reject: session.Rejection{Code: code, Reason: reason}, Failed: fails}
	}
	accept := func(auth []string, fails ...wire.FailedPeer) session.Decision {
		return session.Decision{Authorized: auth, Failed: fails}
	}
	tests := []struct {
		name string
		in   session.AuthInput
		want session.Decision
	}{
		{"gradient-protocol §4.4 step 1: disabled team worker → 403 worker is deactivated",
			session.AuthInput{Facts: team(false, session.Grant{ProjectID: "p1", HasCache: true}), Offered: []string{"team-1"}, Valid: []string{"team-1"}},
			reject(403, "worker is deactivated")},
		{"gradient-protocol §4.4 step 1: no project grants the team → 403 no project grants this team's workers",
			session.AuthInput{Facts: team(true), Offered: []string{"team-1"}, Valid: []string{"team-1"}},
			reject(403, "no project grants this team's workers")},
		{"gradient-protocol §4.2 team: a valid team token expands to the granting projects, first grant per project",
			session.AuthInput{Facts: team(true, session.Grant{ProjectID: "p1", HasCache: true}, session.Grant{ProjectID: "p2", HasCache: true}, session.Grant{ProjectID: "p1"}),
				Offered: []string{"team-1"}, Valid: []string{"team-1"}},
			accept([]string{"p1", "p2"})},
		{"gradient-protocol §4.2 team: an invalid team token → 401",
			session.AuthInput{Facts: team(true, session.Grant{ProjectID: "p1", HasCache: true}), Offered: []string{"team-1"}},
			reject(401, "no valid peer tokens provided", failed("team-1", "invalid token"))},
		{"gradient-protocol §4.4 step 4 for teams: every granting project lacks a cache → 495",
			session.AuthInput{Facts: team(true, session.Grant{ProjectID: "p1"}), Offered: []string{"team-1"}, Valid: []string{"team-1"}},
			reject(495, "project has no cache subscribed", failed("p1", "project has no cache subscribed"))},
		{"gradient-protocol §4.4 step 2: registrations exist, all inactive → 403 worker is deactivated",
			session.AuthInput{Facts: regs(inactive(projA)), Offered: []string{"proj-a"}, Valid: []string{"proj-a"}},
			reject(403, "worker is deactivated")},
		{"gradient-protocol §4.4 step 2: none at all → 403 unknown worker",
			session.AuthInput{Offered: []string{"proj-a"}, Valid: []string{"proj-a"}},
			reject(403, "unknown worker")},
		{"gradient-protocol §4.4 step 3: tokens offered, none valid → 401 with each failure's reason",
			session.AuthInput{Facts: twoProjs, Offered: []string{"proj-a"}},
			reject(401, "no valid peer tokens provided", failed("proj-a", "invalid token"), failed("proj-b", "no token provided"))},
		{"gradient-protocol §4.4 step 3: a valid token for an unchallenged peer does not count",
			session.AuthInput{Facts: regs(projA, inactive(projB)), Offered: []string{"proj-b"}, Valid: []string{"proj-b"}},
			reject(401, "no valid peer tokens provided", failed("proj-a", "no token provided"))},
		{"gradient-protocol §4.4 step 3: a 'valid' peer that was never offered does not count",
			session.AuthInput{Facts: twoProjs, Valid: []string{"proj-a"}},
			reject(401, "no valid peer tokens provided", failed("proj-a", "no token provided"), failed("proj-b", "no token provided"))},
		{"gradient-protocol §4.4 step 4: every validated project lacks a cache → 495, demoted projects in failed_peers",
			session.AuthInput{Facts: regs(noCache(projA), projB), Offered: []string{"proj-a", "proj-b"}, Valid: []string{"proj-a"}},
			reject(495, "project has no cache subscribed", failed("proj-b", "invalid token"), failed("proj-a", "project has no cache subscribed"))},
		{"gradient-protocol §4.4 step 4: caches and proxies need no cache subscription; a cacheless project is demoted",
			session.AuthInput{Facts: regs(noCache(projA), cacheReg, proxyReg), Offered: []string{"proj-a", "cache-1", "proxy-1"}, Valid: []string{"proj-a", "cache-1", "proxy-1"}},
			accept([]string{"cache-1", "proxy-1"}, failed("proj-a", "project has no cache subscribed"))},
		{"gradient-protocol §4.4 step 5: accept with some tokens failing, each with its reason",
			session.AuthInput{Facts: regs(projA, projB, sessiontest.Project("proj-c")), Offered: []string{"proj-a", "proj-b"}, Valid: []string{"proj-a"}},
			accept([]string{"proj-a"}, failed("proj-b", "invalid token"), failed("proj-c", "no token provided"))},
		{"gradient-protocol §4.4 step 5: a registration listed twice is challenged and granted once; inactive rows are skipped",
			session.AuthInput{Facts: regs(inactive(projA), projA, projA), Offered: []string{"proj-a"}, Valid: []string{"proj-a"}},
			accept([]string{"proj-a"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := session.Authorize(tc.in)
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("decision (-want +got):\n%s", d)
			}
			if got.Accepted() != (tc.want.Reject.Code == 0) {
				t.Fatalf("Accepted() = %v", got.Accepted())
			}
		})
	}
}

func TestChallengeList(t *testing.T) {
	tests := []struct {
		name  string
		facts session.WorkerFacts
		want  []string
	}{
		{"gradient-protocol §4.1 Greeted: active registrations, first per peer, in order", session.WorkerFacts{Registrations: []session.Registration{projB, inactive(sessiontest.Project("x")), projA, projB}}, []string{"proj-b", "proj-a"}},
		{"gradient-protocol §4.2 team worker: the team ID (registrations ignored)", session.WorkerFacts{Registrations: []session.Registration{projA}, Team: &session.TeamWorker{TeamID: "team-1"}}, []string{"team-1"}},
		{"gradient-server §10.8: unknown worker: empty", session.WorkerFacts{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tc.facts.Challenge(), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("challenge (-want +got):\n%s", d)
			}
		})
	}
}

func TestReasonStringsMatchSpec(t *testing.T) {
	// gradient-protocol §4.5 words these exactly; a worker or operator may
	// match on them.
	for _, c := range []struct{ got, want string }{
		{session.ReasonUnknownWorker, "unknown worker"},
		{session.ReasonDeactivated, "worker is deactivated"},
		{session.ReasonNoTeamGrant, "no project grants this team's workers"},
		{session.ReasonNotAccepting, "server is not accepting connections"},
		{session.ReasonNoValidTokens, "no valid peer tokens provided"},
		{session.ReasonNoCache, "project has no cache subscribed"},
		{session.ReasonAlreadyConnected, "worker already connected"},
		{session.ReasonWrongWorkerOrToken, "unknown worker id or wrong token"},
		{session.ReasonExpectedInitConnection, "expected InitConnection"},
		{session.ReasonExpectedAuthResponse, "expected AuthResponse"},
		{session.ReasonExpectedAuthenticate, "expected Authenticate"},
		{session.FailedInvalidToken, "invalid token"},
		{session.FailedNoToken, "no token provided"},
		{session.FailedNoCache, "project has no cache subscribed"},
	} {
		if c.got != c.want {
			t.Errorf("reason %q, gradient-protocol §4.5 says %q", c.got, c.want)
		}
	}
	codes := []uint16{session.CodeUnexpected, session.CodeUnauthorized, session.CodeForbidden, session.CodeNoCache, session.CodeAlreadyConnected}
	if d := cmp.Diff([]uint16{400, 401, 403, 495, 496}, codes); d != "" {
		t.Errorf("codes (-gradient-protocol §4.5 +got):\n%s", d)
	}
}
