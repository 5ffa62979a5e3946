package webui

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/counter"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Defaults of Config.
const (
	DefaultSessionTTL  = 12 * time.Hour
	DefaultMaxSessions = 10000
	DefaultPageSize    = 100
	// OneTimeTTL is how long a one-time sign-in link stays good.
	OneTimeTTL = 15 * time.Minute
)

// Config is what the UI needs.
type Config struct {
	Store store.Store
	// Live is the running server (workers, wait reasons); nil: no sessions.
	Live api.LiveView
	// CacheKeys shows caches' public keys (nil: none shown).
	CacheKeys api.CacheKeys
	// CacheURL is the base URL Nix reaches the binary cache at (the main listener),
	// for the substituters line.
	CacheURL string
	// Public lets signed-out visitors read projects, evaluations, builds and public caches.
	Public bool
	// Secure marks the session cookie Secure (the UI is served over TLS).
	Secure      bool
	Logger      *slog.Logger
	Now         func() time.Time
	Rand        io.Reader
	SessionTTL  time.Duration
	MaxSessions int
	PageSize    int // builds per evaluation page
}

// Counters are the UI's refusals.
type Counters struct {
	CSRFRefused   atomic.Uint64 // state-changing requests without the session's CSRF token
	SignInRefused atomic.Uint64 // sign-ins with an unknown, revoked or malformed key or link
}

// Metrics names the counters for /metrics.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_ui_csrf_refused_total", Help: "Web UI forms refused for a missing or wrong CSRF token.", Value: &c.CSRFRefused},
		{Name: "gradient_ui_signin_refused_total", Help: "Web UI sign-ins refused: an unknown, revoked or malformed key, or a used or expired link.", Value: &c.SignInRefused},
	}
}

// UI serves the pages.
type UI struct {
	cfg      Config
	sess     *sessions
	pages    pageSet
	counters Counters
	api      http.Handler // set by Handler: the actions and the fleet's lists go through it
}

// New builds the UI.
func New(cfg Config) *UI {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	return &UI{cfg: cfg, sess: newSessions(cfg.Rand, cfg.Now, cfg.SessionTTL, cfg.MaxSessions), pages: mustParsePages()}
}

// Counters are the UI's refusal counters.
func (u *UI) Counters() *Counters { return &u.counters }

// SessionKey is api.Config.Session: the key of the request's session cookie.
func (u *UI) SessionKey(r *http.Request) (store.APIKey, bool) {
	v := u.viewer(r)
	return v.key, v.signedIn
}

// Handler serves the pages, the assets, and apiHandler under /api/v1/ (build it with
// Session: u.SessionKey).
func (u *UI) Handler(apiHandler http.Handler) http.Handler {
	u.api = apiHandler
	mux := http.NewServeMux()
	mux.Handle(api.Prefix+"/", apiHandler)
	mux.Handle("GET /assets/{name}", http.HandlerFunc(serveAsset))
	page := func(pattern string, h func(http.ResponseWriter, *http.Request, viewer, api.LiveView)) {
		mux.Handle(pattern, u.secured(func(w http.ResponseWriter, r *http.Request) { h(w, r, u.viewer(r), u.live()) }))
	}
	mux.Handle("GET /{$}", u.secured(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/projects", http.StatusSeeOther)
	}))
	page("GET /signin", u.signInPage)
	page("POST /signin", u.signIn)
	page("GET /signin/once/{token}", u.signInOnce)
	mux.Handle("POST /signin/link", u.secured(u.mintLink))
	page("POST /signout", u.signOut)
	page("GET /projects", u.projectsPage)
	page("GET /projects/{project}", u.projectPage)
	page("POST /projects/{project}/evaluations", u.startEvaluation)
	page("GET /evaluations/{id}", u.evaluationPage)
	page("POST /evaluations/{id}/abort", u.abortEvaluation)
	page("GET /builds/{id}", u.buildPage)
	page("POST /builds/{id}/retry", u.retryBuild)
	page("GET /workers", u.workersPage)
	page("GET /caches", u.cachesPage)
	page("GET /queue", u.queuePage)
	mux.Handle("/", u.secured(func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, viewer{}, http.StatusNotFound, "There is no such page.")
	}))
	return mux
}

func (u *UI) live() api.LiveView {
	if u.cfg.Live == nil {
		return noLive{}
	}
	return u.cfg.Live
}

// csp admits the UI's own style sheet and script only: no inline code, no other origin.
const csp = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secured sets the headers every page carries: the CSP, no sniffing, no framing, no referrer
// to other sites (a one-time link must not leak; same-origin keeps the Origin header forms
// are checked by), no caching of private pages.
func (u *UI) secured(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		h(w, r)
	})
}

// noLive stands in for a UI without a running server.
type noLive struct{}

func (noLive) LiveWorkers() map[string]api.LiveWorker          { return nil }
func (noLive) WaitReason(string, store.JobKind, string) string { return "this server runs no job loop" }
func (noLive) Kick()                                           {}
func (noLive) Apply(context.Context, store.Effects)            {}
