package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Defaults of FollowConfig.
const (
	DefaultFollowHeartbeat    = 15 * time.Second
	DefaultFollowPoll         = 5 * time.Second
	defaultFollowPollNoHub    = time.Second
	DefaultFollowWriteTimeout = 30 * time.Second
)

// CodeBusy answers a follower past the hub's caps (503).
const CodeBusy = "busy"

// followReadWindow is how much stored log one catch-up read takes.
const followReadWindow = 1 << 20

// Names of the events of a followed log besides the log text (gradient-server §16).
const (
	EventAttempt    = "attempt"     // data: Attempt, when an attempt's log starts
	EventAttemptEnd = "attempt-end" // data: Attempt, once its log is complete
	EventEnd        = "end"         // data: LogEnd; the stream closes after it
)

// LogEnd is the data of the end event: the build's final state.
type LogEnd struct {
	BuildID    string `json:"build_id"`
	Status     string `json:"status"`
	StatusCode int    `json:"status_code"`
	Success    bool   `json:"success"`
}

// FollowConfig tunes followed logs (gradient-server §16); zero fields take the defaults.
type FollowConfig struct {
	// Hub brings the chunks the server stores as they arrive; nil: none, and streams read
	// the store every Poll (1 s).
	Hub *loghub.Hub
	// Heartbeat is how often an idle stream sends a comment line (15 s).
	Heartbeat time.Duration
	// Poll is how often a stream reads the store when the hub said nothing (5 s): a safety
	// net, the hub wakes it for every chunk and state change.
	Poll time.Duration
	// WriteTimeout bounds one write to the client (30 s): the deadline is set afresh before
	// each, so a long stream is never cut by a server-wide WriteTimeout and a client that
	// stopped reading is dropped.
	WriteTimeout time.Duration
}

func (c FollowConfig) withDefaults() FollowConfig {
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultFollowHeartbeat
	}
	if c.Poll <= 0 {
		c.Poll = DefaultFollowPoll
		if c.Hub == nil {
			c.Poll = defaultFollowPollNoHub
		}
	}
	if c.Hub == nil {
		c.Hub = loghub.New(loghub.Limits{}) // nobody publishes: followers poll
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultFollowWriteTimeout
	}
	return c
}

// following reports whether the request asks for a followed log (?follow=1).
// HEAD is answered like the plain route: a stream nobody can read would hold a follower
// slot until the client goes.
func following(r *http.Request) bool {
	v := r.URL.Query().Get("follow")
	return (v == "1" || v == "true") && r.Method != http.MethodHead
}

// followBuildLog streams a build's log as server-sent events until the build ends
// (gradient-server §16): from the point Last-Event-ID (or ?attempt= and ?offset=) names, else
// from the start of the latest attempt, through every later attempt.
func (a *api) followBuildLog(w http.ResponseWriter, r *http.Request, b store.BuildInfo) error {
	ctx := r.Context()
	attempts, err := a.store.BuildAttempts(ctx, b.ID)
	if err != nil {
		return err
	}
	from, err := followFrom(r, attempts, b.ID)
	if err != nil {
		return err
	}
	sub, err := a.follow.Hub.Subscribe(b.ID)
	switch {
	case errors.Is(err, loghub.ErrBusy):
		w.Header().Set("Retry-After", "5")
		return &httpError{http.StatusServiceUnavailable, CodeBusy, "too many log followers; try again later"}
	case errors.Is(err, loghub.ErrClosed):
		return &httpError{http.StatusServiceUnavailable, CodeBusy, "the server is stopping"}
	case err != nil:
		return err
	}
	defer sub.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy in front would hold the events back
	w.WriteHeader(http.StatusOK)
	s := &logStream{a: a, w: w, rc: http.NewResponseController(w), sub: sub, build: b.ID}
	if from.ID != "" {
		s.begin(from, from.LogBytes)
	}
	s.run(ctx)
	return nil
}

// followFrom is where a stream starts: an attempt of the build with LogBytes set to the
// offset to start at, or the zero Attempt to wait for the build's first one.
func followFrom(r *http.Request, attempts []store.Attempt, buildID string) (store.Attempt, error) {
	want := r.URL.Query().Get("attempt")
	offset, err := queryInt(r, "offset", 0, 0, loghub.MaxOffset)
	if err != nil {
		return store.Attempt{}, err
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		at, off, err := loghub.ParseEventID(id)
		if err != nil {
			return store.Attempt{}, badRequest("Last-Event-ID must be <attempt>:<offset> or <offset>")
		}
		offset = off
		if at != "" {
			want = at
		}
	}
	if len(attempts) == 0 && want == "" && offset == 0 {
		return store.Attempt{}, nil
	}
	at, err := pickAttempt(attempts, want, buildID)
	if err != nil {
		return store.Attempt{}, err
	}
	if offset > at.LogBytes {
		return store.Attempt{}, badRequest("offset %d is past attempt %s's log of %d bytes", offset, at.ID, at.LogBytes)
	}
	at.LogBytes = offset
	return at, nil
}
