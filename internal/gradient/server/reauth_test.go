package server

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// newProject adds a project subscribed to a cache of its own, so its registrations pass the
// gradient-protocol §4.4 cache check.
func (r *rig) newProject(name string) store.Project {
	r.t.Helper()
	p, err := r.st.CreateProject(ctx, store.NewProject{Name: name, RepoURL: "file:///nowhere", Branch: "main", Wildcards: []string{"packages"}})
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := r.st.CreateCache(ctx, store.NewCache{Name: name + "-cache"})
	if err == nil {
		err = r.st.SubscribeCache(ctx, p.ID, c.ID)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// registerFor registers workerID for a peer with the given token.
func (r *rig) registerFor(peerID, workerID, token string) {
	r.t.Helper()
	_, err := r.st.CreateRegistration(ctx, store.NewRegistration{PeerID: peerID, WorkerID: workerID,
		TokenHash: peertoken.SHA256Hex(token), EnableFetch: true, EnableEval: true, EnableBuild: true})
	if err != nil {
		r.t.Fatal(err)
	}
}

// dial connects workerID presenting tokens, and returns the session's InitAck result.
func (r *rig) dial(workerID string, tokens ...wire.PeerToken) (*peer, session.Result) {
	r.t.Helper()
	c, err := wsconn.DialServer(ctx, r.url, wsconn.DialOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	role, out := session.NewPeer(session.PeerConfig{WorkerID: workerID, Tokens: session.NewPeerTokens(tokens),
		Capabilities: wire.GradientCapabilities{Fetch: true, Eval: true, Build: true}})
	_, res, err := handshake.Run(ctx, c, role, out, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Abort() })
	return &peer{t: r.t, c: c}, res
}

// answerChallenge reads an AuthChallenge naming want, answers it with tokens, and returns
// the AuthUpdate that ends the round.
func (p *peer) answerChallenge(want []string, tokens ...wire.PeerToken) *wire.AuthUpdate {
	p.t.Helper()
	ch, ok := p.next().(*wire.AuthChallenge)
	if !ok {
		p.t.Fatal("expected AuthChallenge")
	}
	if !sameSet(ch.Peers, want) {
		p.t.Fatalf("challenge named %v, want %v", ch.Peers, want)
	}
	p.send(&wire.AuthResponse{Tokens: tokens})
	m := p.next()
	u, ok := m.(*wire.AuthUpdate)
	if !ok {
		p.t.Fatalf("got %T %+v, want AuthUpdate", m, m)
	}
	return u
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sessionOf is the running session of id, waiting for it to be attached.
func (r *rig) sessionOf(id string) *worker {
	r.t.Helper()
	var w *worker
	eventually(r.t, "the session to be attached", func() bool { w = r.srv.sessions.get(id); return w != nil })
	return w
}

func (r *rig) queueEvaluationIn(projectID string) store.Evaluation {
	r.t.Helper()
	ev, err := r.st.CreateEvaluation(ctx, store.NewEvaluation{ProjectID: projectID, Commit: strings.Repeat("ab", 20)})
	if err != nil {
		r.t.Fatal(err)
	}
	return ev
}

// waitIdle waits until the session remembers an unanswered RequestJob of kind.
func waitIdle(t *testing.T, w *worker, kind wire.JobKind) {
	t.Helper()
	eventually(t, "the idle slot to be remembered", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.idle[kind] == 1
	})
}

// TestReauthAddsAProjectWithoutReconnecting (gradient-protocol §4.3): a peer newly
// registers a connected worker; the server challenges the running session, the worker
// answers, AuthUpdate grows the authorized set, and the new project's job is assigned on
// the same connection.
func TestReauthAddsAProjectWithoutReconnecting(t *testing.T) {
	r := newRig(t, Config{})
	tokenP := r.register(workerA)
	p, res := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: tokenP})
	if !slices.Equal(res.Authorized, []string{r.project.ID}) {
		t.Fatalf("authorized at connect %v", res.Authorized)
	}
	before := r.sessionOf(workerA)

	second := r.newProject("second")
	r.registerFor(second.ID, workerA, "token-second")
	ev := r.queueEvaluationIn(second.ID)
	r.srv.RegistrationChanged(workerA) // what the API calls after the registration
	u := p.answerChallenge([]string{r.project.ID, second.ID},
		wire.PeerToken{PeerID: r.project.ID, Token: tokenP}, wire.PeerToken{PeerID: second.ID, Token: "token-second"})
	if !sameSet(u.AuthorizedPeers, []string{r.project.ID, second.ID}) || len(u.FailedPeers) != 0 {
		t.Fatalf("AuthUpdate %+v", u)
	}

	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	if a := assignOf(t, p.next()); a.JobID != "eval:"+ev.ID {
		t.Fatalf("assigned %s, want the new project's evaluation %s", a.JobID, ev.ID)
	}
	if after := r.srv.sessions.get(workerA); after != before || after.remote != before.remote {
		t.Fatal("the worker's session was replaced: the reauth reconnected")
	}
	if n := r.srv.counters.SessionsStarted.Load(); n != 1 {
		t.Fatalf("%d sessions started, want 1", n)
	}
	if n := r.srv.counters.Reauths.Load(); n != 1 {
		t.Fatalf("%d reauth rounds, want 1", n)
	}
	live := r.srv.LiveWorkers()[workerA]
	if !sameSet(live.Authorized, []string{r.project.ID, second.ID}) {
		t.Fatalf("live worker authorized for %v", live.Authorized)
	}
}

// TestAWorkersReauthRequestRunsARound (gradient-protocol §4.3): the worker's ReauthRequest
// (its peers file changed) gets the same challenge round, and a token it now holds adds
// that peer.
func TestAWorkersReauthRequestRunsARound(t *testing.T) {
	r := newRig(t, Config{})
	tokenP := r.register(workerA)
	second := r.newProject("second")
	r.registerFor(second.ID, workerA, "token-second")
	p, res := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: tokenP})
	if !slices.Equal(res.Authorized, []string{r.project.ID}) {
		t.Fatalf("authorized at connect %v (the worker held one token)", res.Authorized)
	}
	p.send(&wire.ReauthRequest{})
	u := p.answerChallenge([]string{r.project.ID, second.ID}, wire.PeerToken{PeerID: second.ID, Token: "token-second"})
	if !sameSet(u.AuthorizedPeers, []string{r.project.ID, second.ID}) {
		t.Fatalf("AuthUpdate %+v: a round without the first token must keep its grant", u)
	}
}

// TestReauthNeverRevokes (gradient-protocol §4.3): deactivating one of two registrations
// leaves the peer out of the next challenge, but the authorized set keeps it; a wrong token
// keeps it too.
func TestReauthNeverRevokes(t *testing.T) {
	r := newRig(t, Config{})
	tokenP := r.register(workerA)
	second := r.newProject("second")
	r.registerFor(second.ID, workerA, "token-second")
	p, _ := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: tokenP}, wire.PeerToken{PeerID: second.ID, Token: "token-second"})
	if err := r.st.SetRegistrationActive(ctx, second.ID, workerA, false); err != nil {
		t.Fatal(err)
	}
	r.srv.RegistrationChanged(workerA)
	u := p.answerChallenge([]string{r.project.ID}, wire.PeerToken{PeerID: r.project.ID, Token: "wrong"})
	if !sameSet(u.AuthorizedPeers, []string{r.project.ID, second.ID}) {
		t.Fatalf("AuthUpdate %+v: the authorized set shrank", u)
	}
	if _, ok := r.srv.LiveWorkers()[workerA]; !ok {
		t.Fatal("the session ended")
	}
}

// TestDeactivatingEveryRegistrationEndsTheSession (gradient-protocol §4.3): Reject 403
// "worker is deactivated", then close; the reason is kept as the worker's offline reason.
func TestDeactivatingEveryRegistrationEndsTheSession(t *testing.T) {
	r := newRig(t, Config{})
	p, _ := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: r.register(workerA)})
	r.sessionOf(workerA)
	if err := r.st.SetRegistrationActive(ctx, r.project.ID, workerA, false); err != nil {
		t.Fatal(err)
	}
	r.srv.RegistrationChanged(workerA)
	m := p.next()
	rej, ok := m.(*wire.ServerReject)
	if !ok || rej.Code != session.CodeForbidden || rej.Reason != session.ReasonDeactivated {
		t.Fatalf("got %T %+v, want Reject 403 %q", m, m, session.ReasonDeactivated)
	}
	if _, err := p.read(5 * time.Second); err == nil {
		t.Fatal("the session stayed open after the Reject")
	}
	eventually(t, "the slot to be freed", func() bool { return r.srv.sessions.get(workerA) == nil })
	eventually(t, "the offline reason", func() bool {
		return strings.Contains(r.offlineReason(workerA), "403 worker is deactivated")
	})
	if n := r.srv.counters.ReauthEnded.Load(); n != 1 {
		t.Fatalf("ReauthEnded = %d", n)
	}
}

// TestATeamGrantJoinsTheRunningSession (gradient-protocol §4.2, gradient-protocol §4.3): a
// team worker connects while one project grants its team; a second project grants the team
// later, the challenge names the team, and the second project's queued evaluation goes to
// the slot the worker left idle.
func TestATeamGrantJoinsTheRunningSession(t *testing.T) {
	r := newRig(t, Config{})
	team, err := r.st.CreateTeam(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.st.SetTeamGrant(ctx, store.TeamGrant{TeamID: team.ID, ProjectID: r.project.ID, Workers: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.CreateTeamWorker(ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB,
		TokenHash: peertoken.SHA256Hex("team-token"), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	teamToken := wire.PeerToken{PeerID: team.ID, Token: "team-token"}
	p, res := r.dial(workerB, teamToken)
	if !slices.Equal(res.Authorized, []string{r.project.ID}) {
		t.Fatalf("team worker authorized for %v, want the granting project", res.Authorized)
	}
	w := r.sessionOf(workerB)
	if got := w.projects(); !slices.Equal(got, []string{r.project.ID}) {
		t.Fatalf("session may take jobs of %v", got)
	}

	later := r.newProject("later")
	ev := r.queueEvaluationIn(later.ID)
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	waitIdle(t, w, wire.JobKindFlake) // nothing it may run yet: the slot stays idle

	if err := r.st.SetTeamGrant(ctx, store.TeamGrant{TeamID: team.ID, ProjectID: later.ID, Workers: true}); err != nil {
		t.Fatal(err)
	}
	r.srv.RegistrationChanged(workerB)
	if ch, ok := p.next().(*wire.AuthChallenge); !ok || !slices.Equal(ch.Peers, []string{team.ID}) {
		t.Fatalf("got %+v, want a challenge naming the team", ch)
	}
	p.send(&wire.AuthResponse{Tokens: []wire.PeerToken{teamToken}})
	// The grants grow before AuthUpdate goes out, so the idle slot may be filled first.
	var update *wire.AuthUpdate
	var assigned *wire.AssignJob
	for update == nil || assigned == nil {
		switch m := p.next().(type) {
		case *wire.AuthUpdate:
			update = m
		case *wire.AssignJob:
			assigned = m
		default:
			t.Fatalf("got %T %+v", m, m)
		}
	}
	if !sameSet(update.AuthorizedPeers, []string{r.project.ID, later.ID}) {
		t.Fatalf("AuthUpdate %+v", update)
	}
	if assigned.JobID != "eval:"+ev.ID {
		t.Fatalf("assigned %s, want %s", assigned.JobID, ev.ID)
	}
	if r.srv.sessions.get(workerB) != w {
		t.Fatal("the team worker's session was replaced")
	}
}

// TestADisabledTeamWorkerIsRejected: disabling a connected team worker ends its session
// with 403 "worker is deactivated".
func TestADisabledTeamWorkerIsRejected(t *testing.T) {
	r := newRig(t, Config{})
	team, err := r.st.CreateTeam(ctx, "ops")
	if err == nil {
		err = r.st.SetTeamGrant(ctx, store.TeamGrant{TeamID: team.ID, ProjectID: r.project.ID, Workers: true})
	}
	if err == nil {
		_, err = r.st.CreateTeamWorker(ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB,
			TokenHash: peertoken.SHA256Hex("team-token"), Enabled: true})
	}
	if err != nil {
		t.Fatal(err)
	}
	p, _ := r.dial(workerB, wire.PeerToken{PeerID: team.ID, Token: "team-token"})
	r.sessionOf(workerB)
	if err := r.st.SetTeamWorkerEnabled(ctx, workerB, false); err != nil {
		t.Fatal(err)
	}
	r.srv.RegistrationChanged(workerB)
	if rej, ok := p.next().(*wire.ServerReject); !ok || rej.Code != session.CodeForbidden || rej.Reason != session.ReasonDeactivated {
		t.Fatalf("got %+v, want Reject 403 %q", rej, session.ReasonDeactivated)
	}
}

// TestAnUnansweredChallengeEndsTheSession: a worker that leaves a reauth challenge
// unanswered past the handshake limit is disconnected, so queued triggers (a deactivation
// among them) cannot wait behind it forever.
func TestAnUnansweredChallengeEndsTheSession(t *testing.T) {
	old := reauthAnswerTimeout
	reauthAnswerTimeout = 100 * time.Millisecond
	t.Cleanup(func() { reauthAnswerTimeout = old })
	r := newRig(t, Config{})
	p, _ := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: r.register(workerA)})
	r.sessionOf(workerA)
	r.srv.RegistrationChanged(workerA)
	if _, ok := p.next().(*wire.AuthChallenge); !ok {
		t.Fatal("expected AuthChallenge")
	}
	if _, err := p.read(10 * time.Second); err == nil {
		t.Fatal("the session stayed open with its challenge unanswered")
	}
	eventually(t, "the slot to be freed", func() bool { return r.srv.sessions.get(workerA) == nil })
}

// TestAChangeDuringTheHandshakeIsCaughtUp: a registration change after the handshake read
// the worker's facts, but before its session was attached, still reaches the session.
func TestAChangeDuringTheHandshakeIsCaughtUp(t *testing.T) {
	r := newRig(t, Config{})
	tokenP := r.register(workerA)
	p, _ := r.dial(workerA, wire.PeerToken{PeerID: r.project.ID, Token: tokenP})
	w := r.sessionOf(workerA)
	seen := r.srv.changes.at(workerA)
	r.srv.catchUp(w, seen) // nothing changed: no round
	r.srv.changes.bump(workerA)
	r.srv.catchUp(w, seen)
	if u := p.answerChallenge([]string{r.project.ID}, wire.PeerToken{PeerID: r.project.ID, Token: tokenP}); len(u.AuthorizedPeers) != 1 {
		t.Fatalf("AuthUpdate %+v", u)
	}
	if n := r.srv.counters.Reauths.Load(); n != 1 {
		t.Fatalf("%d rounds, want exactly 1", n)
	}
}
