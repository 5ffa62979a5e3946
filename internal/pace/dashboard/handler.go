package dashboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is what a Handler serves from.
type Config struct {
	Source Source
	Token  Token            // the zero Token serves without one (the admin surface is loopback then)
	Now    func() time.Time // time.Now when nil
}

// Handler answers the /fleet routes.
type Handler struct {
	cfg Config
}

// New returns the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Source == nil {
		return nil, errors.New("dashboard: no source")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handler{cfg: cfg}, nil
}

// Register mounts the handler on every /fleet route of mux.
func (h *Handler) Register(mux *http.ServeMux) {
	for _, p := range []string{"/fleet", "/fleet.json", "/fleet.txt", "/fleet/"} {
		mux.Handle(p, h)
	}
}

// ServeHTTP checks the method and the token, then answers the route.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "405: the dashboard is read-only; use GET")
		return
	}
	if r.URL.Query().Has("token") && h.cfg.Token.Set() {
		h.exchangeToken(w, r)
		return
	}
	if !h.cfg.Token.authorized(r) {
		unauthorized(w)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/fleet/static/"); ok {
		serveAsset(w, r, name)
		return
	}
	h.serveRoute(w, r)
}

// exchangeToken takes ?token= once: a browser cannot send a header from an address bar, so
// the right token buys an HttpOnly cookie and a redirect to the same page without the token,
// which then stays out of the address bar and the history.
func (h *Handler) exchangeToken(w http.ResponseWriter, r *http.Request) {
	if !h.cfg.Token.equal(r.URL.Query().Get("token")) {
		unauthorized(w)
		return
	}
	q := r.URL.Query()
	q.Del("token")
	target := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	http.SetCookie(w, h.cfg.Token.sessionCookie())
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="pace fleet", charset="UTF-8"`)
	plain(w, http.StatusUnauthorized, "401: the fleet dashboard needs its token (--dashboard-token-file): "+
		"Authorization: Bearer <token>, Basic with any username and the token as password, "+
		"or ?token=<token> once from a browser")
}

func (h *Handler) serveRoute(w http.ResponseWriter, r *http.Request) {
	route := r.URL.Path
	if !slices.Contains([]string{"/fleet", "/fleet.json", "/fleet.txt", "/fleet/series.json"}, route) {
		plain(w, http.StatusNotFound, "404: the dashboard serves /fleet, /fleet.json, /fleet.txt and /fleet/series.json")
		return
	}
	lead := h.cfg.Source.Leadership()
	if !lead.Leading {
		notLeader(w, route, lead)
		return
	}
	now := h.cfg.Now()
	switch route {
	case "/fleet/series.json":
		h.serveSeries(w, r, now)
	case "/fleet.txt":
		h.serveText(w, r, now)
	case "/fleet.json":
		body, err := json.Marshal(Build(h.cfg.Source.Facts(now)))
		h.send(w, r, now, "application/json", body, err)
	default:
		var b bytes.Buffer
		err := renderPage(&b, Build(h.cfg.Source.Facts(now)))
		w.Header().Set("Content-Security-Policy", pagePolicy)
		h.send(w, r, now, "text/html; charset=utf-8", b.Bytes(), err)
	}
}

func (h *Handler) serveText(w http.ResponseWriter, r *http.Request, now time.Time) {
	section := r.URL.Query().Get("section")
	if section != "" && !slices.Contains(Sections, section) {
		plain(w, http.StatusBadRequest, fmt.Sprintf("400: unknown section %q; valid sections: %s", section, strings.Join(Sections, ", ")))
		return
	}
	var b bytes.Buffer
	writeText(&b, Build(h.cfg.Source.Facts(now)), section)
	h.send(w, r, now, "text/tab-separated-values; charset=utf-8", b.Bytes(), nil)
}

func (h *Handler) serveSeries(w http.ResponseWriter, r *http.Request, now time.Time) {
	rangeName := r.URL.Query().Get("range")
	if rangeName == "" {
		rangeName = Ranges[0]
	}
	if !slices.Contains(Ranges, rangeName) {
		plain(w, http.StatusBadRequest, fmt.Sprintf("400: unknown range %q; valid ranges: %s", rangeName, strings.Join(Ranges, ", ")))
		return
	}
	view, err := h.cfg.Source.Series(rangeName, now)
	var body []byte
	if err == nil {
		body, err = json.Marshal(view)
	}
	h.send(w, r, now, "application/json", body, err)
}

// notLeader is the follower's answer: 503 naming the leader and its scheduler endpoint, and
// no redirect or link, because where the leader serves its dashboard is that machine's own
// configuration, which nothing replicates.
func notLeader(w http.ResponseWriter, route string, l Leadership) {
	msg := fmt.Sprintf("503: pace-node %s is not the fleet's leader, and only the leader answers the dashboard. ", l.NodeID)
	switch {
	case l.LeaderID == "":
		msg += "No leader is known: an election is under way; ask again in a few seconds."
	case l.LeaderScheduler == "":
		msg += fmt.Sprintf("The leader is %s (its scheduler endpoint is not recorded yet). Open the dashboard on that machine's --admin-listen.", l.LeaderID)
	default:
		msg += fmt.Sprintf("The leader is %s, scheduler endpoint %s. Open the dashboard on that machine's --admin-listen.", l.LeaderID, l.LeaderScheduler)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", "5")
	switch route {
	case "/fleet.txt":
		plain(w, http.StatusServiceUnavailable, "# "+msg)
	case "/fleet.json", "/fleet/series.json":
		body, _ := json.Marshal(map[string]string{"error": "not-leader", "node": l.NodeID, "leader": l.LeaderID,
			"leader_scheduler_endpoint": l.LeaderScheduler, "message": msg})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(append(body, '\n'))
	default:
		plain(w, http.StatusServiceUnavailable, msg)
	}
}

// send answers body with an ETag and a Cache-Control that lasts to the end of the current
// minute, the step the figures move in; a matching If-None-Match gets 304.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, now time.Time, contentType string, body []byte, err error) {
	if err != nil {
		plain(w, http.StatusInternalServerError, "500: "+err.Error())
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	hdr := w.Header()
	hdr.Set("ETag", etag)
	hdr.Set("Cache-Control", "private, max-age="+strconv.Itoa(secondsToMinuteEnd(now)))
	hdr.Set("Vary", "Authorization, Cookie")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", contentType)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func secondsToMinuteEnd(now time.Time) int {
	end := now.Truncate(time.Minute).Add(time.Minute)
	return int((end.Sub(now) + time.Second - 1) / time.Second)
}

func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}
