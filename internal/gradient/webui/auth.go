package webui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// cookieName is the session cookie's name.
const cookieName = "gradient_session"

// maxFormBytes bounds a form body: every form here is a few hundred bytes.
const maxFormBytes = 16 << 10

// viewer is who asks: signed in with a key (and the session's CSRF token), or nobody.
type viewer struct {
	signedIn bool
	key      store.APIKey
	csrf     string
}

// admin reports whether the viewer may read everything the API lets an unpinned key read.
func (v viewer) admin() bool { return v.signedIn && api.MayAdminister(v.key) }

// viewer reads the session cookie; a session whose key was revoked since is no session.
func (u *UI) viewer(r *http.Request) viewer {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return viewer{}
	}
	s, ok := u.sess.get(c.Value)
	if !ok {
		return viewer{}
	}
	key, err := u.cfg.Store.LookupAPIKey(r.Context(), s.keyHash)
	if err != nil {
		return viewer{}
	}
	return viewer{signedIn: true, key: key, csrf: s.csrf}
}

// mayRead is the rule of the pages of projects, evaluations and builds: an unpinned key, or
// anyone when the server is public. Otherwise it answers (sign in, or 403) and says false.
func (u *UI) mayRead(w http.ResponseWriter, r *http.Request, v viewer) bool {
	if v.admin() || (!v.signedIn && u.cfg.Public) {
		return true
	}
	u.refuse(w, r, v)
	return false
}

// mayAdminister is the rule of the fleet's pages (workers, queue) and of every action.
func (u *UI) mayAdminister(w http.ResponseWriter, r *http.Request, v viewer) bool {
	if v.admin() {
		return true
	}
	u.refuse(w, r, v)
	return false
}

// refuse sends a signed-out visitor to the sign-in page and tells a pinned key no.
func (u *UI) refuse(w http.ResponseWriter, r *http.Request, v viewer) {
	if !v.signedIn {
		http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	u.fail(w, r, v, http.StatusForbidden, "This API key is pinned to one cache and may only read it.")
}

// form parses a bounded form and checks the CSRF token of a signed-in viewer's session.
func (u *UI) form(w http.ResponseWriter, r *http.Request, v viewer) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		u.fail(w, r, v, http.StatusBadRequest, "The form could not be read.")
		return false
	}
	if !v.signedIn {
		u.refuse(w, r, v)
		return false
	}
	if !sameToken(r.PostForm.Get("csrf"), v.csrf) {
		u.counters.CSRFRefused.Add(1)
		u.cfg.Logger.Warn("web UI: a form without the session's CSRF token refused", "path", r.URL.Path, "key_id", v.key.ID)
		u.fail(w, r, v, http.StatusForbidden, "The form was refused: its CSRF token is missing or wrong. Reload the page and try again.")
		return false
	}
	return true
}

func (u *UI) signInPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	u.render(w, r, v, http.StatusOK, "signin", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// signIn exchanges an API key for a session. The browser has no session yet, so there is no
// CSRF token to check; SameSite=Strict and the Origin check keep other sites from signing a
// visitor in as someone else.
func (u *UI) signIn(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if r.ParseForm() != nil || !sameOrigin(r) {
		u.counters.SignInRefused.Add(1)
		u.fail(w, r, v, http.StatusBadRequest, "The sign-in form could not be read.")
		return
	}
	hash, ok := peertoken.APIKeyHash(strings.TrimSpace(r.PostForm.Get("key")))
	if !ok {
		u.counters.SignInRefused.Add(1)
		u.render(w, r, v, http.StatusUnauthorized, "signin", map[string]any{"Error": "That is not an API key (GRAD…).", "Next": safeNext(r.PostForm.Get("next"))})
		return
	}
	u.startSession(w, r, v, hash, safeNext(r.PostForm.Get("next")))
}

// signInOnce redeems a one-time link: the first GET signs in, any later one is refused.
func (u *UI) signInOnce(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	hash, ok := u.sess.redeem(r.PathValue("token"))
	if !ok {
		u.counters.SignInRefused.Add(1)
		u.fail(w, r, v, http.StatusUnauthorized, "This sign-in link was used already or has expired.")
		return
	}
	u.startSession(w, r, v, hash, "/projects")
}

func (u *UI) startSession(w http.ResponseWriter, r *http.Request, v viewer, keyHash, next string) {
	if _, err := u.cfg.Store.LookupAPIKey(r.Context(), keyHash); err != nil {
		u.counters.SignInRefused.Add(1)
		if !errors.Is(err, store.ErrNotFound) {
			u.cfg.Logger.Error("web UI: looking up a key", "err", err)
		}
		u.render(w, r, v, http.StatusUnauthorized, "signin", map[string]any{"Error": "Unknown or revoked API key.", "Next": next})
		return
	}
	cookie, _, err := u.sess.open(keyHash)
	if err != nil {
		u.fail(w, r, v, http.StatusInternalServerError, "No session could be made.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: "/", HttpOnly: true, Secure: u.cfg.Secure || r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(u.cfg.SessionTTL.Seconds())})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *UI) signOut(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.form(w, r, v) {
		return
	}
	if c, err := r.Cookie(cookieName); err == nil {
		u.sess.close(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: u.cfg.Secure || r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// mintLink answers POST /signin/link, authenticated by an API key in the Authorization header
// (never by a cookie, so no page can make a browser mint one): a one-time sign-in link as
// that same key, path only, as text.
func (u *UI) mintLink(w http.ResponseWriter, r *http.Request) {
	hash, ok := peertoken.APIKeyHash(r.Header.Get("Authorization"))
	if ok {
		_, err := u.cfg.Store.LookupAPIKey(r.Context(), hash)
		ok = err == nil
	}
	if !ok {
		u.counters.SignInRefused.Add(1)
		http.Error(w, "an active API key is required: Authorization: GRAD<key>", http.StatusUnauthorized)
		return
	}
	token, err := u.sess.mintOneTime(hash, OneTimeTTL)
	if err != nil {
		http.Error(w, "no link could be made", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("/signin/once/" + token + "\n"))
}

// safeNext keeps a redirect target on this site: a path, never //host or a scheme.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/projects"
	}
	return next
}

// sameOrigin refuses a form posted from another site when the browser says where it came from.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return origin == ""
	}
	o, err := url.Parse(origin)
	return err == nil && o.Host == r.Host
}
