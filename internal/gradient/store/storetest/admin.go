package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var adminTests = []test{
	{"ProjectsHaveUniqueNames", func(t *testing.T, e *env) {
		_, err := e.s.CreateProject(e.ctx, store.NewProject{Name: "main", RepoURL: "x"})
		wantErr(t, err, store.ErrConflict)
		other := e.newProject("other")
		got := must(e.s.ProjectByName(e.ctx, "other"))
		if diff := cmp.Diff(other, got); diff != "" {
			t.Errorf("ProjectByName (-created +read):\n%s", diff)
		}
		if n := len(must(e.s.ListProjects(e.ctx))); n != 2 {
			t.Errorf("ListProjects: %d projects, want 2", n)
		}
		_, err = e.s.GetProject(e.ctx, "not-a-uuid")
		wantErr(t, err, store.ErrNotFound)
	}},
	{"ProjectKeepsSSHKeyForEvalJobsOnly", func(t *testing.T, e *env) {
		p := must(e.s.CreateProject(e.ctx, store.NewProject{Name: "private", RepoURL: "git@x:y", SSHKeyEnc: []byte{1, 2, 3}}))
		if !must(e.s.GetProject(e.ctx, p.ID)).HasSSHKey {
			t.Error("HasSSHKey false for a project with a key")
		}
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: p.ID, Commit: "abc"}))
		a := must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
		if diff := cmp.Diff([]byte{1, 2, 3}, a.Eval.SSHKeyEnc); diff != "" {
			t.Errorf("claimed eval job key (-want +got):\n%s", diff)
		}
	}},
	{"CachesHaveUniqueNames", func(t *testing.T, e *env) {
		_, err := e.s.CreateCache(e.ctx, store.NewCache{Name: "main-cache"})
		wantErr(t, err, store.ErrConflict)
		c := must(e.s.CreateCache(e.ctx, store.NewCache{Name: "private", SigningKeyEnc: []byte("k")}))
		got := must(e.s.CacheByName(e.ctx, "private"))
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("CacheByName (-created +read):\n%s", diff)
		}
		if got.Public {
			t.Error("private cache reads back public")
		}
		if n := len(must(e.s.ListCaches(e.ctx))); n != 2 {
			t.Errorf("ListCaches: %d, want 2", n)
		}
	}},
	{"SubscriptionsAreIdempotentAndRemovable", func(t *testing.T, e *env) {
		check(t, e.s.SubscribeCache(e.ctx, e.project.ID, e.cache.ID))
		if got := must(e.s.CachesOfProjects(e.ctx, []string{e.project.ID})); !cmp.Equal(got, []string{e.cache.ID}) {
			t.Errorf("CachesOfProjects = %v", got)
		}
		check(t, e.s.UnsubscribeCache(e.ctx, e.project.ID, e.cache.ID))
		wantErr(t, e.s.UnsubscribeCache(e.ctx, e.project.ID, e.cache.ID), store.ErrNotFound)
		wantErr(t, e.s.SubscribeCache(e.ctx, e.project.ID, "0190ffff-0000-7000-8000-000000000000"), store.ErrNotFound)
	}},
	{"APIKeysLookUpByHashUntilRevoked", func(t *testing.T, e *env) {
		k := must(e.s.BootstrapAPIKey(e.ctx, store.NewAPIKey{Owner: "admin", KeyHash: "aa"}))
		_, err := e.s.BootstrapAPIKey(e.ctx, store.NewAPIKey{Owner: "admin", KeyHash: "bb"})
		wantErr(t, err, store.ErrAlreadyBootstrapped)
		pinned := must(e.s.CreateAPIKey(e.ctx, store.NewAPIKey{Owner: "ci", KeyHash: "cc", CacheID: e.cache.ID}))
		_, err = e.s.CreateAPIKey(e.ctx, store.NewAPIKey{Owner: "ci", KeyHash: "cc"})
		wantErr(t, err, store.ErrConflict)
		if got := must(e.s.LookupAPIKey(e.ctx, "cc")); got.CacheID != e.cache.ID || got.ID != pinned.ID {
			t.Errorf("LookupAPIKey(cc) = %+v, want the cache-pinned key", got)
		}
		check(t, e.s.RevokeAPIKey(e.ctx, k.ID))
		_, err = e.s.LookupAPIKey(e.ctx, "aa")
		wantErr(t, err, store.ErrNotFound)
		wantErr(t, e.s.RevokeAPIKey(e.ctx, k.ID), store.ErrNotFound)
		keys := must(e.s.ListAPIKeys(e.ctx))
		if len(keys) != 2 || keys[0].RevokedAt.IsZero() {
			t.Errorf("ListAPIKeys = %+v, want 2 keys, the first revoked", keys)
		}
	}},
	{"RegistrationPeerMustExist", func(t *testing.T, e *env) {
		_, err := e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: "0190ffff-0000-7000-8000-000000000000",
			WorkerID: workerA, TokenHash: "h"})
		wantErr(t, err, store.ErrNotFound)
		_, err = e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA,
			TokenHash: "h", URL: "wss://w"})
		wantErr(t, err, store.ErrInvalid) // a dial URL needs its token
	}},
	{"RegistrationsAreUniquePerPeerAndWorker", func(t *testing.T, e *env) {
		r := must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h"}))
		if r.PeerKind != session.PeerProject || !r.Active {
			t.Errorf("registration = %+v, want an active project registration", r)
		}
		_, err := e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h2"})
		wantErr(t, err, store.ErrConflict)
		c := must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.cache.ID, WorkerID: workerA, TokenHash: "h3"}))
		if c.PeerKind != session.PeerCache {
			t.Errorf("cache registration kind %v", c.PeerKind)
		}
		if n := len(must(e.s.ListRegistrations(e.ctx, workerA))); n != 2 {
			t.Errorf("ListRegistrations: %d, want 2", n)
		}
	}},
	{"WorkerIDBelongsToRegistrationsOrTeamNotBoth/4.2", func(t *testing.T, e *env) {
		team := must(e.s.CreateTeam(e.ctx, "ops"))
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h"}))
		_, err := e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerA, TokenHash: "t"})
		wantErr(t, err, store.ErrWorkerIDTaken)
		must(e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB, TokenHash: "t", Enabled: true}))
		_, err = e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerB, TokenHash: "h"})
		wantErr(t, err, store.ErrWorkerIDTaken)
		_, err = e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: workerB, TokenHash: "t"})
		wantErr(t, err, store.ErrConflict)
		if ws := must(e.s.ListTeamWorkers(e.ctx, team.ID)); len(ws) != 1 || ws[0].WorkerID != workerB {
			t.Errorf("ListTeamWorkers = %+v", ws)
		}
	}},
	{"WorkerIDExclusivityUnderConcurrency/4.2", workerIDExclusivityUnderConcurrency},
	{"DeactivateRegistration", func(t *testing.T, e *env) {
		must(e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: workerA, TokenHash: "h"}))
		check(t, e.s.SetRegistrationActive(e.ctx, e.project.ID, workerA, false))
		regs := must(e.s.ListRegistrations(e.ctx, workerA))
		if len(regs) != 1 || regs[0].Active {
			t.Errorf("after deactivation: %+v", regs)
		}
		wantErr(t, e.s.SetRegistrationActive(e.ctx, e.project.ID, workerB, false), store.ErrNotFound)
	}},
}

// workerIDExclusivityUnderConcurrency: a registration and a team worker racing for one
// worker ID never both win (gradient-protocol §4.2).
func workerIDExclusivityUnderConcurrency(t *testing.T, e *env) {
	team := must(e.s.CreateTeam(e.ctx, "ops"))
	for i := range 8 {
		id := fmt.Sprintf("racing-worker-%d", i)
		errs := make(chan error, 2)
		start := make(chan struct{})
		go func() {
			<-start
			_, err := e.s.CreateRegistration(e.ctx, store.NewRegistration{PeerID: e.project.ID, WorkerID: id, TokenHash: "h"})
			errs <- err
		}()
		go func() {
			<-start
			_, err := e.s.CreateTeamWorker(e.ctx, store.NewTeamWorker{TeamID: team.ID, WorkerID: id, TokenHash: "t"})
			errs <- err
		}()
		close(start)
		var wins, taken int
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrWorkerIDTaken):
				taken++
			default:
				t.Errorf("%s: %v", id, err)
			}
		}
		if wins != 1 || taken != 1 {
			t.Errorf("%s: %d owners won, %d refused; want exactly one of each", id, wins, taken)
		}
	}
}
