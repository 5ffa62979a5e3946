package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// logStream is one followed build log on its way to the client (gradient-server §16).
type logStream struct {
	a     *api
	w     http.ResponseWriter
	rc    *http.ResponseController
	sub   *loghub.Subscription
	build string
	enc   *loghub.Encoder // the attempt being sent; nil while waiting for the next one
	prev  string          // the attempt sent last, once its log is complete
	buf   []byte          // events not written yet
	err   error           // the first write or store failure: the stream ends
}

// run sends the log until the build ends, the client goes, the hub closes or a write fails.
// Chunks from the hub are sent as they come; the store is read at the start, when the hub
// says the build changed or chunks were lost or skipped, and every Poll.
func (s *logStream) run(ctx context.Context) {
	cfg := s.a.follow
	heartbeat, poll := time.NewTicker(cfg.Heartbeat), time.NewTicker(cfg.Poll)
	defer heartbeat.Stop()
	defer poll.Stop()
	readStore := true
	for s.err == nil {
		if readStore {
			if s.advance(ctx) {
				return
			}
			readStore = false
		}
		s.flush()
		select {
		case <-ctx.Done():
			return
		case <-s.sub.Wake():
			b := s.sub.Take()
			if b.Closed {
				return
			}
			readStore = b.Lagged || b.Changed || !s.sendChunks(b.Chunks)
		case <-heartbeat.C:
			s.buf = loghub.AppendComment(s.buf, "keep-alive")
		case <-poll.C:
			readStore = true
		}
	}
}

// sendChunks queues the chunks' unsent bytes; false when they do not follow on from what
// was sent (another attempt, or a gap), so the store must be read.
func (s *logStream) sendChunks(chunks []loghub.Chunk) bool {
	for _, c := range chunks {
		if s.enc == nil || c.Attempt != s.enc.Attempt() {
			return false
		}
		from := s.enc.Received()
		if c.Offset > from {
			return false
		}
		if c.End() > from {
			s.buf = s.enc.Data(s.buf, c.Data[from-c.Offset:])
		}
	}
	return true
}

// advance brings the stream up to date with the store: the current attempt's stored log,
// its end, the next attempt, the build's end. It reports whether the stream is over.
func (s *logStream) advance(ctx context.Context) bool {
	for s.err == nil {
		attempts, err := s.a.store.BuildAttempts(ctx, s.build)
		if err != nil {
			s.fail(ctx, err)
			return true
		}
		if s.enc == nil {
			next := nextAttempt(attempts, s.prev)
			if next.ID == "" {
				return s.endIfBuildEnded(ctx)
			}
			s.begin(next, 0)
		}
		i := slices.IndexFunc(attempts, func(at store.Attempt) bool { return at.ID == s.enc.Attempt() })
		if i < 0 { // deleted under the stream (log retention): a resume answers 404
			return true
		}
		// The outcome is read before the log: a finished attempt's log is complete.
		if !s.catchUp(ctx) || attempts[i].Outcome == store.AttemptRunning {
			return s.err != nil
		}
		s.buf = s.enc.Flush(s.buf)
		done := attempts[i]
		done.LogBytes = s.enc.Sent()
		s.event(EventAttemptEnd, loghub.EventID(done.ID, done.LogBytes), attemptOf(done))
		s.prev, s.enc = done.ID, nil
	}
	return true
}

// nextAttempt is the attempt after prev ("": the first one), or the zero Attempt.
func nextAttempt(attempts []store.Attempt, prev string) store.Attempt {
	i := 0
	if prev != "" {
		i = slices.IndexFunc(attempts, func(at store.Attempt) bool { return at.ID == prev }) + 1
	}
	if i <= 0 && prev != "" || i >= len(attempts) {
		return store.Attempt{}
	}
	return attempts[i]
}

// begin starts sending attempt at's log from offset; from its start, an attempt event first.
func (s *logStream) begin(at store.Attempt, offset int64) {
	s.enc = loghub.NewEncoder(at.ID, offset)
	if offset == 0 {
		s.event(EventAttempt, loghub.EventID(at.ID, 0), attemptOf(at))
	}
}

// catchUp queues the stored log past what was received, a window at a time; false when the
// store failed.
func (s *logStream) catchUp(ctx context.Context) bool {
	for s.err == nil {
		data, err := s.a.store.ReadBuildLog(ctx, s.enc.Attempt(), s.enc.Received(), followReadWindow)
		if err != nil {
			s.fail(ctx, err)
			return false
		}
		if len(data) == 0 {
			return true
		}
		s.buf = s.enc.Data(s.buf, data)
		s.flush()
	}
	return false
}

// endIfBuildEnded sends the end event when the build will not run again.
func (s *logStream) endIfBuildEnded(ctx context.Context) bool {
	b, err := s.a.store.GetBuild(ctx, s.build)
	if err != nil {
		s.fail(ctx, err)
		return true
	}
	if !b.Status.Terminal() {
		return false
	}
	// No id: a client that reconnects anyway resumes after the last attempt-end it got.
	s.event(EventEnd, "", LogEnd{BuildID: b.ID, Status: b.Status.String(), StatusCode: int(b.Status), Success: b.Status.Succeeded()})
	s.flush()
	return true
}

func (s *logStream) event(name, id string, v any) {
	data, _ := json.Marshal(v) // our own types always marshal
	s.buf = loghub.AppendEvent(s.buf, name, id, data)
}

// flush writes the queued events under a fresh write deadline and pushes them out.
func (s *logStream) flush() {
	if len(s.buf) == 0 || s.err != nil {
		return
	}
	_ = s.rc.SetWriteDeadline(s.a.now().Add(s.a.follow.WriteTimeout)) // unsupported by test recorders
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = err
		return
	}
	s.buf = s.buf[:0]
	if err := s.rc.Flush(); err != nil {
		s.err = err
	}
}

// fail ends the stream on a store error; the client resumes from the last id it got.
func (s *logStream) fail(ctx context.Context, err error) {
	s.err = err
	s.a.log.LogAttrs(ctx, slog.LevelWarn, "following a build log", slog.String("build", s.build), slog.Any("err", err))
}
