package cacheserve

import (
	"context"
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Session serves the cache messages of one session. Handle belongs to the session's read
// loop; Close and Busy may be called from anywhere.
type Session struct {
	cfg     Config
	ctx     context.Context // ends at Close: in-flight queries and serves stop
	cancel  context.CancelFunc
	queries chan struct{} // query slots

	mu      sync.Mutex
	closed  bool
	wg      sync.WaitGroup // every goroutine the session started
	uploads map[uint64]*upload
	pending []serveItem // NAR paths waiting for a serve slot
	running int         // serve goroutines
	active  map[narKey]*activeServe
}

// New returns a session serving cfg's scope.
func New(cfg Config) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{
		cfg: cfg.withDefaults(), ctx: ctx, cancel: cancel,
		queries: make(chan struct{}, maxConcurrentQueries),
		uploads: make(map[uint64]*upload), active: make(map[narKey]*activeServe),
	}
}

// Handle serves m when it is a cache message (handled reports whether it was). ctx bounds
// the replies Handle sends itself; the slow work runs on the session's goroutines. The
// error is ErrForbidden for a message a read-only session refuses (answer Reject 403 and go
// on), ErrClosed after Close, or a failure of Send (the socket is gone).
func (s *Session) Handle(ctx context.Context, m wire.ClientMessage) (handled bool, err error) {
	if s.cfg.ReadOnly && writes(m) {
		s.cfg.Counters.Forbidden.Add(1)
		return true, ErrForbidden
	}
	switch m := m.(type) {
	case *wire.CacheQuery:
		return true, s.query(ctx, m)
	case *wire.UploadRequest:
		return true, s.uploadRequest(ctx, m)
	case *wire.UploadChunk:
		return true, s.uploadChunk(m)
	case *wire.UploadFinished:
		return true, s.uploadFinished(ctx, m)
	case *wire.UploadCancel:
		return true, s.uploadCancel(m)
	case *wire.NarRequest:
		return true, s.narRequest(m)
	case *wire.NarRequestResume:
		return true, s.narResume(m)
	}
	return false, nil
}

// writes reports whether m uploads or asks about pushing: what a read-only session refuses.
func writes(m wire.ClientMessage) bool {
	switch m := m.(type) {
	case *wire.CacheQuery:
		return m.Mode == wire.QueryModePush
	case *wire.UploadRequest, *wire.UploadChunk, *wire.UploadFinished, *wire.UploadCancel:
		return true
	}
	return false
}

// Busy reports whether a NAR transfer (a pull or an upload) is in flight: a cache session
// is idle-closed only when it is not.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running > 0 || len(s.pending) > 0 || len(s.uploads) > 0
}

// Close stops the session: queued and running NAR streams and queries end, running commits
// finish (their bytes are good), and the open uploads give their admission back while their
// partials stay on disk for a resume. Close waits for the session's goroutines.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.pending = nil
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	open := s.uploads
	s.uploads = nil
	s.mu.Unlock()
	for _, u := range open {
		u.release(false)
	}
}

// spawn runs f on a session goroutine; false once the session is closed.
func (s *Session) spawn(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// send is Config.Send; replies from session goroutines pass the session context.
func (s *Session) send(ctx context.Context, m wire.ServerMessage) error {
	return s.cfg.Send(ctx, m)
}

// logSendErr logs a failed reply from a session goroutine, unless the session is closing.
func (s *Session) logSendErr(what string, err error) {
	if err != nil && s.ctx.Err() == nil {
		s.cfg.Logger.Warn("cache reply not sent", "reply", what, "err", err)
	}
}
