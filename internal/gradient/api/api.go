package api

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Prefix is where the API is mounted on the server's listener.
const Prefix = "/api/v1"

// LiveView is the running server as the API needs it: which workers hold a session now, a
// nudge for the dispatcher, and the hand-off of a state change's effects (AbortJob to the
// workers of closed assignments, offers of startable builds).
type LiveView interface {
	LiveWorkers() map[string]LiveWorker
	// WaitReason says what a startable job of project waits for: which workers are missing
	// or quarantined, or a free slot. kind is store.JobEval or store.JobBuild; system is a
	// build's.
	WaitReason(project string, kind store.JobKind, system string) string
	Kick()
	Apply(ctx context.Context, e store.Effects)
}

// LiveWorker is one connected worker's session.
type LiveWorker struct {
	ConnectedAt  time.Time
	Authorized   []string // peer IDs the session authenticated for
	Remote       string   // where the session runs: the worker's ip:port, or the URL the server dialed
	Capabilities wire.GradientCapabilities
	// Quarantined is why the worker gets no jobs it registered for, or "": it reported what
	// its Nix cannot do, or its set-up failed jobs in a row.
	Quarantined string
}

// Config is what the API needs.
type Config struct {
	Store store.Store
	// Live is the running server; nil means no sessions (every worker offline, Kick and
	// Apply do nothing), for tools that serve the API without a job loop.
	Live   LiveView
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // request timing in logs; nil: time.Now
	Rand   io.Reader        // tokens, keys and salts; nil: crypto/rand.Reader
	// SealDialToken encrypts a registration's plaintext token for a server-dialed worker
	// (stored as token_enc). nil: registrations with a url are refused with 501.
	SealDialToken func(token string) ([]byte, error)
	// CacheKeys makes each new cache's signing key and shows its public key. nil: caches
	// are created without a key (their narinfos go out unsigned).
	CacheKeys CacheKeys
	// Session admits a web UI session cookie on GET and HEAD (nil: API keys only).
	Session SessionKey
	// Follow tunes followed build logs (gradient-server §16).
	Follow FollowConfig
	// Triggers serves the push webhooks and resolves branches (gradient-server §11); nil:
	// no webhooks, and evaluations start by commit hash only.
	Triggers Triggers
	// RepoSecrets seals and opens projects' deploy keys and https tokens
	// (gradient-server §13.1). nil: those routes answer 501.
	RepoSecrets *aeadbox.Box
	// GC collects the server's cache (POST /gc). nil: 501.
	GC GarbageCollector
	// SealStatusSecret seals forge tokens and webhook secrets for purpose
	// (gradient-server §12). nil: setting them is refused with 501.
	SealStatusSecret func(purpose string, plaintext []byte) ([]byte, error)
}

// api serves the routes; every handler gets the authenticated key through the context.
type api struct {
	store store.Store
	live  LiveView
	log   *slog.Logger
	now   func() time.Time
	rand  io.Reader
	seal  func(string) ([]byte, error)
	keys  CacheKeys
	// session reads a web UI session (webui.go)
	session SessionKey
	// follow tunes followed build logs (logfollow.go).
	follow FollowConfig
	trig   Triggers
	// secrets seals repository credentials; nil without Config.RepoSecrets.
	secrets *aeadbox.Box
	gc      GarbageCollector
	// sealStatus seals forge tokens and webhook secrets (statuses.go).
	sealStatus func(purpose string, plaintext []byte) ([]byte, error)
}

// scope is what a route requires of the key: admin routes refuse pinned keys, cache-read
// routes admit a key pinned to the cache they read.
type scope uint8

const (
	scopeAdmin scope = iota
	scopeCacheRead
)

type route struct {
	method, path string
	scope        scope
	handle       func(a *api, w http.ResponseWriter, r *http.Request) error
}

var routes = []route{
	{"GET", "/projects", scopeAdmin, (*api).listProjects},
	{"POST", "/projects", scopeAdmin, (*api).createProject},
	{"GET", "/projects/{project}", scopeAdmin, (*api).showProject},
	{"PATCH", "/projects/{project}/triggers", scopeAdmin, (*api).setProjectTriggers},
	{"PUT", "/projects/{project}/caches/{cache}", scopeAdmin, (*api).subscribe},
	{"DELETE", "/projects/{project}/caches/{cache}", scopeAdmin, (*api).unsubscribe},
	{"GET", "/projects/{project}/evaluations", scopeAdmin, (*api).listEvaluations},
	{"GET", "/projects/{project}/status", scopeAdmin, (*api).showProjectStatus},
	{"PUT", "/projects/{project}/status", scopeAdmin, (*api).setProjectStatus},
	{"POST", "/projects/{project}/evaluations", scopeAdmin, (*api).startEvaluation},
	{"POST", "/projects/{project}/registrations", scopeAdmin, (*api).registerProjectWorker},
	{"PATCH", "/projects/{project}/registrations/{worker}", scopeAdmin, (*api).setProjectRegistrationActive},
	{"GET", "/projects/{project}/workers", scopeAdmin, (*api).listProjectWorkers},
	{"POST", "/projects/{project}/ssh-key/generate", scopeAdmin, (*api).generateSSHKey},
	{"PUT", "/projects/{project}/ssh-key", scopeAdmin, (*api).setSSHKey},
	{"GET", "/projects/{project}/ssh-key", scopeAdmin, (*api).showSSHKey},
	{"DELETE", "/projects/{project}/ssh-key", scopeAdmin, (*api).removeSSHKey},
	{"PUT", "/projects/{project}/https-token", scopeAdmin, (*api).setHTTPSToken},
	{"DELETE", "/projects/{project}/https-token", scopeAdmin, (*api).removeHTTPSToken},
	{"PUT", "/projects/{project}/teams/{team}", scopeAdmin, (*api).grantTeam},
	{"DELETE", "/projects/{project}/teams/{team}", scopeAdmin, (*api).revokeTeam},
	{"GET", "/teams", scopeAdmin, (*api).listTeams},
	{"POST", "/teams", scopeAdmin, (*api).createTeam},
	{"GET", "/teams/{team}", scopeAdmin, (*api).showTeam},
	{"POST", "/teams/{team}/workers", scopeAdmin, (*api).registerTeamWorker},
	{"PATCH", "/teams/{team}/workers/{worker}", scopeAdmin, (*api).setTeamWorkerEnabled},
	{"GET", "/caches", scopeCacheRead, (*api).listCaches},
	{"POST", "/caches", scopeAdmin, (*api).createCache},
	{"GET", "/caches/{cache}", scopeCacheRead, (*api).showCache},
	{"GET", "/caches/{cache}/paths", scopeCacheRead, (*api).listCachePaths},
	{"POST", "/caches/{cache}/registrations", scopeAdmin, (*api).registerCacheWorker},
	{"PATCH", "/caches/{cache}/registrations/{worker}", scopeAdmin, (*api).setCacheRegistrationActive},
	{"GET", "/caches/{cache}/upstreams", scopeAdmin, (*api).listUpstreams},
	{"PUT", "/caches/{cache}/upstreams", scopeAdmin, (*api).addUpstream},
	{"DELETE", "/caches/{cache}/upstreams", scopeAdmin, (*api).removeUpstream},
	{"GET", "/registrations", scopeAdmin, (*api).listRegistrations},
	{"GET", "/workers", scopeAdmin, (*api).listWorkers},
	{"GET", "/workers/{worker}", scopeAdmin, (*api).showWorker},
	{"GET", "/evaluations/{id}", scopeAdmin, (*api).showEvaluation},
	{"POST", "/evaluations/{id}/abort", scopeAdmin, (*api).abortEvaluation},
	{"GET", "/builds/{id}", scopeAdmin, (*api).showBuild},
	{"POST", "/builds/{id}/abort", scopeAdmin, (*api).abortBuild},
	{"POST", "/builds/{id}/retry", scopeAdmin, (*api).retryBuild},
	{"GET", "/builds/{id}/log", scopeAdmin, (*api).buildLog},
	{"GET", "/api-keys", scopeAdmin, (*api).listAPIKeys},
	{"POST", "/api-keys", scopeAdmin, (*api).createAPIKey},
	{"DELETE", "/api-keys/{id}", scopeAdmin, (*api).revokeAPIKey},
	{"POST", "/gc", scopeAdmin, (*api).collectGarbage},
}

// New returns the API's handler for every path under Prefix. It authenticates before it
// routes, so an unauthenticated caller learns nothing about which paths exist.
func New(cfg Config) http.Handler {
	a := &api{store: cfg.Store, live: cfg.Live, log: cfg.Logger, now: cfg.Now, rand: cfg.Rand, seal: cfg.SealDialToken, keys: cfg.CacheKeys, trig: cfg.Triggers,
		session: cfg.Session}
	a.secrets, a.gc, a.sealStatus = cfg.RepoSecrets, cfg.GC, cfg.SealStatusSecret
	if a.live == nil {
		a.live = noLive{}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.rand == nil {
		a.rand = rand.Reader
	}
	a.follow = cfg.Follow.withDefaults()
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range routes {
		mux.Handle(rt.method+" "+Prefix+rt.path, a.endpoint(rt))
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for path, methods := range allowed {
		mux.Handle(Prefix+path, methodNotAllowed(methods))
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, "no such endpoint")
	}))
	return a.withHooks(a.authenticate(mux))
}

// endpoint wraps a route's handler with its scope check and error answer.
func (a *api) endpoint(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.authorize(r, rt.scope); err != nil {
			a.fail(w, r, err)
			return
		}
		if err := rt.handle(a, w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

func methodNotAllowed(methods []string) http.Handler {
	allow := slices.Clone(methods)
	if slices.Contains(allow, "GET") {
		allow = append(allow, "HEAD")
	}
	slices.Sort(allow)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, CodeMethod, r.Method+" is not allowed here")
	})
}

// noLive stands in for a server without sessions.
type noLive struct{}

func (noLive) LiveWorkers() map[string]LiveWorker { return nil }
func (noLive) WaitReason(string, store.JobKind, string) string {
	return "this server runs no job loop"
}
func (noLive) Kick()                                {}
func (noLive) Apply(context.Context, store.Effects) {}
