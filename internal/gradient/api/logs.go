package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// buildLog answers a window of one attempt's log as text/plain: the latest attempt unless
// ?attempt= names one of this build's, from ?offset= (0), at most ?limit= bytes (1 MiB,
// at most 8 MiB). The headers say which attempt, its log size, and where to read next.
// With ?follow=1 it streams instead (logfollow.go).
func (a *api) buildLog(w http.ResponseWriter, r *http.Request) error {
	b, err := a.getBuild(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if following(r) {
		return a.followBuildLog(w, r, b)
	}
	offset, err := queryInt(r, "offset", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", defaultLogLimit, 1, 1<<62)
	if err != nil {
		return err
	}
	attempts, err := a.store.BuildAttempts(r.Context(), b.ID)
	if err != nil {
		return err
	}
	at, err := pickAttempt(attempts, r.URL.Query().Get("attempt"), b.ID)
	if err != nil {
		return err
	}
	data, err := a.store.ReadBuildLog(r.Context(), at.ID, offset, int(min(limit, maxLogLimit)))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set(HeaderAttempt, at.ID)
	h.Set(HeaderLogSize, strconv.FormatInt(at.LogBytes, 10))
	h.Set(HeaderNextOffset, strconv.FormatInt(offset+int64(len(data)), 10))
	w.WriteHeader(http.StatusOK)
	w.Write(data)
	return nil
}

func pickAttempt(attempts []store.Attempt, want, buildID string) (store.Attempt, error) {
	if len(attempts) == 0 {
		return store.Attempt{}, notFound("build %s has no attempts yet", buildID)
	}
	if want == "" {
		return attempts[len(attempts)-1], nil
	}
	i := slices.IndexFunc(attempts, func(at store.Attempt) bool { return at.ID == want })
	if i < 0 {
		return store.Attempt{}, notFound("attempt %q is not an attempt of build %s", want, buildID)
	}
	return attempts[i], nil
}
