package webui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// logTail is how much of a log the page shows: its end, where a failure is.
const logTail = 512 << 10

type attemptRow struct {
	store.Attempt
	Took string
}

type logLine struct {
	Text  string
	Match bool
}

type buildView struct {
	Build               store.BuildInfo
	Name, State         string
	Retryable           bool
	Outputs             []store.Output
	Attempts            []attemptRow
	Attempt, Query      string
	Lines               []logLine
	LogBytes, Shown     int64
	Truncated, Follow   bool
	RawHref, FollowHref string
}

// buildPage shows a build: facts, outputs, attempts and why each ended, and the log of the
// latest attempt (or ?attempt=), filtered to the lines holding ?q=.
func (u *UI) buildPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.mayRead(w, r, v) {
		return
	}
	view, err := u.buildView(r)
	if err != nil {
		u.notFoundOr(w, r, v, err, "There is no such build.")
		return
	}
	if !v.signedIn { // the API behind the raw and the live log needs a key (--ui-public)
		view.RawHref, view.Follow = "", false
	}
	u.render(w, r, v, http.StatusOK, "build", view)
}

func (u *UI) buildView(r *http.Request) (buildView, error) {
	ctx := r.Context()
	b, err := u.cfg.Store.GetBuild(ctx, r.PathValue("id"))
	if err != nil {
		return buildView{}, err
	}
	view := buildView{Build: b, Name: name(b), State: stateOf(b.Status),
		Retryable: b.Status == store.BuildFailedPermanent || b.Status == store.BuildFailedTimeout}
	if view.Outputs, err = u.cfg.Store.BuildOutputs(ctx, b.ID); err != nil {
		return view, err
	}
	attempts, err := u.cfg.Store.BuildAttempts(ctx, b.ID)
	if err != nil {
		return view, err
	}
	for _, a := range attempts {
		view.Attempts = append(view.Attempts, attemptRow{Attempt: a, Took: since(a.StartedAt, a.FinishedAt)})
	}
	if len(attempts) == 0 {
		return view, nil
	}
	at := attempts[len(attempts)-1]
	if want := r.URL.Query().Get("attempt"); want != "" {
		if i := slices.IndexFunc(attempts, func(a store.Attempt) bool { return a.ID == want }); i >= 0 {
			at = attempts[i]
		}
	}
	return view, u.fillLog(r, &view, at, at.ID == attempts[len(attempts)-1].ID)
}

// fillLog reads the attempt's log tail and picks the lines the search asks for.
func (u *UI) fillLog(r *http.Request, view *buildView, at store.Attempt, latest bool) error {
	view.Attempt, view.LogBytes, view.Query = at.ID, at.LogBytes, strings.TrimSpace(r.URL.Query().Get("q"))
	from := max(0, at.LogBytes-logTail)
	data, err := u.cfg.Store.ReadBuildLog(r.Context(), at.ID, from, logTail)
	if err != nil {
		return err
	}
	view.Shown, view.Truncated = int64(len(data)), from > 0
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if view.Truncated { // the first line is cut: drop it
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
	}
	q := strings.ToLower(view.Query)
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		match := q != "" && strings.Contains(strings.ToLower(line), q)
		if q == "" || match {
			view.Lines = append(view.Lines, logLine{Text: line, Match: match})
		}
	}
	base := "/api/v1/builds/" + url.PathEscape(view.Build.ID) + "/log"
	view.RawHref = base + "?" + url.Values{"attempt": {at.ID}, "limit": {"8388608"}}.Encode()
	view.Follow = latest && q == "" && view.Build.Status == store.BuildBuilding && at.Outcome == store.AttemptRunning
	// the stream goes on just past the bytes shown (gradient-server §16.1 resuming)
	view.FollowHref = base + "?" + url.Values{"follow": {"1"}, "attempt": {at.ID}, "offset": {strconv.FormatInt(from+view.Shown, 10)}}.Encode()
	return nil
}
