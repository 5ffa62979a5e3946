package loghub

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
)

// Defaults of Limits.
const (
	DefaultPerBuild = 32
	DefaultTotal    = 256
	DefaultBuffer   = 256 << 10
)

// ErrBusy refuses a follower past a cap; ErrClosed, one of a hub that has stopped.
var (
	ErrBusy   = errors.New("loghub: too many log followers")
	ErrClosed = errors.New("loghub: closed")
)

// Limits bound the followers and what they hold; zero fields take the defaults.
type Limits struct {
	PerBuild int // followers of one build
	Total    int // followers of all builds
	Buffer   int // bytes queued for one follower before it lags
}

// Chunk is a piece of one attempt's log, numbered as the store numbers it. Data is shared by
// every follower and never modified.
type Chunk struct {
	Attempt string
	Offset  int64
	Data    []byte
}

// End is the offset just past the chunk.
func (c Chunk) End() int64 { return c.Offset + int64(len(c.Data)) }

// Batch is what a follower takes at once.
type Batch struct {
	Chunks []Chunk
	// Lagged: chunks were dropped since the last Take; read the store from your offset.
	Lagged bool
	// Changed: the build's state changed (an attempt started or ended, a status moved).
	Changed bool
	// Closed: the hub stopped; end the stream.
	Closed bool
}

// Counters count the hub's decisions.
type Counters struct {
	Follows atomic.Uint64 // subscriptions taken
	Refused atomic.Uint64 // subscriptions refused at a cap
	Lagged  atomic.Uint64 // followers that fell behind and lost their queue
}

// Metrics lists the counters under their exposition names.
func (c *Counters) Metrics() []counter.Metric {
	return []counter.Metric{
		{Name: "gradient_log_follows_total", Help: "Build log streams started (GET …/log?follow=1).", Value: &c.Follows},
		{Name: "gradient_log_follows_refused_total", Help: "Build log streams refused 503: too many followers of the build or in all.", Value: &c.Refused},
		{Name: "gradient_log_followers_lagged_total", Help: "Times a build log follower fell a buffer behind and read the rest from the store.", Value: &c.Lagged},
	}
}

// Hub fans published chunks out to the followers of each build.
type Hub struct {
	mu       sync.Mutex
	limits   Limits
	builds   map[string]map[*Subscription]struct{}
	total    int
	closed   bool
	counters Counters
}

// New returns a hub with the given limits.
func New(l Limits) *Hub {
	if l.PerBuild <= 0 {
		l.PerBuild = DefaultPerBuild
	}
	if l.Total <= 0 {
		l.Total = DefaultTotal
	}
	if l.Buffer <= 0 {
		l.Buffer = DefaultBuffer
	}
	return &Hub{limits: l, builds: map[string]map[*Subscription]struct{}{}}
}

// Subscription is one follower of one build. Wait on Wake, then Take.
type Subscription struct {
	hub   *Hub
	build string
	wake  chan struct{}
	// guarded by hub.mu
	batch  Batch
	queued int
	gone   bool
}

// Subscribe adds a follower of buildID; ErrBusy past a cap, ErrClosed once the hub closed.
func (h *Hub) Subscribe(buildID string) (*Subscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	subs := h.builds[buildID]
	if h.total >= h.limits.Total || len(subs) >= h.limits.PerBuild {
		h.counters.Refused.Add(1)
		return nil, ErrBusy
	}
	if subs == nil {
		subs = map[*Subscription]struct{}{}
		h.builds[buildID] = subs
	}
	s := &Subscription{hub: h, build: buildID, wake: make(chan struct{}, 1)}
	subs[s] = struct{}{}
	h.total++
	h.counters.Follows.Add(1)
	return s, nil
}

// Publish hands c to every follower of buildID without waiting for any: a follower whose
// queue would pass the buffer loses its queue and lags instead.
func (h *Hub) Publish(buildID string, c Chunk) {
	if len(c.Data) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.builds[buildID] {
		if s.batch.Lagged {
			continue // it reads the store anyway
		}
		if s.queued+len(c.Data) > h.limits.Buffer {
			s.batch.Chunks, s.queued, s.batch.Lagged = nil, 0, true
			h.counters.Lagged.Add(1)
		} else {
			s.batch.Chunks = append(s.batch.Chunks, c)
			s.queued += len(c.Data)
		}
		s.signal()
	}
}

// Changed tells the followers of buildID that its state changed.
func (h *Hub) Changed(buildID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.builds[buildID] {
		s.batch.Changed = true
		s.signal()
	}
}

// Close ends every subscription (each takes a Closed batch) and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, subs := range h.builds {
		for s := range subs {
			s.batch.Closed = true
			s.signal()
		}
	}
}

// Followers is how many subscriptions are open.
func (h *Hub) Followers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// Counters are the hub's counters.
func (h *Hub) Counters() *Counters { return &h.counters }

// signal wakes the follower; a pending wake already covers this one. Call with hub.mu held.
func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Wake is ready when Take has something.
func (s *Subscription) Wake() <-chan struct{} { return s.wake }

// Take returns what arrived since the last Take and empties the queue.
func (s *Subscription) Take() Batch {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	b := s.batch
	s.batch = Batch{Closed: b.Closed}
	s.queued = 0
	return b
}

// Close removes the follower; calling it again does nothing.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.gone {
		return
	}
	s.gone = true
	subs := h.builds[s.build]
	delete(subs, s)
	if len(subs) == 0 {
		delete(h.builds, s.build)
	}
	h.total--
	s.batch = Batch{}
}
