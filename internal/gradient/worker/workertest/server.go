// Package workertest is a small fake gradient server for worker tests. It speaks the real
// protocol over a real WebSocket: version agreement and the authority handshake through
// handshake.Run with session.NewAuthority (registrations in a sessiontest.Directory), then a
// scripted job loop:
//
//   - RequestJobList is answered with one empty final JobListChunk; RequestJob assigns the
//     oldest job of that kind queued with Enqueue (pull-only, as the real server), and a
//     declined queued job goes back to the queue. Assign pushes an AssignJob directly.
//   - CacheQuery is answered from the in-memory Cache (Normal: cached paths only; Pull:
//     every path, cached ones with sizes, hashes, full references, deriver and ca; Push:
//     every path with its cached flag), or with CacheError while FailCacheQueries lasts.
//     An external query of a path the Cache lacks is answered with what SetUpstream set for
//     it (gradient-server §14).
//     QueryKnownDerivations is answered with the paths marked with Known.
//   - Uploads: UploadRequest gets UploadGrant Skip when the path is cached, else
//     Passthrough{0}; UploadChunks must arrive in order. UploadFinished (control lane) may
//     overtake the last UploadChunks (bulk lane), so the upload is checked once both the
//     metadata and the is_final chunk are in: length and SHA-256 of the compressed bytes,
//     then the zstd stream's NAR size and SHA-256, references in hash-name form. Then the
//     NAR is stored and UploadCommitted Ok sent, else Rejected (and a violation recorded).
//   - NarRequest streams each cached path as NarStreamHeader{len-<size>} and 512 KiB
//     NarPush chunks, or NarUnavailable; NarRequestResume resumes from the received offset.
//   - Every message is recorded; JobUpdate, JobCompleted and JobFailed whose (job_id,
//     assignment_id) this session did not hand out are recorded as violations, as are
//     LogChunks of unknown jobs.
//
// Session control: Abort sends AbortJob, Drain sends Draining and closes, Drop drops the TCP
// connection at once.
package workertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/session/sessiontest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wsconn"
)

// Server is the fake server. Its methods are safe for concurrent use.
type Server struct {
	URL   string // ws://127.0.0.1:port/proto
	Cache *Cache

	http     *httptest.Server
	sessions chan *Session

	mu          sync.Mutex
	dir         *sessiontest.Directory
	queue       []queuedJob
	failQueries int
	known       map[string]bool
	upstream    map[string]wire.CachedPath
	ended       []error // handshakes that did not reach Running
}

type queuedJob struct {
	id  string
	job wire.Job
}

// NewServer starts a fake server on loopback; it stops with the test.
func NewServer(t testing.TB) *Server {
	s := &Server{Cache: NewCache(), sessions: make(chan *Session, 16), dir: sessiontest.NewDirectory(), known: map[string]bool{}}
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = "ws" + strings.TrimPrefix(s.http.URL, "http") + "/proto"
	t.Cleanup(s.http.Close)
	return s
}

// Register registers workerID with a project peer (with a cache, every capability enabled)
// whose token is token.
func (s *Server) Register(workerID, peerID, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dir.Register(workerID, sessiontest.Project(peerID), token)
}

// Enqueue queues a job, assigned to the next RequestJob of its kind.
func (s *Server) Enqueue(jobID string, job wire.Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queuedJob{jobID, job})
}

// FailCacheQueries answers the next n CacheQueries with CacheError.
func (s *Server) FailCacheQueries(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failQueries = n
}

// SetUpstream makes external queries of c.Path answer c while the Cache lacks the path.
func (s *Server) SetUpstream(c wire.CachedPath) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upstream == nil {
		s.upstream = map[string]wire.CachedPath{}
	}
	s.upstream[c.Path] = c
}

func (s *Server) upstreamOf(p string) (wire.CachedPath, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.upstream[p]
	return c, ok
}

// Known marks .drv paths as held with complete closures (QueryKnownDerivations).
func (s *Server) Known(drvs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range drvs {
		s.known[d] = true
	}
}

// NextSession waits for the next session that reached Running.
func (s *Server) NextSession(ctx context.Context) (*Session, error) {
	select {
	case ss := <-s.sessions:
		return ss, nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, fmt.Errorf("no session (failed handshakes: %v): %w", s.ended, ctx.Err())
	}
}

func (s *Server) answer(_ context.Context, n session.Need) (session.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir.Answer(n), nil
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/proto" {
		http.NotFound(w, r)
		return
	}
	c, err := wsconn.AcceptWorker(w, r, wsconn.Options{})
	if err != nil {
		return
	}
	role, out := session.NewAuthority(session.AuthorityConfig{AcceptInbound: true})
	role, res, err := handshake.Run(r.Context(), c, role, out, s.answer)
	if err != nil {
		s.mu.Lock()
		s.ended = append(s.ended, err)
		s.mu.Unlock()
		return
	}
	ss := newSession(s, c, res)
	s.sessions <- ss
	ss.loop(role)
	s.mu.Lock()
	s.dir.Release(res.WorkerID)
	s.mu.Unlock()
}

// takeJob pops the oldest queued job of kind.
func (s *Server) takeJob(kind wire.JobKind) (queuedJob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if k, _ := kindOf(q.job); k == kind {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return q, true
		}
	}
	return queuedJob{}, false
}

func (s *Server) requeue(q queuedJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append([]queuedJob{q}, s.queue...)
}

func (s *Server) takeQueryFailure() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failQueries > 0 {
		s.failQueries--
		return true
	}
	return false
}

func (s *Server) isKnown(drv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.known[drv]
}

func kindOf(j wire.Job) (wire.JobKind, bool) {
	switch j.(type) {
	case *wire.FlakeJob:
		return wire.JobKindFlake, true
	case *wire.BuildJob:
		return wire.JobKindBuild, true
	}
	return 0, false
}

func newAssignmentID() string { return uuid.Must(uuid.NewV7()).String() }

// errSessionOver is returned by waits on a session that ended.
var errSessionOver = errors.New("workertest: session ended")
